// Package events is the transactional outbox. A domain change appends its
// events through the same transaction that makes the change, so a committed
// change always yields its event and a rolled-back one never does. The
// webhook dispatcher reads the outbox; this package only writes it.
package events

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/contactbook/contactbook/internal/postgres"
)

// Event types a webhook can subscribe to.
const (
	ContactCreated = "contact.created"
	ContactUpdated = "contact.updated"
	ContactDeleted = "contact.deleted"
	MemberJoined   = "member.joined"
	MemberRemoved  = "member.removed"
	BookCreated    = "book.created"
	BookDeleted    = "book.deleted"
)

// Types lists every event type, in the order the docs show them.
var Types = []string{ContactCreated, ContactUpdated, ContactDeleted, MemberJoined, MemberRemoved, BookCreated, BookDeleted}

// Known reports whether t is an event type.
func Known(t string) bool {
	for _, k := range Types {
		if k == t {
			return true
		}
	}
	return false
}

// Event is one thing that happened.
type Event struct {
	Type   string
	TeamID uuid.UUID
	BookID *uuid.UUID // nil for team-level events (member.*)
	Data   any        // marshalled as the payload's data
}

// Body is the webhook request body: built once, stored, re-sent as is.
type Body struct {
	Event     string          `json:"event"`
	Timestamp time.Time       `json:"timestamp"`
	TeamID    uuid.UUID       `json:"team_id"`
	BookID    *uuid.UUID      `json:"book_id"`
	Data      json.RawMessage `json:"data"`
}

// Append writes events to the outbox in one statement, whatever their
// number. db must be the transaction that makes the change.
func Append(ctx context.Context, db postgres.DB, now time.Time, evs ...Event) error {
	if len(evs) == 0 {
		return nil
	}
	now = now.UTC()
	// Ids go as pgtype.UUID: a uuid.UUID is encoded through its
	// driver.Valuer as text, which dominated a 10,000-event append.
	ids := make([]pgtype.UUID, len(evs))
	teams := make([]pgtype.UUID, len(evs))
	books := make([]pgtype.UUID, len(evs))
	types := make([]string, len(evs))
	bodies := make([][]byte, len(evs))
	for i, ev := range evs {
		data, err := json.Marshal(ev.Data)
		if err != nil {
			return fmt.Errorf("marshal %s event: %w", ev.Type, err)
		}
		body, err := json.Marshal(Body{Event: ev.Type, Timestamp: now, TeamID: ev.TeamID, BookID: ev.BookID, Data: data})
		if err != nil {
			return fmt.Errorf("marshal %s event: %w", ev.Type, err)
		}
		ids[i], teams[i], types[i], bodies[i] = pgtype.UUID{Bytes: uuid.New(), Valid: true}, pgtype.UUID{Bytes: ev.TeamID, Valid: true}, ev.Type, body
		if ev.BookID != nil {
			books[i] = pgtype.UUID{Bytes: *ev.BookID, Valid: true}
		}
	}
	_, err := db.Exec(ctx, `
		INSERT INTO events (id, team_id, book_id, type, body, occurred_at)
		SELECT id, team_id, book_id, type, body, $6
		FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::text[], $5::bytea[])
		     AS e(id, team_id, book_id, type, body)`,
		ids, teams, books, types, bodies, now)
	if err != nil {
		return postgres.Translate(fmt.Errorf("append events: %w", err))
	}
	return nil
}
