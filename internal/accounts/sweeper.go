package accounts

import (
	"context"
	"time"

	"github.com/riverqueue/river"

	"github.com/contactbook/contactbook/internal/jobs"
	"github.com/contactbook/contactbook/internal/postgres"
)

// SweepArgs is the job of one sweep. A sweep due while the previous one
// is queued or running is skipped; one that fails is not retried, the next
// one does its work.
type SweepArgs struct{}

// Kind names the job in river_job.
func (SweepArgs) Kind() string { return "accounts_sweep" }

// InsertOpts makes a sweep unique while queued or running.
func (SweepArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{MaxAttempts: 1, UniqueOpts: river.UniqueOpts{ByState: jobs.QueuedStates}}
}

// Sweeper deletes expired sessions, invitations, reset tokens and throttle
// windows, as a periodic job every sweepEvery (and when the leader
// starts). Expired rows already stop working; sweeping only keeps the
// tables small.
type Sweeper struct {
	river.WorkerDefaults[SweepArgs]
	db  postgres.DB
	now func() time.Time
}

const sweepEvery = 10 * time.Minute

// NewSweeper returns a sweeper over db.
func NewSweeper(db postgres.DB, now func() time.Time) *Sweeper {
	if now == nil {
		now = time.Now
	}
	return &Sweeper{db: db, now: now}
}

// Jobs registers the sweep worker and its periodic job.
func (w *Sweeper) Jobs(rw *river.Workers) ([]*river.PeriodicJob, error) {
	if err := river.AddWorkerSafely[SweepArgs](rw, w); err != nil {
		return nil, err
	}
	return []*river.PeriodicJob{river.NewPeriodicJob(river.PeriodicInterval(sweepEvery),
		func() (river.JobArgs, *river.InsertOpts) { return SweepArgs{}, nil },
		&river.PeriodicJobOpts{ID: "accounts_sweep", RunOnStart: true})}, nil
}

// Work sweeps once.
func (w *Sweeper) Work(ctx context.Context, _ *river.Job[SweepArgs]) error {
	return (store{}).sweep(ctx, w.db, w.now())
}
