package campaigns

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/contactbook/contactbook/internal/events"
	"github.com/contactbook/contactbook/internal/postgres"
)

// webhookKey reads the key and whether the book exists in one statement:
// every provider batch asks it first.
func (store) webhookKey(ctx context.Context, db postgres.DB, bookID uuid.UUID) (key string, ok bool, err error) {
	err = db.QueryRow(ctx, `
		SELECT true, COALESCE((SELECT event_webhook_public_key FROM email_settings WHERE book_id = b.book_id), '')
		FROM book_teams b WHERE b.book_id = $1`, bookID).Scan(&ok, &key)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", false, nil
	}
	return key, ok, err
}

// markEventsReceived writes at most once a minute per book, so a stream
// of batches does not rewrite the row each time.
func (store) markEventsReceived(ctx context.Context, db postgres.DB, bookID uuid.UUID, now time.Time) error {
	_, err := db.Exec(ctx, `
		UPDATE email_settings SET events_received_at = $2
		WHERE book_id = $1 AND (events_received_at IS NULL OR events_received_at < $2::timestamptz - interval '1 minute')`, bookID, now)
	return err
}

func (st store) removeContactsFromCampaigns(ctx context.Context, db postgres.DB, bookID uuid.UUID, contactIDs []uuid.UUID, now time.Time) error {
	_, err := st.removeWith(ctx, db, bookID, events.RemovedSuppressed, now, `
		UPDATE campaign_participants p SET status = 'removed', removed_at = $3
		FROM campaigns c
		WHERE c.id = p.campaign_id AND c.book_id = $1
		  AND p.contact_id = ANY($2::uuid[]) AND p.status = 'active'`, bookID, contactIDs, now)
	return err
}
