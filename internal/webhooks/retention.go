package webhooks

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/google/uuid"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"github.com/contactbook/contactbook/internal/events"
	"github.com/contactbook/contactbook/internal/jobs"
	"github.com/contactbook/contactbook/internal/postgres"
)

// Retention deletes webhook history older than Keep: events (and, by their
// foreign key, their finished deliveries) and the delivery log's attempts.
// An event still queued for fan-out or with a delivery still pending (or
// held for a webhook switched off automatically) is kept whatever its age.
// Without it the outbox grows by about 10 MB with every bulk change of
// 10,000 contacts, for ever.
//
// It runs as an hourly periodic job (Jobs), in batches of
// retentionBatch rows per statement so no transaction holds locks for long.
// With several instances, one prunes at a time (a session advisory lock);
// the others skip that round.
type Retention struct {
	pool  *pgxpool.Pool
	keep  time.Duration
	every time.Duration
	now   func() time.Time
	log   *slog.Logger
}

// retentionBatch is how many rows one delete statement takes.
const retentionBatch = 5000

// retentionLock is the advisory lock (7302, 1) an instance holds while it
// prunes.
const retentionLockClass, retentionLockID = 7302, 1

// NewRetention returns the pruner; keep <= 0 keeps everything (it then
// has no periodic job).
func NewRetention(pool *pgxpool.Pool, keep time.Duration, now func() time.Time, log *slog.Logger) *Retention {
	if now == nil {
		now = time.Now
	}
	if log == nil {
		log = slog.Default()
	}
	return &Retention{pool: pool, keep: keep, every: time.Hour, now: now, log: log}
}

// PruneArgs is the job of one prune.
type PruneArgs struct{}

// Kind names the job in river_job.
func (PruneArgs) Kind() string { return "webhook_prune" }

// KindAliases is the name the job had before every pruning job was called
// a prune, so a job queued under it by an older instance is still worked.
func (PruneArgs) KindAliases() []string { return []string{"webhook_retention"} }

// InsertOpts skips a prune while the previous one is still queued or
// running; a failed prune is not retried, the next hour's does its work.
func (PruneArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{MaxAttempts: 1, UniqueOpts: river.UniqueOpts{ByState: jobs.QueuedStates}}
}

// Jobs registers the prune's worker and returns its hourly periodic job,
// none when everything is kept (a jobs.Source).
func (r *Retention) Jobs(w *river.Workers) ([]*river.PeriodicJob, error) {
	if r.keep <= 0 {
		return nil, nil
	}
	if err := river.AddWorkerSafely(w, &pruneWorker{r: r}); err != nil {
		return nil, err
	}
	return []*river.PeriodicJob{river.NewPeriodicJob(river.PeriodicInterval(r.every),
		func() (river.JobArgs, *river.InsertOpts) { return PruneArgs{}, nil },
		&river.PeriodicJobOpts{ID: "webhook_prune"})}, nil
}

type pruneWorker struct {
	river.WorkerDefaults[PruneArgs]
	r *Retention
}

// Timeout allows a long first prune of a large backlog; a run whose
// instance died is discarded after it and the next period's run goes on.
func (w *pruneWorker) Timeout(*river.Job[PruneArgs]) time.Duration { return 10 * time.Minute }

func (w *pruneWorker) Work(ctx context.Context, _ *river.Job[PruneArgs]) error {
	res, err := w.r.Prune(ctx)
	if err != nil {
		return err
	}
	if res.Events+res.Attempts > 0 {
		w.r.log.Info("webhooks: pruned old history", "events", res.Events, "attempts", res.Attempts, "older_than", w.r.keep.String())
	}
	return nil
}

// Pruned counts what one Prune deleted.
type Pruned struct {
	Events   int64 // with their finished deliveries
	Attempts int64
	Skipped  bool // another instance was pruning
}

// Prune deletes what is older than keep now.
func (r *Retention) Prune(ctx context.Context) (Pruned, error) {
	conn, err := r.pool.Acquire(ctx)
	if err != nil {
		return Pruned{}, err
	}
	defer conn.Release()
	// The lock is the session's: every statement runs on this connection.
	db := postgres.Wrap(conn)
	var locked bool
	if err := db.QueryRow(ctx, `SELECT pg_try_advisory_lock($1, $2)`, retentionLockClass, retentionLockID).Scan(&locked); err != nil {
		return Pruned{}, err
	}
	if !locked {
		return Pruned{Skipped: true}, nil
	}
	defer func() {
		_, _ = conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1, $2)`, retentionLockClass, retentionLockID)
	}()

	cutoff := r.now().Add(-r.keep)
	var out Pruned
	if out.Events, err = pruneEvents(ctx, db, cutoff); err != nil {
		return out, err
	}
	out.Attempts, err = pruneAttempts(ctx, db, cutoff)
	return out, err
}

// pruneEvents walks the outbox in id order. Event ids are UUIDv7, so the
// ids before the cutoff's are a range of the primary key; occurred_at
// decides. The cursor moves past kept events so they are not read again.
// (Events written before ids were UUIDv7, in development databases only,
// have random ids; those above the cutoff's id are not reached.) Measured:
// 437,000 events in 3.3 s.
func pruneEvents(ctx context.Context, db postgres.DB, cutoff time.Time) (int64, error) {
	bound, err := uuidV7Floor(cutoff)
	if err != nil {
		return 0, err
	}
	var total int64
	cursor := uuid.Nil
	for {
		var (
			last    *uuid.UUID
			deleted int64
		)
		err := db.QueryRow(ctx, `
			WITH batch AS (
				SELECT id FROM event_records WHERE id > $1 AND id < $2 ORDER BY id LIMIT $4
			), gone AS (
				`+events.PruneSQL("batch", "$3", `EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = e.id AND d.status IN ('pending', 'held'))`)+`
			)
			SELECT (SELECT id FROM batch ORDER BY id DESC LIMIT 1), (SELECT count(*) FROM gone)`,
			cursor, bound, cutoff, retentionBatch).Scan(&last, &deleted)
		if err != nil {
			return total, fmt.Errorf("prune events: %w", err)
		}
		total += deleted
		if last == nil {
			return total, nil
		}
		cursor = *last
	}
}

// pruneAttempts deletes old log rows, up to retentionBatch per webhook a
// statement, each webhook's through the log's index (webhook, created_at).
func pruneAttempts(ctx context.Context, db postgres.DB, cutoff time.Time) (int64, error) {
	var total int64
	for {
		tag, err := db.Exec(ctx, `
			DELETE FROM webhook_attempts WHERE id IN (
				SELECT a.id FROM webhooks w CROSS JOIN LATERAL (
					SELECT id FROM webhook_attempts WHERE webhook_id = w.id AND created_at < $1 LIMIT $2) a)`,
			cutoff, retentionBatch)
		if err != nil {
			return total, fmt.Errorf("prune attempts: %w", err)
		}
		total += tag.RowsAffected()
		if tag.RowsAffected() == 0 {
			return total, nil
		}
	}
}

// uuidV7Floor is the smallest UUIDv7 of the millisecond t falls in.
func uuidV7Floor(t time.Time) (uuid.UUID, error) {
	ms := t.UnixMilli()
	if ms < 0 {
		return uuid.Nil, fmt.Errorf("cutoff %s before 1970", t)
	}
	var id uuid.UUID
	for i := 0; i < 6; i++ {
		id[i] = byte(ms >> (8 * (5 - i)))
	}
	id[6] = 0x70 // version 7
	id[8] = 0x80 // RFC 4122 variant
	return id, nil
}
