package webhooks

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/contactbook/contactbook/internal/audit"
	"github.com/contactbook/contactbook/internal/postgres"
)

// DefaultDisableAfter is how long a webhook may fail at every attempt
// before the engine switches it off (WEBHOOK_DISABLE_AFTER).
const DefaultDisableAfter = 120 * time.Hour

// MinDisableAfter is the shortest WEBHOOK_DISABLE_AFTER accepted.
const MinDisableAfter = time.Minute

// DisabledNotice is what the team is told about a webhook the engine
// switched off.
type DisabledNotice struct {
	TeamID       uuid.UUID
	WebhookID    uuid.UUID
	URL          string // with its password masked
	Reason       string
	FailingSince time.Time
	At           time.Time
}

// DisabledNotifier tells the team's admins and owners that a webhook was
// switched off, through tx, the transaction that switches it off (so the
// notice goes out exactly when the switch-off commits).
type DisabledNotifier func(ctx context.Context, tx *postgres.Tx, n DisabledNotice) error

// failingWebhooks are the webhooks of batch that had a failed attempt.
func failingWebhooks(batch []outcome) []uuid.UUID {
	var ids []uuid.UUID
	seen := map[uuid.UUID]bool{}
	for _, o := range batch {
		if o.attempted && !o.success && !seen[o.job.WebhookID] {
			seen[o.job.WebhookID] = true
			ids = append(ids, o.job.WebhookID)
		}
	}
	return ids
}

// disableFailing switches off the webhooks of batch whose attempts have
// all failed for DisableAfter: checked after every batch with a failed
// attempt, by one indexed look-up per failing webhook.
func (e *Engine) disableFailing(ctx context.Context, batch []outcome) error {
	ids := failingWebhooks(batch)
	if len(ids) == 0 {
		return nil
	}
	now := e.cfg.Now()
	due, err := e.st.failingSince(ctx, e.db, ids, now.Add(-e.cfg.DisableAfter))
	if err != nil {
		return err
	}
	for id, since := range due {
		if err := e.disable(ctx, id, since, now); err != nil {
			return err
		}
	}
	return nil
}

// disable switches one webhook off in one transaction: the webhook (if
// still on), its pending deliveries held, the audit entry and the notice
// to the team.
func (e *Engine) disable(ctx context.Context, id uuid.UUID, since, now time.Time) error {
	reason := fmt.Sprintf("Every delivery attempt has failed since %s (%s or more), so the webhook was switched off. Deliveries that were pending are kept and go out when it is switched on again.",
		since.UTC().Format("2 January 2006, 15:04 UTC"), describeDuration(e.cfg.DisableAfter))
	var notice *DisabledNotice
	err := postgres.InTx(ctx, e.db, func(tx *postgres.Tx) error {
		w, switched, err := e.st.switchOff(ctx, tx, id, now, reason)
		if err != nil || !switched {
			return err
		}
		if err := e.st.holdPending(ctx, tx, id); err != nil {
			return err
		}
		err = audit.Record(ctx, tx, audit.Entry{
			TeamID: w.TeamID, Actor: audit.System(), Action: "webhook.disabled",
			TargetType: "webhook", TargetID: w.ID.String(),
			Details: map[string]any{"reason": reason, "failing_since": since.UTC(), "url": redactedURL(w.URL)},
		})
		if err != nil {
			return err
		}
		notice = &DisabledNotice{TeamID: w.TeamID, WebhookID: w.ID, URL: redactedURL(w.URL), Reason: reason, FailingSince: since, At: now}
		if e.cfg.OnDisabled != nil {
			return e.cfg.OnDisabled(ctx, tx, *notice)
		}
		return nil
	})
	if err == nil && notice != nil {
		e.cfg.Log.Warn("webhooks: switched off a webhook that kept failing", "webhook_id", id, "team_id", notice.TeamID,
			"failing_since", since)
	}
	return err
}

// describeDuration writes d in whole days when it is some, as Go writes
// durations otherwise.
func describeDuration(d time.Duration) string {
	const day = 24 * time.Hour
	switch {
	case d == day:
		return "1 day"
	case d%day == 0:
		return fmt.Sprintf("%d days", d/day)
	default:
		return d.String()
	}
}
