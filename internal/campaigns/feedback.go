package campaigns

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/contactbook/contactbook/internal/events"
	"github.com/contactbook/contactbook/internal/postgres"
)

// Feedback is what delivery asks of the campaigns of a book while it
// applies the provider's events: delivery cannot import this package
// (this package imports delivery), so it declares the questions as an
// interface and internal/app hands it a Feedback. It needs nothing but
// the database it is given.
type Feedback struct{ st store }

// NewFeedback returns the Feedback whose changes write their webhook
// events to outbox.
func NewFeedback(outbox *events.Outbox) Feedback { return Feedback{st: store{outbox: outbox}} }

// WebhookKey is the book's key that verifies signed provider events; ok
// is false for an unknown book, key "" when none is configured.
func (f Feedback) WebhookKey(ctx context.Context, db postgres.DB, bookID uuid.UUID) (key string, ok bool, err error) {
	return f.st.webhookKey(ctx, db, bookID)
}

// MarkEventsReceived records that a signed batch of events reached the
// book, for the settings' "events arriving" check.
func (f Feedback) MarkEventsReceived(ctx context.Context, db postgres.DB, bookID uuid.UUID, now time.Time) error {
	return f.st.markEventsReceived(ctx, db, bookID, now)
}

// RemoveFromCampaigns ends the contacts' active participations in the
// book's campaigns, as an unsubscribe from all does.
func (f Feedback) RemoveFromCampaigns(ctx context.Context, db postgres.DB, bookID uuid.UUID, contactIDs []uuid.UUID, now time.Time) error {
	return f.st.removeContactsFromCampaigns(ctx, db, bookID, contactIDs, now)
}
