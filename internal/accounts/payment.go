package accounts

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/contactbook/contactbook/internal/apperr"
	"github.com/contactbook/contactbook/internal/postgres"
)

// PaymentUpdate is a change of a team's paid add-on reported by the payment
// provider (its webhook), applied by ApplyPayment.
type PaymentUpdate struct {
	TeamID uuid.UUID
	// State is AddonActive or AddonCanceled; empty records the provider
	// ids without changing the add-on (a checkout whose payment is still
	// pending).
	State          AddonState
	CustomerID     string // empty keeps the stored one
	SubscriptionID string // empty keeps the stored one
	// At is when the provider says the change happened. The provider does
	// not deliver events in order, and retries late: an update older than
	// the last one applied to the team is stale and ignored.
	At time.Time
	// SameSubscription applies the update only while the team's stored
	// subscription is SubscriptionID (or none is stored): news about a
	// subscription the team has since replaced must not touch it.
	SameSubscription bool
}

// ApplyPayment writes a payment-provider add-on change on db, which is the
// caller's transaction so the change commits together with the record
// that the provider's event was handled. It reports false when the update
// is stale (see PaymentUpdate) and NOT_FOUND when there is no such team.
// A cancellation never takes away a trial or turns "none" into
// "canceled": only a paid add-on can end.
func (s *Service) ApplyPayment(ctx context.Context, db postgres.DB, u PaymentUpdate) (bool, error) {
	switch u.State {
	case "", AddonActive, AddonCanceled:
	default:
		return false, apperr.New(apperr.Internal, "payment update with add-on state %q", u.State)
	}
	applied, err := s.st.applyPayment(ctx, db, u)
	if err != nil || applied {
		return applied, err
	}
	exists, err := s.st.teamExists(ctx, db, u.TeamID)
	if err != nil {
		return false, err
	}
	if !exists {
		return false, teamNotFound
	}
	return false, nil
}

// PaymentCustomer returns the payment provider's customer id stored for
// the team ("" when it never paid), so a new checkout reuses the customer.
func (s *Service) PaymentCustomer(ctx context.Context, teamID uuid.UUID) (string, error) {
	id, err := s.st.paymentCustomer(ctx, s.db, teamID)
	if apperr.Is(err, apperr.NotFound) {
		return "", teamNotFound
	}
	return id, err
}

// applyPayment is one conditional UPDATE: the row lock it takes and the
// re-check of its WHERE after the lock make concurrent events for one team
// apply one after the other, each against the other's result.
func (store) applyPayment(ctx context.Context, db postgres.DB, u PaymentUpdate) (bool, error) {
	tag, err := db.Exec(ctx, `
		UPDATE teams SET
			campaign_addon = CASE
				WHEN $2::text = '' THEN campaign_addon
				WHEN $2::text = 'canceled' AND campaign_addon IN ('none', 'trial') THEN campaign_addon
				ELSE $2::text END,
			stripe_customer_id = COALESCE(NULLIF($3::text, ''), stripe_customer_id),
			stripe_subscription_id = COALESCE(NULLIF($4::text, ''), stripe_subscription_id),
			billing_event_at = GREATEST(billing_event_at, $5::timestamptz),
			updated_at = now()
		WHERE id = $1
		  AND (billing_event_at IS NULL OR billing_event_at <= $5::timestamptz)
		  AND (NOT $6::boolean OR stripe_subscription_id IS NULL OR stripe_subscription_id = $4::text)`,
		u.TeamID, u.State, u.CustomerID, u.SubscriptionID, u.At, u.SameSubscription)
	if err != nil {
		return false, postgres.Translate(err)
	}
	return tag.RowsAffected() == 1, nil
}

func (store) teamExists(ctx context.Context, db postgres.DB, id uuid.UUID) (bool, error) {
	var exists bool
	err := db.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM teams WHERE id = $1)`, id).Scan(&exists)
	return exists, postgres.Translate(err)
}

func (store) paymentCustomer(ctx context.Context, db postgres.DB, teamID uuid.UUID) (string, error) {
	var id *string
	err := db.QueryRow(ctx, `SELECT stripe_customer_id FROM teams WHERE id = $1`, teamID).Scan(&id)
	if err != nil {
		return "", postgres.Translate(err)
	}
	if id == nil {
		return "", nil
	}
	return *id, nil
}

// PaymentTeam returns the team whose stored subscription is subscriptionID,
// on db (the caller's transaction); NOT_FOUND when no team has it. It finds
// the team of subscription events that carry no team id in metadata.
func (s *Service) PaymentTeam(ctx context.Context, db postgres.DB, subscriptionID string) (uuid.UUID, error) {
	id, err := s.st.teamBySubscription(ctx, db, subscriptionID)
	if apperr.Is(err, apperr.NotFound) {
		return uuid.Nil, teamNotFound
	}
	return id, err
}

func (store) teamBySubscription(ctx context.Context, db postgres.DB, subscriptionID string) (uuid.UUID, error) {
	var id uuid.UUID
	err := db.QueryRow(ctx, `SELECT id FROM teams WHERE stripe_subscription_id = $1 LIMIT 1`, subscriptionID).Scan(&id)
	return id, postgres.Translate(err)
}
