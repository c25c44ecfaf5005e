package accounts

import (
	"context"

	"github.com/google/uuid"

	"github.com/contactbook/contactbook/internal/postgres"
)

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
		return false, err
	}
	return tag.RowsAffected() == 1, nil
}

func (store) teamExists(ctx context.Context, db postgres.DB, id uuid.UUID) (bool, error) {
	var exists bool
	err := db.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM teams WHERE id = $1)`, id).Scan(&exists)
	return exists, err
}

func (store) paymentCustomer(ctx context.Context, db postgres.DB, teamID uuid.UUID) (string, error) {
	var id *string
	err := db.QueryRow(ctx, `SELECT stripe_customer_id FROM teams WHERE id = $1`, teamID).Scan(&id)
	if err != nil {
		return "", err
	}
	if id == nil {
		return "", nil
	}
	return *id, nil
}

func (store) teamBySubscription(ctx context.Context, db postgres.DB, subscriptionID string) (uuid.UUID, error) {
	var id uuid.UUID
	err := db.QueryRow(ctx, `SELECT id FROM teams WHERE stripe_subscription_id = $1 LIMIT 1`, subscriptionID).Scan(&id)
	return id, err
}
