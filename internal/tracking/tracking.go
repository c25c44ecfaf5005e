// Package tracking keeps the product events a team's systems report of
// its contacts ("order.paid", "trial.started"): each is stored with its
// properties for EVENT_RETENTION, shown on the contact's timeline, read
// by the segment condition event, and may enter the contact into the
// campaigns that start on it (Entries). It is not the webhook outbox
// (package events), though each event is reported there as
// event.received.
package tracking

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/contactbook/contactbook/internal/access"
	"github.com/contactbook/contactbook/internal/apperr"
	"github.com/contactbook/contactbook/internal/auth"
	"github.com/contactbook/contactbook/internal/contacts"
	"github.com/contactbook/contactbook/internal/events"
	"github.com/contactbook/contactbook/internal/postgres"
)

// Event is one product event of a contact.
type Event struct {
	ID         uuid.UUID       `json:"id"`
	BookID     uuid.UUID       `json:"book_id"`
	ContactID  uuid.UUID       `json:"contact_id"`
	Name       string          `json:"name"`
	Properties json.RawMessage `json:"properties"`
	OccurredAt time.Time       `json:"occurred_at"`
	CreatedAt  time.Time       `json:"created_at"`
}

// Input is the body of a report.
type Input struct {
	Name       string          `json:"name"`
	Contact    *ContactRef     `json:"contact"`
	Properties json.RawMessage `json:"properties"`
	OccurredAt *time.Time      `json:"occurred_at"`
}

// ContactRef names the contact: by id or by an address it holds.
type ContactRef struct {
	ID    *uuid.UUID `json:"id"`
	Email *string    `json:"email"`
}

// Limits of an event.
const (
	MaxNameLen        = 100
	MaxPropertiesSize = 16 << 10
	MaxAhead          = 5 * time.Minute
	DefaultLimit      = 50
	MaxLimit          = 200
)

// Entries is what an event asks of package campaigns: the SQL test of
// whether a campaign starts on it (EntrySQL, asked with the event's
// insert), and to enter the contact into those campaigns, in the event's
// transaction (campaigns.Service).
type Entries interface {
	EntrySQL(bookExpr, nameExpr string) string
	EnterOnEvent(ctx context.Context, tx *postgres.Tx, e EntryEvent) error
}

// EntryEvent is what a campaign entered by an event learns of it.
type EntryEvent struct {
	ID         uuid.UUID
	BookID     uuid.UUID
	ContactID  uuid.UUID
	Name       string
	Properties json.RawMessage
}

// Service records and lists events.
type Service struct {
	db      postgres.Pool
	entries Entries
	outbox  *events.Outbox
	now     func() time.Time
	log     *slog.Logger
}

// Deps are what the service needs.
type Deps struct {
	DB postgres.Pool
	// Entries enters contacts into the campaigns that start on an event
	// (nil: none do).
	Entries Entries
	// Outbox takes event.received for the webhooks that want it (nil:
	// none is written).
	Outbox *events.Outbox
	Now    func() time.Time
	Log    *slog.Logger
}

// NewService returns the service.
func NewService(d Deps) *Service {
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.Log == nil {
		d.Log = slog.New(slog.DiscardHandler)
	}
	return &Service{db: d.DB, entries: d.Entries, outbox: d.Outbox, now: d.Now, log: d.Log}
}

var (
	errContactNotFound = apperr.NotFoundf("Contact not found.")
	errNoSuchContact   = apperr.NotFoundf("`contact` names no contact of this book.")
	errBadCursor       = apperr.Invalidf("`cursor` is not valid: send back meta.next_cursor of the previous page as it was given.")
)

// CheckName reports whether name is an event name: 1 to 100 of a-z, 0-9
// and _ . : -.
func CheckName(field, name string) error {
	if len(name) == 0 || len(name) > MaxNameLen {
		return apperr.Invalidf("`%s` must be 1 to %d characters of a-z, 0-9 and _ . : -.", field, MaxNameLen)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == ':' || c == '-') {
			return apperr.Invalidf("`%s` must be 1 to %d characters of a-z, 0-9 and _ . : -.", field, MaxNameLen)
		}
	}
	return nil
}

// Record stores one event (member) and, in its transaction, writes
// event.received (when an active webhook wants it) and enters the contact
// into the campaigns that start on it.
func (s *Service) Record(ctx context.Context, sc access.Scope, in Input) (Event, error) {
	if err := sc.Require(ctx, auth.RoleMember); err != nil {
		return Event{}, err
	}
	now := s.now().UTC().Truncate(time.Microsecond)
	e, err := s.check(sc.Book.ID, in, now)
	if err != nil {
		return Event{}, err
	}
	if e.ContactID, err = s.contactOf(ctx, sc.Book.ID, in.Contact); err != nil {
		return Event{}, err
	}
	err = postgres.InTx(ctx, s.db, func(tx *postgres.Tx) error {
		// The insert also asks whether a webhook wants event.received and
		// whether a campaign starts on the event: one round trip for all.
		entry := "false"
		if s.entries != nil {
			entry = s.entries.EntrySQL("$2", "$4")
		}
		var wanted, enters bool
		if err := tx.QueryRow(ctx, `
			INSERT INTO tracked_events (id, book_id, contact_id, name, properties, occurred_at, created_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7)
			RETURNING `+events.WantedSQL("$8", "$9")+`, `+entry,
			e.ID, e.BookID, e.ContactID, e.Name, e.Properties, e.OccurredAt, e.CreatedAt, sc.Team, events.EventReceived).Scan(&wanted, &enters); err != nil {
			return err
		}
		if err := s.emit(ctx, tx, sc, e, wanted); err != nil {
			return err
		}
		if !enters {
			return nil
		}
		return s.entries.EnterOnEvent(ctx, tx, EntryEvent{ID: e.ID, BookID: e.BookID, ContactID: e.ContactID, Name: e.Name, Properties: e.Properties})
	})
	if err != nil {
		return Event{}, err
	}
	return e, nil
}

// emit writes event.received with the event as its data, when an active
// webhook of the team subscribes to it (wanted).
func (s *Service) emit(ctx context.Context, tx *postgres.Tx, sc access.Scope, e Event, wanted bool) error {
	if s.outbox == nil || !wanted {
		return nil
	}
	book := e.BookID
	return s.outbox.Append(ctx, tx, e.CreatedAt, events.Event{Type: events.EventReceived, TeamID: sc.Team, BookID: &book, Data: e})
}

func (s *Service) check(bookID uuid.UUID, in Input, now time.Time) (Event, error) {
	e := Event{BookID: bookID, Name: in.Name, OccurredAt: now, CreatedAt: now, Properties: json.RawMessage(`{}`)}
	if err := CheckName("name", in.Name); err != nil {
		return e, err
	}
	if in.Contact == nil || (in.Contact.ID == nil) == (in.Contact.Email == nil) {
		return e, apperr.Invalidf("`contact` must be {\"id\": ...} or {\"email\": ...}.")
	}
	if p := bytes.TrimSpace(in.Properties); len(p) > 0 && string(p) != "null" {
		if p[0] != '{' {
			return e, apperr.Invalidf("`properties` must be a JSON object.")
		}
		if len(p) > MaxPropertiesSize {
			return e, apperr.Invalidf("`properties` may be at most %d KB of JSON.", MaxPropertiesSize>>10)
		}
		e.Properties = p
	}
	if in.OccurredAt != nil {
		at := in.OccurredAt.UTC().Truncate(time.Microsecond)
		if at.After(now.Add(MaxAhead)) {
			return e, apperr.Invalidf("`occurred_at` may be at most 5 minutes ahead of the service's clock.")
		}
		e.OccurredAt = at
	}
	e.ID = newID(now)
	return e, nil
}

// contactOf resolves the event's contact in the book.
func (s *Service) contactOf(ctx context.Context, bookID uuid.UUID, ref *ContactRef) (uuid.UUID, error) {
	if ref.Email != nil {
		addr := strings.TrimSpace(*ref.Email)
		if addr == "" || len(addr) > 254 {
			return uuid.Nil, apperr.Invalidf("`contact.email` must be an email address.")
		}
		id, found, err := contacts.ByAddress(ctx, s.db, bookID, addr)
		if err != nil {
			return uuid.Nil, err
		}
		if !found {
			return uuid.Nil, errNoSuchContact
		}
		return id, nil
	}
	var id uuid.UUID
	err := s.db.QueryRow(ctx, `SELECT id FROM contact_records WHERE id = $1 AND book_id = $2`, *ref.ID, bookID).Scan(&id)
	if errors.Is(err, pgx.ErrNoRows) {
		return uuid.Nil, errNoSuchContact
	}
	return id, err
}

// cursor is the place of the last event of a page.
type cursor struct {
	At time.Time `json:"t"`
	ID uuid.UUID `json:"i"`
}

func (c cursor) encode() string {
	b, _ := json.Marshal(c)
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodeCursor(s string) (cursor, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	var c cursor
	if err != nil || json.Unmarshal(b, &c) != nil || c.ID == uuid.Nil {
		return cursor{}, errBadCursor
	}
	return c, nil
}

// Filter narrows a contact's events.
type Filter struct {
	Name   string
	Limit  int
	Cursor string
}

// OfContact pages a contact's events, newest occurred_at first (viewer
// of its team); next is the following page's cursor, "" on the last.
func (s *Service) OfContact(ctx context.Context, actor *auth.Actor, contactID uuid.UUID, f Filter) (items []Event, next string, err error) {
	var teamID uuid.UUID
	err = s.db.QueryRow(ctx, `SELECT b.team_id FROM contact_records ct JOIN book_teams b ON b.book_id = ct.book_id WHERE ct.id = $1`,
		contactID).Scan(&teamID)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, "", errContactNotFound
	}
	if err != nil {
		return nil, "", err
	}
	if err := actor.Require(ctx, teamID, auth.RoleViewer, errContactNotFound); err != nil {
		return nil, "", err
	}
	if f.Name != "" {
		if err := CheckName("name", f.Name); err != nil {
			return nil, "", err
		}
	}
	limit := f.Limit
	if limit == 0 {
		limit = DefaultLimit
	}
	args := pgx.NamedArgs{"contact": contactID, "limit": limit + 1}
	where := `contact_id = @contact`
	if f.Name != "" {
		where += ` AND name = @name`
		args["name"] = f.Name
	}
	if f.Cursor != "" {
		c, err := decodeCursor(f.Cursor)
		if err != nil {
			return nil, "", err
		}
		where += ` AND (occurred_at, id) < (@at, @id)`
		args["at"], args["id"] = c.At, c.ID
	}
	rows, err := s.db.Query(ctx, `SELECT id, book_id, contact_id, name, properties, occurred_at, created_at
		FROM tracked_events WHERE `+where+` ORDER BY occurred_at DESC, id DESC LIMIT @limit`, args)
	if err != nil {
		return nil, "", err
	}
	items, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (Event, error) {
		var e Event
		err := r.Scan(&e.ID, &e.BookID, &e.ContactID, &e.Name, &e.Properties, &e.OccurredAt, &e.CreatedAt)
		return e, err
	})
	if err != nil {
		return nil, "", err
	}
	if len(items) > limit {
		items = items[:limit]
		last := items[limit-1]
		next = cursor{At: last.OccurredAt, ID: last.ID}.encode()
	}
	return items, next, nil
}
