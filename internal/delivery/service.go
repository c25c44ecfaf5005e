package delivery

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/contactbook/contactbook/internal/apperr"
	"github.com/contactbook/contactbook/internal/events"
	"github.com/contactbook/contactbook/internal/postgres"
	"github.com/contactbook/contactbook/internal/suppression"
)

// MaxBatchBytes bounds an event batch (SendGrid posts up to a few
// thousand events, well under a megabyte).
const MaxBatchBytes = 5 << 20

// Service applies provider events and reports on them.
type Service struct {
	db        postgres.Pool
	sp        suppression.Suppressor
	campaigns Campaigns
	outbox    *events.Outbox
	now       func() time.Time
}

// Campaigns is what applying events asks of package campaigns, which owns
// the participants and the email settings but imports this package
// (campaigns.Feedback implements it). Each call runs in the db given.
type Campaigns interface {
	// WebhookKey is the book's key that verifies signed events; ok is
	// false for an unknown book, key "" when none is configured.
	WebhookKey(ctx context.Context, db postgres.DB, bookID uuid.UUID) (key string, ok bool, err error)
	// MarkEventsReceived records that a signed batch reached the book,
	// for the settings' "events arriving" check.
	MarkEventsReceived(ctx context.Context, db postgres.DB, bookID uuid.UUID, now time.Time) error
	// RemoveFromCampaigns ends the contacts' active participations in the
	// book's campaigns, as an unsubscribe from all does.
	RemoveFromCampaigns(ctx context.Context, db postgres.DB, bookID uuid.UUID, contactIDs []uuid.UUID, now time.Time) error
}

// NewService returns the delivery feedback service on the clock now
// (nil: time.Now), asking campaigns what concerns them and writing the
// webhook events of what it applies to outbox (nil: none).
func NewService(db postgres.Pool, campaigns Campaigns, outbox *events.Outbox, now func() time.Time) *Service {
	if now == nil {
		now = time.Now
	}
	return &Service{db: db, sp: suppression.New(now).WithOutbox(outbox), campaigns: campaigns, outbox: outbox, now: now}
}

// IngestResult is the answer to a batch: items received, events applied,
// events already applied before (or repeated in the batch), and items
// that name no email of the book or count nowhere.
type IngestResult struct {
	Received   int `json:"received"`
	Applied    int `json:"applied"`
	Duplicates int `json:"duplicates"`
	Ignored    int `json:"ignored"`
}

var (
	errNoBook    = apperr.NotFoundf("Book not found.")
	errNoKey     = apperr.Forbiddenf("No event webhook public key is configured for this book.")
	errSignature = apperr.New(apperr.Unauthorized, "The event batch signature is missing, wrong or too old.")
)

// Ingest verifies and applies one Event Webhook batch for the book. It
// returns only once the batch is committed: the provider resends what it
// did not see acknowledged, so an acknowledged batch is never lost and a
// refused one changes nothing.
func (s *Service) Ingest(ctx context.Context, bookID uuid.UUID, signature, timestamp string, body []byte) (IngestResult, error) {
	b64, ok, err := s.campaigns.WebhookKey(ctx, s.db, bookID)
	switch {
	case err != nil:
		return IngestResult{}, err
	case !ok:
		return IngestResult{}, errNoBook
	case b64 == "":
		return IngestResult{}, errNoKey
	}
	key, err := ParsePublicKey(b64)
	if err != nil {
		// Saved keys are checked; one that no longer parses verifies nothing.
		return IngestResult{}, errSignature
	}
	now := s.now()
	if !verify(key, signature, timestamp, body, now) {
		return IngestResult{}, errSignature
	}
	if err := s.campaigns.MarkEventsReceived(ctx, s.db, bookID, now); err != nil {
		return IngestResult{}, err
	}
	batch, err := parseBatch(body, now)
	if err != nil {
		return IngestResult{}, err
	}
	out := IngestResult{Received: batch.received, Duplicates: batch.duplicates, Ignored: batch.ignored}
	if len(batch.events) == 0 {
		return out, nil
	}
	err = postgres.InTx(ctx, s.db, func(tx *postgres.Tx) error {
		if err := lockBook(ctx, tx, bookID); err != nil {
			return err
		}
		res, err := s.apply(ctx, tx, bookID, batch.events, now)
		if err != nil {
			return err
		}
		out.Applied = res.applied
		out.Duplicates += res.matched - res.applied
		out.Ignored += len(batch.events) - res.matched
		return s.suppress(ctx, tx, bookID, res, now)
	})
	if err != nil {
		return IngestResult{}, err
	}
	return out, nil
}

// suppress writes the suppressions the new events ask for, one call per
// reason, and takes the contacts out of the book's campaigns.
func (s *Service) suppress(ctx context.Context, tx *postgres.Tx, bookID uuid.UUID, res applied, now time.Time) error {
	if len(res.suppress) == 0 {
		return nil
	}
	byReason := map[suppression.Reason][]string{}
	var order []suppression.Reason
	for _, w := range res.suppress {
		r := suppression.Reason(w.reason)
		if _, ok := byReason[r]; !ok {
			order = append(order, r)
		}
		byReason[r] = append(byReason[r], w.email)
	}
	for _, r := range order {
		if _, err := s.sp.Suppress(ctx, tx, bookID, byReason[r], r, suppression.SourceProvider, nil); err != nil {
			return err
		}
	}
	return s.campaigns.RemoveFromCampaigns(ctx, tx, bookID, res.contactIDs, now)
}
