package webhooks

import (
	"context"
	"log/slog"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/contactbook/contactbook/internal/access"
	"github.com/contactbook/contactbook/internal/apperr"
	"github.com/contactbook/contactbook/internal/auth"
	"github.com/contactbook/contactbook/internal/postgres"
)

// Service holds the rules of webhook management and the delivery log.
// Every operation needs a team admin (admin or owner).
type Service struct {
	db       postgres.Pool
	now      func() time.Time
	insecure bool
	st       store
	// wake has this instance's engine look for due deliveries now
	// (Engine.WakeDeliveries), after a commit that queued some.
	wake func()
	// recoveries queues recovery jobs.
	recoveries Queue
	log        *slog.Logger
}

// Queue enqueues a job in the caller's transaction (the River client,
// jobs.Client).
type Queue interface {
	InsertTx(ctx context.Context, tx pgx.Tx, args river.JobArgs, opts *river.InsertOpts) (*rivertype.JobInsertResult, error)
}

// Deps are what the service works with.
type Deps struct {
	DB  postgres.Pool
	Now func() time.Time // nil: time.Now
	// AllowInsecure (WEBHOOK_ALLOW_INSECURE) accepts http:// and local
	// URLs, for development and tests.
	AllowInsecure bool
	// Queue takes the recovery jobs, in the transaction that counts them.
	Queue Queue
	// Wake is called after a commit that queued deliveries and must not
	// block (nil: nothing is woken).
	Wake func()
	Log  *slog.Logger // nil: discarded
}

// NewService wires the service.
func NewService(d Deps) *Service {
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.Wake == nil {
		d.Wake = func() {}
	}
	if d.Log == nil {
		d.Log = slog.New(slog.DiscardHandler)
	}
	return &Service{db: d.DB, now: d.Now, insecure: d.AllowInsecure, recoveries: d.Queue, wake: d.Wake, log: d.Log}
}

var (
	errWebhookNotFound = apperr.NotFoundf("No webhook with this id in the team.")
)

// Create subscribes a URL to event types and returns the signing secret,
// which is never shown again.
func (s *Service) Create(ctx context.Context, sc access.Scope, in CreateInput) (Created, error) {
	if err := sc.Require(ctx, auth.RoleAdmin); err != nil {
		return Created{}, err
	}
	u, err := normalizeURL(in.URL, s.insecure)
	if err != nil {
		return Created{}, err
	}
	evs, err := normalizeEvents(in.Events)
	if err != nil {
		return Created{}, err
	}
	if err := checkRateLimit(in.RateLimit); err != nil {
		return Created{}, err
	}
	secret, err := newSecret()
	if err != nil {
		return Created{}, err
	}
	var w Webhook
	err = postgres.InTx(ctx, s.db, func(tx *postgres.Tx) error {
		if w, err = s.st.insertWebhook(ctx, tx, Webhook{TeamID: sc.Team, URL: u, Events: evs, Active: true, RateLimit: in.RateLimit, CreatedBy: sc.Actor.CreatedBy()}, secret, s.now()); err != nil {
			return err
		}
		return recordChange(ctx, tx, sc.Actor, "webhook.created", w.redacted())
	})
	if err != nil {
		return Created{}, err
	}
	return Created{Webhook: w.redacted(), Secret: secret}, nil
}

// List returns every webhook of the team, oldest first.
func (s *Service) List(ctx context.Context, sc access.Scope) ([]Webhook, error) {
	if err := sc.Require(ctx, auth.RoleAdmin); err != nil {
		return nil, err
	}
	ws, err := s.st.webhooks(ctx, s.db, sc.Team)
	for i := range ws {
		ws[i] = ws[i].redacted()
	}
	return ws, err
}

// Update changes the URL, the event types, the rate limit or the active
// flag. Turning a webhook off cancels its pending deliveries (and those
// kept while it was switched off automatically): an inactive webhook gets
// nothing, and turning it on again does not replay what it missed.
// Turning a webhook on clears the reason the service switched it off for,
// if any, and sends what was kept while it was off (the deliveries pending
// when the service switched it off, those a recovery queued meanwhile), in
// the order of their events. Retries still pending go to the new URL when
// the URL changes. A URL sent back as shown, with the masked password,
// keeps the stored password while its scheme, host, port and user stay.
func (s *Service) Update(ctx context.Context, sc access.Scope, id uuid.UUID, p Patch) (Webhook, error) {
	if err := sc.Require(ctx, auth.RoleAdmin); err != nil {
		return Webhook{}, err
	}
	if !p.URL.Set && !p.Events.Set && !p.Active.Set && !p.RateLimit.Set {
		return Webhook{}, apperr.Invalidf("Send at least one of url, events, active, rate_limit.")
	}
	if p.URL.Null || p.Events.Null || p.Active.Null {
		return Webhook{}, apperr.Invalidf("Webhook fields other than rate_limit cannot be null.")
	}
	if p.RateLimit.HasValue() {
		if err := checkRateLimit(&p.RateLimit.V); err != nil {
			return Webhook{}, err
		}
	}
	var out Webhook
	err := postgres.InTx(ctx, s.db, func(tx *postgres.Tx) error {
		w, err := s.st.webhookForUpdate(ctx, tx, sc.Team, id)
		if err != nil {
			return err
		}
		if p.URL.Set {
			next, err := normalizeURL(p.URL.V, s.insecure)
			if err != nil {
				return err
			}
			if w.URL, err = keepPassword(next, w.URL); err != nil {
				return err
			}
		}
		if p.Events.Set {
			if w.Events, err = normalizeEvents(p.Events.V); err != nil {
				return err
			}
		}
		p.RateLimit.ApplyToPtr(&w.RateLimit)
		wasActive, wasDisabled := w.Active, w.DisabledAt != nil
		p.Active.ApplyTo(&w.Active)
		if p.Active.Set {
			// An admin's switch, either way, replaces the service's.
			w.DisabledAt, w.DisabledReason = nil, nil
		}
		if out, err = s.st.updateWebhook(ctx, tx, w, s.now()); err != nil {
			return err
		}
		out = out.redacted()
		if err := recordChange(ctx, tx, sc.Actor, "webhook.updated", out); err != nil {
			return err
		}
		switch {
		case p.Active.Set && !w.Active && (wasActive || wasDisabled):
			return s.st.cancelPending(ctx, tx, w.ID)
		case w.Active && !wasActive:
			if err := s.st.releaseHeld(ctx, tx, w.ID, s.now()); err != nil {
				return err
			}
			tx.AfterCommit(s.wake)
		}
		return nil
	})
	return out, err
}

// Delete removes a webhook, its pending deliveries and its log.
func (s *Service) Delete(ctx context.Context, sc access.Scope, id uuid.UUID) error {
	if err := sc.Require(ctx, auth.RoleAdmin); err != nil {
		return err
	}
	// The locks come in the order the other writers take them, or the
	// delete and one of them deadlock. The webhook's row first, as Update,
	// the switch-off and a recovery's batch lock it before its deliveries;
	// that lock still lets attempts log meanwhile. Then the pending
	// deliveries, before the row is deleted: a completing attempt locks its
	// delivery row, then (its log row's foreign key, checked at the end of
	// its statement) the webhook row, which the delete itself holds.
	return postgres.InTx(ctx, s.db, func(tx *postgres.Tx) error {
		if err := s.st.lockWebhookForDelete(ctx, tx, sc.Team, id); err != nil {
			return err
		}
		if err := s.st.lockPendingDeliveries(ctx, tx, id); err != nil {
			return err
		}
		if err := s.st.deleteWebhook(ctx, tx, sc.Team, id); err != nil {
			return err
		}
		return recordChange(ctx, tx, sc.Actor, "webhook.deleted", Webhook{ID: id, TeamID: sc.Team})
	})
}

// QueueDepth counts deliveries waiting for an attempt, due or scheduled
// for a retry (the metrics' queue depth).
func (s *Service) QueueDepth(ctx context.Context) (float64, error) {
	n, err := s.st.pendingDeliveries(ctx, s.db)
	return float64(n), err
}
