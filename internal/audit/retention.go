package audit

import (
	"context"
	"log/slog"
	"time"

	"github.com/riverqueue/river"

	"github.com/contactbook/contactbook/internal/jobs"
	"github.com/contactbook/contactbook/internal/postgres"
)

// Kept is how long entries are kept: more than a year, so that a yearly
// review always finds the whole year.
const Kept = 400 * 24 * time.Hour

// Retention deletes entries older than Kept, once a day, as a periodic
// job. It is the only deletion of entries there is.
type Retention struct {
	db  postgres.DB
	log *slog.Logger
}

// NewRetention returns the retention job over db.
func NewRetention(db postgres.DB, log *slog.Logger) *Retention {
	if log == nil {
		log = slog.Default()
	}
	return &Retention{db: db, log: log}
}

// PruneArgs is the job of one prune.
type PruneArgs struct{}

// Kind names the job in river_job.
func (PruneArgs) Kind() string { return "audit_log_prune" }

// KindAliases is the name the job had before every pruning job was called
// a prune, so a job queued under it by an older instance is still worked.
func (PruneArgs) KindAliases() []string { return []string{"audit_log_retention"} }

// InsertOpts skips a prune while the previous one is still queued or
// running; a failed prune is not retried, the next day's does its work.
func (PruneArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{MaxAttempts: 1, UniqueOpts: river.UniqueOpts{ByState: jobs.QueuedStates}}
}

// Jobs registers the prune's worker and returns its daily periodic job
// (a jobs.Source).
func (r *Retention) Jobs(w *river.Workers) ([]*river.PeriodicJob, error) {
	if err := river.AddWorkerSafely(w, &pruneWorker{r: r}); err != nil {
		return nil, err
	}
	return []*river.PeriodicJob{river.NewPeriodicJob(river.PeriodicInterval(24*time.Hour),
		func() (river.JobArgs, *river.InsertOpts) { return PruneArgs{}, nil },
		&river.PeriodicJobOpts{ID: "audit_log_prune", RunOnStart: true})}, nil
}

// Prune deletes the entries older than Kept and says how many. Entries
// are stamped by the database's clock (Record), so their age is too.
func (r *Retention) Prune(ctx context.Context) (int64, error) {
	tag, err := r.db.Exec(ctx, `DELETE FROM audit_log WHERE at < now() - make_interval(secs => $1)`, Kept.Seconds())
	if err != nil {
		return 0, err
	}
	return tag.RowsAffected(), nil
}

type pruneWorker struct {
	river.WorkerDefaults[PruneArgs]
	r *Retention
}

// Timeout allows a long first prune of a large backlog.
func (w *pruneWorker) Timeout(*river.Job[PruneArgs]) time.Duration { return 10 * time.Minute }

func (w *pruneWorker) Work(ctx context.Context, _ *river.Job[PruneArgs]) error {
	n, err := w.r.Prune(ctx)
	if err != nil {
		return err
	}
	if n > 0 {
		w.r.log.Info("audit: pruned old entries", "entries", n, "older_than", Kept.String())
	}
	return nil
}
