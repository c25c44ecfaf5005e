// Package transactional sends the emails a team's own systems ask for one
// at a time (a receipt, a password link): a template of the book rendered
// for one recipient with the request's data beside the contact's fields,
// queued in PostgreSQL when the request is accepted and sent once, within
// seconds, by whichever instance claims it (Runner). It is not marketing:
// no unsubscribe footer and an unsubscribe does not stop it, but a
// bounce, complaint, dropped or manual suppression does. Provider
// feedback (ApplyFeedback, called by package delivery) stamps each
// message's delivered, opened, clicked and bounced times.
package transactional

import (
	"encoding/json"
	"time"

	"github.com/google/uuid"

	"github.com/contactbook/contactbook/internal/enum"
)

// Status is a message's state.
type Status string

// The states: queued until sent (or given up, failed); suppressed when its
// address was suppressed and nothing was sent.
const (
	StatusQueued     Status = "queued"
	StatusSent       Status = "sent"
	StatusFailed     Status = "failed"
	StatusSuppressed Status = "suppressed"
)

// Statuses is every status, in the order the API documents them.
var Statuses = []Status{StatusQueued, StatusSent, StatusFailed, StatusSuppressed}

// OneOf lists the statuses for the enum validation tag.
func (Status) OneOf() []string { return enum.Strings(Statuses) }

// Recipient is whom a message goes to: a contact of the book (ContactID)
// or any address.
type Recipient struct {
	ContactID *uuid.UUID `json:"contact_id"`
	Email     string     `json:"email"`
	Name      string     `json:"name"`
}

// Message is one transactional email.
type Message struct {
	ID                uuid.UUID  `json:"id"`
	BookID            uuid.UUID  `json:"book_id"`
	TemplateID        uuid.UUID  `json:"template_id"`
	To                Recipient  `json:"to"`
	Subject           string     `json:"subject"`
	Status            Status     `json:"status"`
	Detail            string     `json:"detail"`
	ProviderMessageID *string    `json:"provider_message_id"`
	CreatedAt         time.Time  `json:"created_at"`
	SentAt            *time.Time `json:"sent_at"`
	DeliveredAt       *time.Time `json:"delivered_at"`
	OpenedAt          *time.Time `json:"opened_at"`
	ClickedAt         *time.Time `json:"clicked_at"`
	BouncedAt         *time.Time `json:"bounced_at"`
}

// Detailed is a message with what the provider reported of it, oldest
// first (the answer of GET by id).
type Detailed struct {
	Message
	Events []Event `json:"events"`
}

// Event is one provider report of a message.
type Event struct {
	Kind       string    `json:"kind"`
	Detail     string    `json:"detail"`
	OccurredAt time.Time `json:"occurred_at"`
}

// SendInput is the body of a send.
type SendInput struct {
	TemplateID *uuid.UUID      `json:"template_id"`
	To         *RecipientInput `json:"to"`
	Data       json.RawMessage `json:"data"`
	ReplyTo    *string         `json:"reply_to"`
	Subject    *string         `json:"subject"`
}

// RecipientInput names the recipient: exactly one of contact_id and email.
type RecipientInput struct {
	ContactID *uuid.UUID `json:"contact_id"`
	Email     *string    `json:"email"`
	Name      *string    `json:"name"`
}

// Limits of a send.
const (
	MaxDataBytes   = 32 << 10
	MaxSubjectLen  = 998 // one header line
	MaxNameLen     = 200
	MaxAddressLen  = 254
	DefaultLimit   = 50
	MaxLimit       = 200
	maxDetailBytes = 1000
)

// Filter narrows a list of messages.
type Filter struct {
	Status     Status
	TemplateID *uuid.UUID
	Limit      int
	Cursor     string
}
