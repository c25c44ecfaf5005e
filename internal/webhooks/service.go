package webhooks

import (
	"context"
	"time"

	"github.com/google/uuid"

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
}

// NewService wires the service. insecure (WEBHOOK_ALLOW_INSECURE) accepts
// http:// and local URLs, for development and tests.
func NewService(db postgres.Pool, now func() time.Time, insecure bool) *Service {
	if now == nil {
		now = time.Now
	}
	return &Service{db: db, now: now, insecure: insecure}
}

var (
	errTeamNotFound    = apperr.NotFoundf("No team with this id.")
	errWebhookNotFound = apperr.NotFoundf("No webhook with this id in the team.")
)

// admin checks the actor administers the team; outsiders get NOT_FOUND.
func admin(ctx context.Context, actor *auth.Actor, teamID uuid.UUID) error {
	return actor.Require(ctx, teamID, auth.RoleAdmin, errTeamNotFound)
}

// Create subscribes a URL to event types and returns the signing secret,
// which is never shown again.
func (s *Service) Create(ctx context.Context, actor *auth.Actor, teamID uuid.UUID, in CreateInput) (Created, error) {
	if err := admin(ctx, actor, teamID); err != nil {
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
	secret, err := newSecret()
	if err != nil {
		return Created{}, err
	}
	var w Webhook
	err = postgres.InTx(ctx, s.db, func(tx *postgres.Tx) error {
		if w, err = s.st.insertWebhook(ctx, tx, Webhook{TeamID: teamID, URL: u, Events: evs, Active: true, CreatedBy: actor.CreatedBy()}, secret); err != nil {
			return err
		}
		return recordChange(ctx, tx, actor, "webhook.created", w.redacted())
	})
	if err != nil {
		return Created{}, err
	}
	return Created{Webhook: w.redacted(), Secret: secret}, nil
}

// List returns every webhook of the team, oldest first.
func (s *Service) List(ctx context.Context, actor *auth.Actor, teamID uuid.UUID) ([]Webhook, error) {
	if err := admin(ctx, actor, teamID); err != nil {
		return nil, err
	}
	ws, err := s.st.webhooks(ctx, s.db, teamID)
	for i := range ws {
		ws[i] = ws[i].redacted()
	}
	return ws, err
}

// Update changes the URL, the event types or the active flag. Turning a
// webhook off cancels its pending deliveries: an inactive webhook gets
// nothing, and turning it on again does not replay what it missed.
// Retries still pending go to the new URL when the URL changes. A URL sent
// back as shown, with the masked password, keeps the stored password.
func (s *Service) Update(ctx context.Context, actor *auth.Actor, teamID, id uuid.UUID, p Patch) (Webhook, error) {
	if err := admin(ctx, actor, teamID); err != nil {
		return Webhook{}, err
	}
	if !p.URL.Set && !p.Events.Set && !p.Active.Set {
		return Webhook{}, apperr.Invalidf("Send at least one of url, events, active.")
	}
	if p.URL.Null || p.Events.Null || p.Active.Null {
		return Webhook{}, apperr.Invalidf("Webhook fields cannot be null.")
	}
	var out Webhook
	err := postgres.InTx(ctx, s.db, func(tx *postgres.Tx) error {
		w, err := s.st.webhookForUpdate(ctx, tx, teamID, id)
		if err != nil {
			return err
		}
		if p.URL.Set {
			next, err := normalizeURL(p.URL.V, s.insecure)
			if err != nil {
				return err
			}
			w.URL = keepPassword(next, w.URL)
		}
		if p.Events.Set {
			if w.Events, err = normalizeEvents(p.Events.V); err != nil {
				return err
			}
		}
		wasActive := w.Active
		p.Active.ApplyTo(&w.Active)
		if out, err = s.st.updateWebhook(ctx, tx, w); err != nil {
			return err
		}
		out = out.redacted()
		if err := recordChange(ctx, tx, actor, "webhook.updated", out); err != nil {
			return err
		}
		if wasActive && !w.Active {
			return s.st.cancelPending(ctx, tx, w.ID)
		}
		return nil
	})
	return out, err
}

// Delete removes a webhook, its pending deliveries and its log.
func (s *Service) Delete(ctx context.Context, actor *auth.Actor, teamID, id uuid.UUID) error {
	if err := admin(ctx, actor, teamID); err != nil {
		return err
	}
	// A completing attempt locks its delivery row, then (its log row's
	// foreign key, checked at the end of its statement) the webhook row.
	// The delete takes them in the same order, or the two deadlock.
	return postgres.InTx(ctx, s.db, func(tx *postgres.Tx) error {
		if err := s.st.lockPendingDeliveries(ctx, tx, teamID, id); err != nil {
			return err
		}
		if err := s.st.deleteWebhook(ctx, tx, teamID, id); err != nil {
			return err
		}
		return recordChange(ctx, tx, actor, "webhook.deleted", Webhook{ID: id, TeamID: teamID})
	})
}

// Deliveries returns the webhook's delivery log, newest attempt first.
// limit 0 means the default; above the maximum it is clamped. success,
// when set, keeps only the attempts that succeeded (true) or failed.
func (s *Service) Deliveries(ctx context.Context, actor *auth.Actor, teamID, id uuid.UUID, limit int, success *bool) ([]Attempt, error) {
	if err := admin(ctx, actor, teamID); err != nil {
		return nil, err
	}
	switch {
	case limit < 0:
		return nil, apperr.Invalidf("The query parameter limit must be a non-negative integer.")
	case limit == 0:
		limit = DefaultLogLimit
	case limit > MaxLogLimit:
		limit = MaxLogLimit
	}
	if _, err := s.st.webhook(ctx, s.db, teamID, id); err != nil {
		return nil, err
	}
	return s.st.attempts(ctx, s.db, id, limit, success)
}

// QueueDepth counts deliveries waiting for an attempt, due or scheduled
// for a retry (the metrics' queue depth).
func (s *Service) QueueDepth(ctx context.Context) (float64, error) {
	n, err := s.st.pendingDeliveries(ctx, s.db)
	return float64(n), err
}
