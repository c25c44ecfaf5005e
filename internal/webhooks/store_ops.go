package webhooks

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/contactbook/contactbook/internal/apperr"
	"github.com/contactbook/contactbook/internal/postgres"
)

// The SQL of the operations on one webhook's deliveries: automatic
// switch-off, admins' sends (test, retry, recovery).

// failingSince returns, of the active webhooks ids, those whose attempts
// have all failed since a time at or before cutoff, with that time: the
// latest of their last success and the time they were created or last
// switched on (enabled_at), so a webhook switched on again is judged on
// its attempts since then. The last success is found through the partial
// index on successful attempts, however long the log.
func (store) failingSince(ctx context.Context, db postgres.DB, ids []uuid.UUID, cutoff time.Time) (map[uuid.UUID]time.Time, error) {
	rows, err := db.Query(ctx, `
		SELECT w.id, f.at
		FROM webhooks w
		CROSS JOIN LATERAL (
			SELECT max(a.created_at) AS at FROM webhook_attempts a WHERE a.webhook_id = w.id AND a.success) ok
		CROSS JOIN LATERAL (SELECT greatest(ok.at, w.enabled_at) AS at) f
		WHERE w.id = ANY ($1) AND w.active AND f.at <= $2`, ids, cutoff)
	if err != nil {
		return nil, err
	}
	out := map[uuid.UUID]time.Time{}
	var (
		id uuid.UUID
		at time.Time
	)
	_, err = pgx.ForEachRow(rows, []any{&id, &at}, func() error {
		out[id] = at
		return nil
	})
	return out, err
}

// switchOff marks an active webhook disabled by the service; switched is
// false when it was off already (another instance got there first, or an
// admin).
func (store) switchOff(ctx context.Context, db postgres.DB, id uuid.UUID, now time.Time, reason string) (w Webhook, switched bool, err error) {
	w, err = scanWebhook(db.QueryRow(ctx, `
		UPDATE webhooks SET active = false, disabled_at = $2, disabled_reason = $3, updated_at = now()
		WHERE id = $1 AND active RETURNING `+webhookColumns, id, now, reason))
	if errors.Is(err, pgx.ErrNoRows) {
		return Webhook{}, false, nil
	}
	return w, err == nil, err
}

// holdPending keeps the webhook's pending deliveries without sending
// them. An attempt in flight still logs; its result no longer changes the
// delivery (the completion only touches pending rows).
func (store) holdPending(ctx context.Context, db postgres.DB, webhookID uuid.UUID) error {
	_, err := db.Exec(ctx, `
		UPDATE webhook_deliveries SET status = 'held', lease_owner = NULL, lease_until = NULL, manual = false,
		       slotted = false, updated_at = now()
		WHERE webhook_id = $1 AND status = 'pending'`, webhookID)
	return err
}

var errDeliveryNotFound = apperr.NotFoundf("No delivery with this id for the webhook.")

// queueManual makes the delivery due now for one attempt an admin asked
// for. A delivery whose attempt is under way (a live lease) is left alone.
func (store) queueManual(ctx context.Context, db postgres.DB, webhookID, deliveryID uuid.UUID, now time.Time) error {
	var busy bool
	err := db.QueryRow(ctx, `
		WITH d AS (
			SELECT id, lease_until IS NOT NULL AND lease_until >= $3 AS busy FROM webhook_deliveries
			WHERE id = $2 AND webhook_id = $1 FOR UPDATE
		), u AS (
			UPDATE webhook_deliveries w SET status = 'pending', manual = true, slotted = false, next_attempt_at = $3,
			       lease_owner = NULL, lease_until = NULL, updated_at = now()
			FROM d WHERE w.id = d.id AND NOT d.busy
		)
		SELECT busy FROM d`, webhookID, deliveryID, now).Scan(&busy)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return errDeliveryNotFound
	case err != nil:
		return err
	case busy:
		return apperr.New(apperr.Conflict, "An attempt of this delivery is under way; retry once it has finished.")
	}
	return nil
}

// insertManual queues a new delivery of an event to one webhook for one
// attempt an admin asked for (a test event) and returns its id.
func (store) insertManual(ctx context.Context, db postgres.DB, webhookID, eventID uuid.UUID, now time.Time) (uuid.UUID, error) {
	var id uuid.UUID
	err := db.QueryRow(ctx, `
		INSERT INTO webhook_deliveries (event_id, webhook_id, next_attempt_at, manual)
		VALUES ($1, $2, $3, true) RETURNING id`, eventID, webhookID, now).Scan(&id)
	return id, err
}

// recoverable is the condition of a delivery a recovery sends again: its
// event happened in [since, until] and its latest attempt failed. It
// failed for good, or was canceled after a failed attempt, or waits: for
// its automatic retry (pending) or for the webhook to be switched on
// again (held). A waiting one already queued for an admin's send (manual)
// goes out once anyway and is left as it is; so is one an engine holds
// (a live lease): its attempt is under way or about to be, and queueing
// it again would send it twice, or at once on two instances.
const recoverable = `
	d.webhook_id = @webhook AND d.attempts > 0
	AND (d.status IN ('failed', 'canceled')
	     OR d.status IN ('pending', 'held') AND NOT d.manual AND (d.lease_until IS NULL OR d.lease_until < @now))
	AND e.occurred_at >= @since AND e.occurred_at <= @until`

// countRecoverable counts what a recovery would send.
func (store) countRecoverable(ctx context.Context, db postgres.DB, webhookID uuid.UUID, since, until, now time.Time) (int, error) {
	var n int
	err := db.QueryRow(ctx, `
		SELECT count(*) FROM webhook_deliveries d JOIN event_records e ON e.id = d.event_id WHERE `+recoverable,
		pgx.StrictNamedArgs{"webhook": webhookID, "since": since, "until": until, "now": now}).Scan(&n)
	return n, err
}

// webhookActiveShared reads whether the webhook is switched on, holding
// its row until the transaction ends so that it cannot be switched on or
// off meanwhile; found is false when it was deleted.
func (store) webhookActiveShared(ctx context.Context, db postgres.DB, id uuid.UUID) (active, found bool, err error) {
	err = db.QueryRow(ctx, `SELECT active FROM webhooks WHERE id = $1 FOR SHARE`, id).Scan(&active)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, false, nil
	}
	return active, err == nil, err
}

// recoverBatch queues up to limit recoverable deliveries not yet queued
// by this recovery, oldest event first, for one attempt each, with status
// (pending, or held while the webhook is switched off). Their due times
// follow the order of their events from base + offset microseconds, so
// the engine sends them oldest first and after any earlier batch. It
// returns how many it queued; zero means the recovery is done.
//
// A delivery waiting for its automatic retry is queued in its place: the
// row is the same, so the retry is not made as well. Rows are locked
// (FOR UPDATE) rather than skipped: a claim that holds one commits at
// once, and the row is then checked again, found leased and left out.
func (store) recoverBatch(ctx context.Context, db postgres.DB, r RecoveryArgs, status string, base, now time.Time, offset, limit int) (int, error) {
	tag, err := db.Exec(ctx, `
		UPDATE webhook_deliveries d
		SET status = @status, manual = true, slotted = false, recovery_id = @recovery, updated_at = now(),
		    lease_owner = NULL, lease_until = NULL,
		    next_attempt_at = @base::timestamptz + (@offset + p.n) * interval '1 microsecond'
		FROM (
			SELECT id, row_number() OVER (ORDER BY occurred_at, event_id) AS n FROM (
				SELECT d.id, e.occurred_at, e.id AS event_id
				FROM webhook_deliveries d JOIN event_records e ON e.id = d.event_id
				WHERE `+recoverable+` AND d.recovery_id IS DISTINCT FROM @recovery
				ORDER BY e.occurred_at, e.id
				LIMIT @limit
				FOR UPDATE OF d) q
		) p
		WHERE d.id = p.id`,
		pgx.StrictNamedArgs{"webhook": r.WebhookID, "since": r.Since, "until": r.Until, "recovery": r.RecoveryID,
			"status": status, "base": base, "now": now, "offset": offset, "limit": limit})
	return int(tag.RowsAffected()), err
}
