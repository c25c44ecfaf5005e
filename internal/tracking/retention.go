package tracking

import (
	"context"
	"encoding/binary"
	"log/slog"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"

	"github.com/contactbook/contactbook/internal/jobs"
	"github.com/contactbook/contactbook/internal/postgres"
)

// PruneArgs is the job of one prune of old events.
type PruneArgs struct{}

// Kind names the job in river_job.
func (PruneArgs) Kind() string { return "tracking_prune" }

// InsertOpts skips a prune while the previous one is queued or running; a
// failed prune is not retried, the next one does its work.
func (PruneArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{MaxAttempts: 1, UniqueOpts: river.UniqueOpts{ByState: jobs.QueuedStates}}
}

const pruneBatch = 10000

// Retention deletes events received more than keep ago, every hour
// (EVENT_RETENTION; 0 keeps everything).
type Retention struct {
	db   postgres.DB
	keep time.Duration
	now  func() time.Time
	log  *slog.Logger
}

// NewRetention returns the prune over db.
func NewRetention(db postgres.DB, keep time.Duration, now func() time.Time, log *slog.Logger) *Retention {
	if now == nil {
		now = time.Now
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Retention{db: db, keep: keep, now: now, log: log}
}

// Jobs registers the prune and its hourly periodic job (none when
// everything is kept).
func (r *Retention) Jobs(w *river.Workers) ([]*river.PeriodicJob, error) {
	if err := river.AddWorkerSafely(w, &retentionWorker{r: r}); err != nil {
		return nil, err
	}
	if r.keep <= 0 {
		return nil, nil
	}
	return []*river.PeriodicJob{river.NewPeriodicJob(river.PeriodicInterval(time.Hour),
		func() (river.JobArgs, *river.InsertOpts) { return PruneArgs{}, nil },
		&river.PeriodicJobOpts{ID: "tracking_prune", RunOnStart: true})}, nil
}

// idAt is the smallest UUIDv7 of the millisecond t: every event received
// before t has a smaller id, so the prune walks the primary key.
func idAt(t time.Time) uuid.UUID {
	var id uuid.UUID
	ms := uint64(t.UnixMilli())
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], ms<<16)
	copy(id[:6], b[:6])
	id[6] = 0x70
	id[8] = 0x80
	return id
}

// newID is a UUIDv7 of the service's clock (so the prune, on the same
// clock, reads an event's age from its id) with random low bits.
func newID(t time.Time) uuid.UUID {
	id := uuid.New()
	start := idAt(t)
	copy(id[:6], start[:6])
	id[6] = 0x70 | id[6]&0x0f
	return id
}

// Prune deletes the events received before the retention window and
// says how many.
func (r *Retention) Prune(ctx context.Context) (int64, error) {
	if r.keep <= 0 {
		return 0, nil
	}
	return postgres.DeleteInBatches(ctx, r.db, pruneBatch, `
		DELETE FROM tracked_events WHERE id IN (
			SELECT id FROM tracked_events WHERE id < $1 ORDER BY id LIMIT $2)`, idAt(r.now().Add(-r.keep)))
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
		w.r.log.Info("tracking: pruned old events", "events", n)
	}
	return nil
}
