// Package jobs runs the service's durable background work on River: every
// job is a row in PostgreSQL, enqueued in the transaction that asks for
// it, unique where it must be, retried with backoff, cancellable, visible
// (state, attempts, errors in river_job) and worked by whichever instance
// fetches it first; periodic jobs are enqueued by the elected leader only.
// The domain packages own their job arguments and workers and hand them
// over as a Source; this package only builds and runs the client.
package jobs

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertype"
)

// Client enqueues and inspects jobs.
type Client = river.Client[pgx.Tx]

// Source is one package's share of the background work, handed to the
// queue the same way by every package (Queue.Add): Jobs registers the
// package's workers on w and returns the periodic jobs the elected leader
// enqueues (nil when it has none).
type Source interface {
	Jobs(w *river.Workers) ([]*river.PeriodicJob, error)
}

// Config is how the queue runs.
type Config struct {
	// MaxWorkers bounds the jobs this instance works at once (default 10).
	MaxWorkers int
	// StopGrace bounds how long Run waits at shutdown for the cancelled
	// jobs to settle what they hold (default 20 s).
	StopGrace time.Duration
	// RescueAfter is how long a job may stay running before it is taken
	// for one whose instance died and is made available again (default 1
	// min). An attempt's context ends after JobTimeout (default 45 s),
	// which must be shorter: River rescues only jobs whose timeout has
	// passed, so a job without one would stay "running" for ever after
	// its instance died. A campaign run works in turns of at most 10 s
	// plus the chunks in flight, far below either. A worker may set a
	// longer timeout of its own; its jobs are rescued once that passed.
	RescueAfter time.Duration
	JobTimeout  time.Duration
	// PollInterval is how often an idle instance looks for jobs that no
	// notification announced, such as retries come due (default 1 s).
	PollInterval time.Duration
	// WithoutPeriodic leaves the sources' periodic jobs out: their workers
	// still work what is queued. Tests run that work when they mean to.
	WithoutPeriodic bool
	// PollOnly finds new jobs by polling instead of LISTEN/NOTIFY, for
	// connections through a transaction pooler, where a LISTEN would be
	// lost with the server connection it was issued on. A queued job then
	// waits up to PollInterval.
	PollOnly bool
	Log      *slog.Logger
}

// Queue is this instance's River client and its lifetime.
type Queue struct {
	client          *Client
	workers         *river.Workers
	withoutPeriodic bool
	grace           time.Duration
	log             *slog.Logger
}

// New builds the client on pool, with no workers yet: the services that
// enqueue take the client (Client) when they are built, and their workers,
// which need those services, are added afterwards (Add), before Run.
func New(pool *pgxpool.Pool, cfg Config) (*Queue, error) {
	if cfg.MaxWorkers <= 0 {
		cfg.MaxWorkers = 10
	}
	if cfg.StopGrace <= 0 {
		cfg.StopGrace = 20 * time.Second
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.RescueAfter <= 0 {
		cfg.RescueAfter = time.Minute
	}
	if cfg.JobTimeout <= 0 {
		cfg.JobTimeout = cfg.RescueAfter * 3 / 4
	}
	if cfg.JobTimeout >= cfg.RescueAfter {
		return nil, fmt.Errorf("jobs: the job timeout (%s) must be shorter than the rescue delay (%s)", cfg.JobTimeout, cfg.RescueAfter)
	}
	// River reads the workers bundle when it starts and when a job is
	// inserted (it refuses a kind nobody works), not when it is built.
	workers := river.NewWorkers()
	client, err := river.NewClient(riverpgxv5.New(pool), &river.Config{
		Queues:            map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: cfg.MaxWorkers}},
		Workers:           workers,
		FetchPollInterval: cfg.PollInterval,
		PollOnly:          cfg.PollOnly,
		// The process id in the client id tells an operator (and the
		// crash tests) which instance holds a job (river_job.attempted_by).
		ID:                   clientID(),
		JobTimeout:           cfg.JobTimeout,
		RescueStuckJobsAfter: cfg.RescueAfter,
		Logger:               cfg.Log,
	})
	if err != nil {
		return nil, err
	}
	return &Queue{client: client, workers: workers, withoutPeriodic: cfg.WithoutPeriodic, grace: cfg.StopGrace, log: cfg.Log}, nil
}

// Add registers the workers and periodic jobs of each source. It is called
// once every source is built and before Run.
func (q *Queue) Add(sources ...Source) error {
	for _, src := range sources {
		periodic, err := src.Jobs(q.workers)
		if err != nil {
			return fmt.Errorf("jobs: register %T: %w", src, err)
		}
		if !q.withoutPeriodic {
			if _, err := q.client.PeriodicJobs().AddManySafely(periodic); err != nil {
				return fmt.Errorf("jobs: periodic jobs of %T: %w", src, err)
			}
		}
	}
	return nil
}

// clientID is River's default client id (host and start time) with the
// process id.
func clientID() string {
	host, _ := os.Hostname()
	host = strings.NewReplacer(".", "_", "-", "_", ":", "_").Replace(host)
	if len(host) > 40 {
		host = host[:40]
	}
	return fmt.Sprintf("%s_pid%d_%s", host, os.Getpid(), time.Now().UTC().Format("20060102T150405_000000"))
}

// Client is the River client, for enqueueing.
func (q *Queue) Client() *Client { return q.client }

// Run works jobs until ctx ends, then stops fetching and cancels the jobs
// in flight: their work contexts end, a campaign pass claims nothing new
// and records the chunks it holds, and River retries the job (here after
// a restart, or on another instance). Run returns once they have settled
// or StopGrace has passed.
func (q *Queue) Run(ctx context.Context) error {
	if err := q.client.Start(context.WithoutCancel(ctx)); err != nil {
		return err
	}
	<-ctx.Done()
	stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), q.grace)
	defer cancel()
	return q.client.StopAndCancel(stopCtx)
}

// QueuedStates are the job states in which a job counts as queued or
// running: a unique job asked for again in one of them is not inserted
// twice. Once it has completed, been cancelled or discarded, a new one may
// be queued.
var QueuedStates = []rivertype.JobState{
	rivertype.JobStateAvailable, rivertype.JobStatePending, rivertype.JobStateRetryable,
	rivertype.JobStateRunning, rivertype.JobStateScheduled,
}
