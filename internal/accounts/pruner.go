package accounts

import (
	"context"
	"time"

	"github.com/riverqueue/river"

	"github.com/contactbook/contactbook/internal/jobs"
	"github.com/contactbook/contactbook/internal/postgres"
)

// PruneArgs is the job of one prune. A prune due while the previous one
// is queued or running is skipped; one that fails is not retried, the next
// one does its work.
type PruneArgs struct{}

// Kind names the job in river_job.
func (PruneArgs) Kind() string { return "accounts_prune" }

// KindAliases is the name the job had before every pruning job was called
// a prune, so a job queued under it by an older instance is still worked.
func (PruneArgs) KindAliases() []string { return []string{"accounts_sweep"} }

// InsertOpts makes a prune unique while queued or running.
func (PruneArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{MaxAttempts: 1, UniqueOpts: river.UniqueOpts{ByState: jobs.QueuedStates}}
}

// Pruner deletes expired sessions, invitations, reset tokens and throttle
// windows, as a periodic job every pruneEvery (and when the leader
// starts). Expired rows already stop working; pruning only keeps the
// tables small.
type Pruner struct {
	river.WorkerDefaults[PruneArgs]
	db  postgres.DB
	now func() time.Time
}

const pruneEvery = 10 * time.Minute

// NewPruner returns a pruner over db.
func NewPruner(db postgres.DB, now func() time.Time) *Pruner {
	if now == nil {
		now = time.Now
	}
	return &Pruner{db: db, now: now}
}

// Jobs registers the prune worker and its periodic job.
func (w *Pruner) Jobs(rw *river.Workers) ([]*river.PeriodicJob, error) {
	if err := river.AddWorkerSafely[PruneArgs](rw, w); err != nil {
		return nil, err
	}
	return []*river.PeriodicJob{river.NewPeriodicJob(river.PeriodicInterval(pruneEvery),
		func() (river.JobArgs, *river.InsertOpts) { return PruneArgs{}, nil },
		&river.PeriodicJobOpts{ID: "accounts_prune", RunOnStart: true})}, nil
}

// Work prunes once.
func (w *Pruner) Work(ctx context.Context, _ *river.Job[PruneArgs]) error {
	return (store{}).prune(ctx, w.db, w.now())
}
