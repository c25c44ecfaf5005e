package webhooks

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/contactbook/contactbook/internal/events"
	"github.com/contactbook/contactbook/internal/postgres"
)

// store is the webhooks SQL: subscriptions, the delivery queue and the log.
type store struct{}

const webhookColumns = `id, team_id, url, events, active, rate_limit, disabled_at, disabled_reason, created_by, created_at, updated_at`

func scanWebhook(row pgx.Row) (Webhook, error) {
	var w Webhook
	err := row.Scan(&w.ID, &w.TeamID, &w.URL, &w.Events, &w.Active, &w.RateLimit, &w.DisabledAt, &w.DisabledReason,
		&w.CreatedBy, &w.CreatedAt, &w.UpdatedAt)
	return w, err
}

func oneWebhook(row pgx.Row) (Webhook, error) {
	w, err := scanWebhook(row)
	if errors.Is(err, pgx.ErrNoRows) {
		return Webhook{}, errWebhookNotFound
	}
	return w, err
}

// insertWebhook stores a new subscription; now starts the time its
// failures are counted from (enabled_at), on the service's clock like the
// attempts it is compared with.
func (store) insertWebhook(ctx context.Context, db postgres.DB, w Webhook, secret string, now time.Time) (Webhook, error) {
	return oneWebhook(db.QueryRow(ctx, `
		INSERT INTO webhooks (team_id, url, events, secret, active, rate_limit, created_by, enabled_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING `+webhookColumns,
		w.TeamID, w.URL, w.Events, secret, w.Active, w.RateLimit, w.CreatedBy, now))
}

func (store) webhooks(ctx context.Context, db postgres.DB, teamID uuid.UUID) ([]Webhook, error) {
	rows, err := db.Query(ctx, `SELECT `+webhookColumns+` FROM webhooks WHERE team_id = $1 ORDER BY created_at, id`, teamID)
	if err != nil {
		return nil, err
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Webhook, error) { return scanWebhook(r) })
	return out, err
}

func (store) webhook(ctx context.Context, db postgres.DB, teamID, id uuid.UUID) (Webhook, error) {
	return oneWebhook(db.QueryRow(ctx, `SELECT `+webhookColumns+` FROM webhooks WHERE team_id = $1 AND id = $2`, teamID, id))
}

// webhookForUpdate locks the row so two concurrent patches apply in turn.
func (store) webhookForUpdate(ctx context.Context, db postgres.DB, teamID, id uuid.UUID) (Webhook, error) {
	return oneWebhook(db.QueryRow(ctx, `SELECT `+webhookColumns+` FROM webhooks WHERE team_id = $1 AND id = $2 FOR UPDATE`, teamID, id))
}

// updateWebhook writes w's settings; its disabled fields are written as
// they are, so a webhook switched on or off by an admin has them cleared.
// A webhook switched on gets enabled_at = now: its failures are counted
// afresh from then (failingSince), not from failures before it was off.
func (store) updateWebhook(ctx context.Context, db postgres.DB, w Webhook, now time.Time) (Webhook, error) {
	return oneWebhook(db.QueryRow(ctx, `
		UPDATE webhooks SET url = $2, events = $3, active = $4, rate_limit = $5, disabled_at = $6, disabled_reason = $7,
		       enabled_at = CASE WHEN $4 AND NOT active THEN $8 ELSE enabled_at END, updated_at = now()
		WHERE id = $1 RETURNING `+webhookColumns, w.ID, w.URL, w.Events, w.Active, w.RateLimit, w.DisabledAt, w.DisabledReason, now))
}

// cancelPending stops the deliveries a deactivated webhook has not
// finished, held ones included. An attempt in flight still logs; its
// result no longer changes the delivery (the completion only touches
// pending rows).
func (store) cancelPending(ctx context.Context, db postgres.DB, webhookID uuid.UUID) error {
	_, err := db.Exec(ctx, `
		UPDATE webhook_deliveries SET status = 'canceled', lease_owner = NULL, lease_until = NULL, manual = false,
		       updated_at = now()
		WHERE webhook_id = $1 AND status IN ('pending', 'held')`, webhookID)
	return err
}

// releaseHeld queues again the deliveries kept while the webhook was
// switched off (those pending when the service switched it off, and those
// a recovery queued meanwhile), all due now, their due times a microsecond
// apart in the order of their events (the claim takes the earliest first).
func (store) releaseHeld(ctx context.Context, db postgres.DB, webhookID uuid.UUID, now time.Time) error {
	_, err := db.Exec(ctx, `
		UPDATE webhook_deliveries d SET status = 'pending', slotted = false, updated_at = now(),
		       next_attempt_at = $2::timestamptz - o.n * interval '1 microsecond'
		FROM (SELECT h.id, row_number() OVER (ORDER BY e.occurred_at DESC, e.id DESC) AS n
		      FROM webhook_deliveries h JOIN event_records e ON e.id = h.event_id
		      WHERE h.webhook_id = $1 AND h.status = 'held') o
		WHERE d.id = o.id`, webhookID, now)
	return err
}

// lockWebhookForDelete takes the webhook's row lock that waits for the
// writers of its state (an admin's change, the switch-off, a recovery's
// batch) but not for attempts logging against it (their foreign key
// check takes a key share lock).
func (store) lockWebhookForDelete(ctx context.Context, db postgres.DB, teamID, id uuid.UUID) error {
	tag, err := db.Exec(ctx, `SELECT 1 FROM webhooks WHERE team_id = $1 AND id = $2 FOR NO KEY UPDATE`, teamID, id)
	if err == nil && tag.RowsAffected() == 0 {
		return errWebhookNotFound
	}
	return err
}

// lockPendingDeliveries takes the row locks of the webhook's unfinished
// deliveries, waiting for attempts that are completing them.
func (store) lockPendingDeliveries(ctx context.Context, db postgres.DB, id uuid.UUID) error {
	_, err := db.Exec(ctx, `
		SELECT 1 FROM webhook_deliveries d WHERE d.webhook_id = $1 AND d.status = 'pending'
		ORDER BY d.id FOR UPDATE OF d`, id)
	return err
}

func (store) deleteWebhook(ctx context.Context, db postgres.DB, teamID, id uuid.UUID) error {
	tag, err := db.Exec(ctx, `DELETE FROM webhooks WHERE team_id = $1 AND id = $2`, teamID, id)
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return errWebhookNotFound
	}
	return nil
}

// dispatch fans queued events out into deliveries, one per active webhook
// of the event's team subscribed to its type, and takes them off the
// queue: one statement for up to limit events. SKIP LOCKED lets
// several instances dispatch at once without waiting on each other.
//
// The queue statements (dispatch, claim, complete) are planned at each
// execution (postgres.PlanEachTime): a queue table swings from empty to
// tens of thousands of rows within a second, and a plan cached on a
// connection while the table was small (a sequential scan and a sort of
// every pending row) stays in use until the next ANALYZE. On a fresh
// instance that slowed the first 10,000-event change's deliveries from
// thousands to about 280 a second (claims of 64 rows taking 100-300 ms).
func (store) dispatch(ctx context.Context, db postgres.DB, now time.Time, limit int) (evs, deliveries int, err error) {
	err = db.QueryRow(ctx, `
		WITH ev AS (
			`+events.QueuedSQL("$2")+`
		), ins AS (
			INSERT INTO webhook_deliveries (event_id, webhook_id, next_attempt_at)
			SELECT ev.id, w.id, $1
			FROM ev JOIN webhooks w ON w.team_id = ev.team_id AND w.active AND ev.type = ANY (w.events)
			ON CONFLICT (event_id, webhook_id) DO NOTHING
			RETURNING 1
		), upd AS (
			`+events.DequeueSQL("ev")+`
		)
		SELECT (SELECT count(*) FROM upd), (SELECT count(*) FROM ins)`, postgres.PlanEachTime, now, limit).Scan(&evs, &deliveries)
	return evs, deliveries, err
}

// job is a claimed delivery with what it takes to send it.
type job struct {
	DeliveryID uuid.UUID
	EventID    uuid.UUID
	WebhookID  uuid.UUID
	Attempt    int // the number of the attempt about to be made, from 1
	EventType  string
	Body       []byte
	URL        string
	Secret     string
	Active     bool
	Manual     bool // an admin asked for this attempt: made once, not retried
	// SendBy is, for a webhook with a rate limit, the latest time the
	// attempt may start: its send time plus sendTolerance.
	SendBy     *time.Time
	LeaseUntil time.Time // set by the engine
}

// sendTolerance is how late after its send time a rate-limited delivery
// may still start: a twentieth of a second, so that at any rate the
// instances send at most 5 % over the limit in any second, even when one
// fell behind. One later than that takes a new send time instead
// (outcome.lostSlot).
const sendTolerance = 50 * time.Millisecond

// claim leases up to limit due deliveries for owner until leaseUntil. A
// row is due when pending, its next attempt time has come, and nobody
// holds a live lease on it; a lease that ran out (its instance died) makes
// the row claimable again.
//
// A due row of a rate-limited webhook first takes the next send time of
// the webhook's schedule (webhook_rate_slots, advanced under its row lock,
// so instances never hand out the same time twice). A row whose time is
// now is leased; the others are not, their next attempt moves to their
// time and they are marked slotted, so that they are claimed then without
// taking a second time. Nothing polls for them: the engine wakes at the
// next due time (nextDue).
func (store) claim(ctx context.Context, db postgres.DB, owner string, now, leaseUntil time.Time, limit int) ([]job, error) {
	rows, err := db.Query(ctx, `
		WITH c AS (
			SELECT id, webhook_id, slotted, next_attempt_at FROM webhook_deliveries
			WHERE status = 'pending' AND next_attempt_at <= @now
			  AND (lease_until IS NULL OR lease_until < @now)
			ORDER BY next_attempt_at
			LIMIT @limit
			FOR UPDATE SKIP LOCKED
		), need AS (
			SELECT c.id, c.webhook_id, interval '1 second' / w.rate_limit AS gap,
			       row_number() OVER (PARTITION BY c.webhook_id ORDER BY c.next_attempt_at, c.id) AS k,
			       count(*) OVER (PARTITION BY c.webhook_id) AS n
			FROM c JOIN webhooks w ON w.id = c.webhook_id
			WHERE w.rate_limit IS NOT NULL AND NOT c.slotted
		), slots AS (
			INSERT INTO webhook_rate_slots AS s (webhook_id, next_slot_at)
			SELECT DISTINCT ON (webhook_id) webhook_id, @now::timestamptz + n * gap FROM need
			ON CONFLICT (webhook_id) DO UPDATE
			SET next_slot_at = greatest(s.next_slot_at, @now) + (excluded.next_slot_at - @now)
			RETURNING webhook_id, next_slot_at
		), planned AS (
			SELECT need.id, s.next_slot_at - (need.n - need.k + 1) * need.gap AS slot_at
			FROM need JOIN slots s USING (webhook_id)
		), u AS (
			UPDATE webhook_deliveries d
			SET lease_owner = CASE WHEN p.slot_at > @now THEN NULL ELSE @owner END,
			    lease_until = CASE WHEN p.slot_at > @now THEN NULL ELSE @until::timestamptz END,
			    next_attempt_at = COALESCE(p.slot_at, d.next_attempt_at),
			    slotted = COALESCE(p.slot_at > @now, false)
			FROM c LEFT JOIN planned p ON p.id = c.id
			WHERE d.id = c.id
			RETURNING d.id, d.event_id, d.webhook_id, d.attempts, d.manual, d.next_attempt_at, d.lease_owner IS NOT NULL AS leased
		)
		SELECT u.id, u.event_id, u.webhook_id, u.attempts + 1, u.manual, e.type, e.body, w.url, w.secret, w.active,
		       CASE WHEN w.rate_limit IS NOT NULL THEN u.next_attempt_at + @tolerance::interval END
		FROM u JOIN event_records e ON e.id = u.event_id JOIN webhooks w ON w.id = u.webhook_id
		WHERE u.leased`,
		postgres.PlanEachTime, pgx.StrictNamedArgs{"owner": owner, "now": now, "until": leaseUntil, "limit": limit, "tolerance": sendTolerance})
	if err != nil {
		return nil, err
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (job, error) {
		var j job
		err := r.Scan(&j.DeliveryID, &j.EventID, &j.WebhookID, &j.Attempt, &j.Manual, &j.EventType, &j.Body, &j.URL, &j.Secret, &j.Active, &j.SendBy)
		return j, err
	})
	return out, err
}

// nextDue is the earliest time after now at which a pending delivery
// falls due (a retry, or a send time a rate limit gave), if any: one probe
// of the due index.
func (store) nextDue(ctx context.Context, db postgres.DB, now time.Time) (*time.Time, error) {
	var at *time.Time
	err := db.QueryRow(ctx, `
		SELECT min(next_attempt_at) FROM webhook_deliveries WHERE status = 'pending' AND next_attempt_at > $1`, now).Scan(&at)
	return at, err
}

// complete records a batch of outcomes in one statement: the attempts that
// were made go to the log, and each delivery gets its new state and loses
// its lease. Only rows still leased by owner and still pending change: a
// delivery whose lease ran out and was claimed elsewhere, or that was
// canceled meanwhile, keeps what the other party wrote.
func (store) complete(ctx context.Context, db postgres.DB, owner string, outs []outcome) error {
	n := len(outs)
	var (
		ids      = make([]uuid.UUID, n)
		statuses = make([]string, n)
		incs     = make([]int32, n)
		nexts    = make([]*time.Time, n)
		lost     = make([]bool, n)

		aDelivery, aWebhook, aEvent []uuid.UUID
		aType, aBody                []string
		aAttempt, aDuration         []int32
		aStatus                     []*int32
		aError                      []*string
		aSuccess, aManual           []bool
		aAt                         []time.Time
	)
	for i, o := range outs {
		ids[i], statuses[i], lost[i] = o.job.DeliveryID, o.status, o.lostSlot
		if o.status == statusPending && !o.next.IsZero() {
			next := o.next
			nexts[i] = &next
		}
		if !o.attempted {
			continue
		}
		incs[i] = 1
		aDelivery = append(aDelivery, o.job.DeliveryID)
		aWebhook = append(aWebhook, o.job.WebhookID)
		aEvent = append(aEvent, o.job.EventID)
		aType = append(aType, o.job.EventType)
		aAttempt = append(aAttempt, int32(o.job.Attempt))
		aStatus = append(aStatus, o.responseStatus)
		aBody = append(aBody, o.responseBody)
		aError = append(aError, o.errText)
		aDuration = append(aDuration, int32(o.duration.Milliseconds()))
		aSuccess = append(aSuccess, o.success)
		aManual = append(aManual, o.job.Manual)
		aAt = append(aAt, o.at)
	}
	_, err := db.Exec(ctx, `
		WITH log AS (
			INSERT INTO webhook_attempts (delivery_id, webhook_id, event_id, event_type, attempt, response_status,
			                              response_body, error, duration_ms, success, manual, created_at)
			SELECT a.* FROM unnest(@a_delivery::uuid[], @a_webhook::uuid[], @a_event::uuid[], @a_type::text[],
			                       @a_attempt::int[], @a_status::int[], @a_body::text[], @a_error::text[],
			                       @a_duration::int[], @a_success::bool[], @a_manual::bool[], @a_at::timestamptz[])
			       AS a(delivery_id, webhook_id, event_id, event_type, attempt, response_status,
			            response_body, error, duration_ms, success, manual, created_at)
			-- A webhook deleted while its attempt was in flight takes its
			-- deliveries and log with it; such attempts are dropped.
			WHERE EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.id = a.delivery_id)
		)
		UPDATE webhook_deliveries d
		SET status = r.status, attempts = d.attempts + r.inc,
		    next_attempt_at = COALESCE(r.next_at, d.next_attempt_at),
		    lease_owner = NULL, lease_until = NULL, updated_at = now(),
		    -- A delivery handed back unattempted keeps its flags: its
		    -- admin's send is still to come, its send time still counted.
		    manual = d.manual AND r.inc = 0, slotted = d.slotted AND r.inc = 0 AND NOT r.lost
		FROM unnest(@ids::uuid[], @statuses::text[], @incs::int[], @nexts::timestamptz[], @lost::bool[])
		     AS r(id, status, inc, next_at, lost)
		WHERE d.id = r.id AND d.lease_owner = @owner AND d.status = 'pending'`,
		postgres.PlanEachTime, pgx.StrictNamedArgs{
			"owner": owner, "ids": ids, "statuses": statuses, "incs": incs, "nexts": nexts, "lost": lost,
			"a_delivery": aDelivery, "a_webhook": aWebhook, "a_event": aEvent, "a_type": aType,
			"a_attempt": aAttempt, "a_status": aStatus, "a_body": aBody, "a_error": aError,
			"a_duration": aDuration, "a_success": aSuccess, "a_manual": aManual, "a_at": aAt,
		})
	return err
}

// leaseAppPrefix names the connection each running engine holds open
// (application_name = prefix + lease owner). While it is there, the
// owner is alive; when a process dies its connections vanish at once.
const leaseAppPrefix = "contactbook-webhooks:"

// reapDeadLeases frees the leases of owners that no longer have a
// connection to the database (a killed process), so their deliveries are
// taken over now instead of when the leases run out.
func (store) reapDeadLeases(ctx context.Context, db postgres.DB) (int64, error) {
	tag, err := db.Exec(ctx, `
		UPDATE webhook_deliveries SET lease_owner = NULL, lease_until = NULL
		WHERE status = 'pending' AND lease_owner IS NOT NULL
		  AND lease_owner <> ALL (ARRAY(
			SELECT substr(application_name, length($1) + 1) FROM pg_stat_activity
			WHERE starts_with(application_name, $1)))`, leaseAppPrefix)
	if err != nil {
		return 0, err
	}
	return tag.RowsAffected(), nil
}

// pendingDeliveries counts deliveries waiting for an attempt.
func (store) pendingDeliveries(ctx context.Context, db postgres.DB) (int64, error) {
	var n int64
	err := db.QueryRow(ctx, `SELECT count(*) FROM webhook_deliveries WHERE status = 'pending'`).Scan(&n)
	return n, err
}
