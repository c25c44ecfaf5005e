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
	db            postgres.Pool
	sp            suppression.Suppressor
	campaigns     Campaigns
	transactional Transactional
	outbox        *events.Outbox
	now           func() time.Time
}

// TransactionalEvent is a provider event of a transactional email: it
// names the message (MessageID) or, failing that, the provider's id of it.
type TransactionalEvent struct {
	ID                string // the provider's event id
	Kind              string // as delivery_events stores kinds
	MessageID         uuid.UUID
	ProviderMessageID string
	Detail            string
	At                time.Time
}

// TransactionalApplied is what applying transactional events did: the
// events that named a message of the book (by id), the new ones (the rest were applied
// before) with the contact each message went to (uuid.Nil: none), and
// the first of each asked-for kind per message.
type TransactionalApplied struct {
	Named    []string
	New      []string
	Contacts []uuid.UUID
	Firsts   []TransactionalFirst
}

// TransactionalFirst is the first event of its kind the service heard of
// a message: what its webhook event reports.
type TransactionalFirst struct {
	Kind, Detail      string
	At                time.Time
	MessageID         uuid.UUID
	ContactID         *uuid.UUID
	Address           string
	ProviderMessageID *string
}

// Transactional is what applying events asks of package transactional,
// which owns the messages (transactional.Feedback implements it). firsts
// names the kinds whose first event per message is wanted back.
type Transactional interface {
	ApplyFeedback(ctx context.Context, db postgres.DB, bookID uuid.UUID, evs []TransactionalEvent, firsts []string, now time.Time) (TransactionalApplied, error)
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

// Deps are what the delivery feedback service works with.
type Deps struct {
	DB            postgres.Pool
	Campaigns     Campaigns
	Transactional Transactional
	Outbox        *events.Outbox
	Now           func() time.Time
}

// NewService returns the delivery feedback service on the clock Now
// (nil: time.Now), asking campaigns and transactional what concerns them and
// writing the webhook events of what it applies to the outbox (nil: none).
func NewService(d Deps) *Service {
	if d.Now == nil {
		d.Now = time.Now
	}
	return &Service{db: d.DB, sp: suppression.New(d.Now).WithOutbox(d.Outbox), campaigns: d.Campaigns,
		transactional: d.Transactional, outbox: d.Outbox, now: d.Now}
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
		var campaignEvents, txEvents []event
		for _, e := range batch.events {
			if e.campaign {
				campaignEvents = append(campaignEvents, e)
			} else {
				txEvents = append(txEvents, e)
			}
		}
		res, _, err := s.apply(ctx, tx, bookID, campaignEvents, txEvents, now)
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
