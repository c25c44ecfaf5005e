package billing

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/contactbook/contactbook/internal/postgres"
)

// store is the billing SQL: the record of provider events handled.
type store struct{}

// claimEvent records the event id as handled and reports whether this
// call was the first. A concurrent delivery of the same event waits on the
// primary key until the first transaction ends, then finds it taken.
func (store) claimEvent(ctx context.Context, db postgres.DB, id, typ string, created, now time.Time) (bool, error) {
	tag, err := db.Exec(ctx, `
		INSERT INTO billing_events (event_id, type, outcome, created_at, processed_at)
		VALUES ($1, $2, 'processing', $3, $4)
		ON CONFLICT (event_id) DO NOTHING`, id, typ, created, now)
	if err != nil {
		return false, err
	}
	return tag.RowsAffected() == 1, nil
}

// setOutcome stores what handling the event did, in the same transaction
// as the change itself.
func (store) setOutcome(ctx context.Context, db postgres.DB, id, outcome string, teamID *uuid.UUID) error {
	_, err := db.Exec(ctx, `UPDATE billing_events SET outcome = $2, team_id = $3 WHERE event_id = $1`, id, outcome, teamID)
	return err
}
