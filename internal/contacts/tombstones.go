package contacts

import (
	"context"
	"time"

	"github.com/riverqueue/river"

	"github.com/contactbook/contactbook/internal/jobs"
	"github.com/contactbook/contactbook/internal/postgres"
)

// TombstonePruneArgs is the job of one prune of deleted contacts'
// tombstones. One due while the previous is queued or running is
// skipped; a failed one is not retried, the next hour's does its work.
type TombstonePruneArgs struct{}

// Kind names the job in river_job.
func (TombstonePruneArgs) Kind() string { return "contacts_tombstone_prune" }

// InsertOpts makes a prune unique while queued or running.
func (TombstonePruneArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{MaxAttempts: 1, UniqueOpts: river.UniqueOpts{ByState: jobs.QueuedStates}}
}

// TombstonePrune forgets deleted contacts older than keep (the event
// retention, EVENT_RETENTION), hourly. A book then records the newest
// version it forgot: an address book client whose sync token is older
// syncs again from the start (RFC 6578's valid-sync-token).
type TombstonePrune struct {
	river.WorkerDefaults[TombstonePruneArgs]
	db   postgres.DB
	keep time.Duration
	now  func() time.Time
}

// NewTombstonePrune returns the prune; keep <= 0 keeps every tombstone.
func NewTombstonePrune(db postgres.DB, keep time.Duration, now func() time.Time) *TombstonePrune {
	if now == nil {
		now = time.Now
	}
	return &TombstonePrune{db: db, keep: keep, now: now}
}

// Jobs registers the prune's worker and its hourly job (none when every
// tombstone is kept).
func (p *TombstonePrune) Jobs(w *river.Workers) ([]*river.PeriodicJob, error) {
	if p.keep <= 0 {
		return nil, nil
	}
	if err := river.AddWorkerSafely[TombstonePruneArgs](w, p); err != nil {
		return nil, err
	}
	return []*river.PeriodicJob{river.NewPeriodicJob(river.PeriodicInterval(time.Hour),
		func() (river.JobArgs, *river.InsertOpts) { return TombstonePruneArgs{}, nil },
		&river.PeriodicJobOpts{ID: "contacts_tombstone_prune"})}, nil
}

// Timeout allows a long first prune of a large backlog.
func (p *TombstonePrune) Timeout(*river.Job[TombstonePruneArgs]) time.Duration {
	return 10 * time.Minute
}

// Work prunes once.
func (p *TombstonePrune) Work(ctx context.Context, _ *river.Job[TombstonePruneArgs]) error {
	_, err := p.Prune(ctx)
	return err
}

// tombstoneBatch bounds one prune statement.
const tombstoneBatch = 10000

// Prune deletes the tombstones older than keep, in batches, and returns
// how many went.
func (p *TombstonePrune) Prune(ctx context.Context) (int64, error) {
	cutoff := p.now().Add(-p.keep)
	var total int64
	for {
		var n int64
		err := p.db.QueryRow(ctx, `
			WITH old AS (
			    SELECT book_id, sync_seq FROM contact_tombstones WHERE deleted_at < $1 ORDER BY deleted_at LIMIT $2),
			gone AS (
			    DELETE FROM contact_tombstones t USING old
			    WHERE t.book_id = old.book_id AND t.sync_seq = old.sync_seq
			    RETURNING t.book_id, t.sync_seq),
			horizon AS (
			    INSERT INTO contact_sync_horizons (book_id, pruned_through)
			    SELECT book_id, max(sync_seq) FROM gone GROUP BY book_id
			    ON CONFLICT (book_id) DO UPDATE
			        SET pruned_through = GREATEST(contact_sync_horizons.pruned_through, EXCLUDED.pruned_through))
			SELECT count(*) FROM gone`, cutoff, tombstoneBatch).Scan(&n)
		if err != nil {
			return total, err
		}
		total += n
		if n < tombstoneBatch {
			break
		}
	}
	// A deleted book's horizon has nobody left to answer.
	_, err := p.db.Exec(ctx, `
		DELETE FROM contact_sync_horizons h WHERE NOT EXISTS (SELECT 1 FROM book_teams b WHERE b.book_id = h.book_id)`)
	return total, err
}
