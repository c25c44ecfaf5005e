package campaigns

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/contactbook/contactbook/internal/contacts"
	"github.com/contactbook/contactbook/internal/events"
	"github.com/contactbook/contactbook/internal/postgres"
)

// unsubToken finds what an unsubscribe token stands for.
func (store) unsubToken(ctx context.Context, db postgres.DB, token string) (unsubToken, error) {
	stepID, participantID, secretHash, ok := parseToken(token)
	if !ok {
		return unsubToken{}, ErrUnknownToken
	}
	var t unsubToken
	err := db.QueryRow(ctx, `
		SELECT c.id, p.contact_id, cp.book_id, p.campaign_id, `+contactEmailSQL+`, `+contactNameSQL+`
		FROM campaign_step_completions c
		JOIN campaign_participants p ON p.id = c.participant_id
		JOIN campaigns cp ON cp.id = p.campaign_id
		JOIN contact_records ct ON ct.id = p.contact_id
		WHERE c.step_id = $1 AND c.participant_id = $2 AND c.token_hash = $3`, stepID, participantID, secretHash).
		Scan(&t.ID, &t.ContactID, &t.BookID, &t.CampaignID, &t.Email, &t.ContactName)
	if errors.Is(err, pgx.ErrNoRows) {
		return unsubToken{}, ErrUnknownToken
	}
	return t, err
}

// activeCampaignsOf lists the campaigns of the book the contact still
// takes part in, by name.
func (store) activeCampaignsOf(ctx context.Context, db postgres.DB, contactID, bookID uuid.UUID) ([]CampaignRef, error) {
	rows, err := db.Query(ctx, `
		SELECT c.id, c.name FROM campaign_participants p JOIN campaigns c ON c.id = p.campaign_id
		WHERE p.contact_id = $1 AND p.status = 'active' AND c.book_id = $2
		ORDER BY lower(c.name), c.id`, contactID, bookID)
	return collect(rows, err, func(r pgx.Row) (CampaignRef, error) {
		var c CampaignRef
		return c, r.Scan(&c.ID, &c.Name)
	})
}

// campaignNameInBook is the campaign's name, "" when the book has no such
// campaign.
func (store) campaignNameInBook(ctx context.Context, db postgres.DB, campaignID, bookID uuid.UUID) (string, error) {
	var name string
	err := db.QueryRow(ctx, `SELECT name FROM campaigns WHERE id = $1 AND book_id = $2`, campaignID, bookID).Scan(&name)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", nil
	}
	return name, err
}

// removeFromCampaigns ends the contact's active participations in the
// book's campaigns: in the one campaign named, or in all of them when
// campaignID is nil. It counts the participations it ended.
func (st store) removeFromCampaigns(ctx context.Context, db postgres.DB, contactID, bookID uuid.UUID, campaignID *uuid.UUID, now time.Time) (int64, error) {
	return st.removeWith(ctx, db, bookID, events.RemovedUnsubscribed, now, `
		UPDATE campaign_participants p SET status = 'removed', removed_at = $3
		FROM campaigns c
		WHERE c.id = p.campaign_id AND c.book_id = $2
		  AND p.contact_id = $1 AND p.status = 'active'
		  AND ($4::uuid IS NULL OR p.campaign_id = $4)`,
		contactID, bookID, now, campaignID)
}

// contactAddresses lists every email address the contact holds,
// lower-cased.
func (store) contactAddresses(ctx context.Context, db postgres.DB, contactID uuid.UUID) ([]string, error) {
	return contacts.Addresses(ctx, db, contactID)
}

// recordUnsubscribe adds the unsubscribe to the contact's interactions.
func (store) recordUnsubscribe(ctx context.Context, db postgres.DB, t unsubToken, scope UnsubscribeScope, campaignID *uuid.UUID, now time.Time) error {
	_, err := db.Exec(ctx, `
		INSERT INTO interactions (contact_id, kind, detail, occurred_at)
		SELECT id, 'campaign_unsubscribe', jsonb_build_object('scope', $2::text, 'campaign_id', $3::uuid, 'completion_id', $4::uuid), $5
		FROM contact_records WHERE id = $1 FOR KEY SHARE`,
		t.ContactID, scope, campaignID, t.ID, now)
	return err
}
