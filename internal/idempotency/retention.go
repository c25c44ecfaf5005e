package idempotency

import (
	"context"
	"log/slog"
	"time"

	"github.com/riverqueue/river"

	"github.com/contactbook/contactbook/internal/jobs"
	"github.com/contactbook/contactbook/internal/postgres"
)

// PruneArgs is the job of one prune of expired keys.
type PruneArgs struct{}

// Kind names the job in river_job.
func (PruneArgs) Kind() string { return "idempotency_prune" }

// InsertOpts skips a prune while the previous one is queued or running; a
// failed prune is not retried, the next one does its work.
func (PruneArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{MaxAttempts: 1, UniqueOpts: river.UniqueOpts{ByState: jobs.QueuedStates}}
}

// pruneBatch bounds the rows one statement deletes, so a large backlog
// is removed in short transactions.
const pruneBatch = 10000

// Retention deletes keys past Kept every hour. An expired key is never
// replayed (Begin takes it over), so the prune only bounds the table.
type Retention struct {
	s   *Store
	log *slog.Logger
}

// NewRetention returns the prune of the store's keys.
func NewRetention(s *Store, log *slog.Logger) *Retention {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Retention{s: s, log: log}
}

// Jobs registers the prune's worker and its hourly periodic job (a
// jobs.Source).
func (r *Retention) Jobs(w *river.Workers) ([]*river.PeriodicJob, error) {
	if err := river.AddWorkerSafely(w, &retentionWorker{r: r}); err != nil {
		return nil, err
	}
	return []*river.PeriodicJob{river.NewPeriodicJob(river.PeriodicInterval(time.Hour),
		func() (river.JobArgs, *river.InsertOpts) { return PruneArgs{}, nil },
		&river.PeriodicJobOpts{ID: "idempotency_prune", RunOnStart: true})}, nil
}

// Prune deletes the keys created more than Kept ago and says how many.
func (r *Retention) Prune(ctx context.Context) (int64, error) {
	return postgres.DeleteInBatches(ctx, r.s.db, pruneBatch, `
		DELETE FROM idempotency_keys WHERE (api_key_id, key) IN (
			SELECT api_key_id, key FROM idempotency_keys WHERE created_at < $1 ORDER BY created_at LIMIT $2)`,
		r.s.now().Add(-Kept))
}

type retentionWorker struct {
	river.WorkerDefaults[PruneArgs]
	r *Retention
}

// Timeout allows a long first prune of a large backlog.
func (w *retentionWorker) Timeout(*river.Job[PruneArgs]) time.Duration { return 10 * time.Minute }

func (w *retentionWorker) Work(ctx context.Context, _ *river.Job[PruneArgs]) error {
	n, err := w.r.Prune(ctx)
	if err != nil {
		return err
	}
	if n > 0 {
		w.r.log.Info("idempotency: pruned expired keys", "keys", n)
	}
	return nil
}
