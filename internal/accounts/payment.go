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
	if err != nil {
		return false, err
	}
	if applied && u.State != "" {
		err := s.record(ctx, db, nil, u.TeamID, "addon.changed", "team", u.TeamID.String(),
			map[string]any{"addon": "campaigns", "state": u.State, "by": "payment_provider"})
		return err == nil, err
	}
	if applied {
		return true, nil
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
