// Package events is the transactional outbox. A domain change appends its
// events through the same transaction that makes the change, so a committed
// change always yields its event and a rolled-back one never does. The
// webhook dispatcher reads the outbox; this package only writes it.
package events

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

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

// WebhookTest is the event of a webhook's test send. No change emits it
// and no webhook subscribes to it: it is addressed to one webhook (Write).
const WebhookTest = "webhook.test"

// whenWanted are the event types written only when a webhook of the team
// subscribes to them (Outbox.Wanted): contact changes and emails come by
// the thousand, and their bodies were most of the cost of a bulk change.
// The others are rare and always written.
var whenWanted = typeNames(func(t TypeInfo) bool { return t.WhenWanted })

// Types lists every event type, in the order the docs show them (the
// catalogue's).
var Types = typeNames(func(TypeInfo) bool { return true })

// DeliveredTypes lists the type of every event a webhook may receive: the
// subscribable ones and the test send's.
var DeliveredTypes = append(slices.Clip(Types), WebhookTest)

// Known reports whether t is an event type.
func Known(t string) bool {
	return slices.Contains(Types, t)
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

// envelope builds the Body around already-encoded data. Marshalling Body
// itself would re-scan and compact data, which doubled the cost of a
// 10,000-event bulk change; the bytes are the same either way (tested).
func envelope(ev Event, at time.Time, data []byte) []byte {
	book := []byte("null")
	if ev.BookID != nil {
		book = []byte(`"` + ev.BookID.String() + `"`)
	}
	typ, _ := json.Marshal(ev.Type)
	ts, _ := at.MarshalJSON()
	out := make([]byte, 0, len(data)+160)
	out = append(out, `{"event":`...)
	out = append(out, typ...)
	out = append(out, `,"timestamp":`...)
	out = append(out, ts...)
	out = append(out, `,"team_id":"`...)
	out = append(out, ev.TeamID.String()...)
	out = append(out, `","book_id":`...)
	out = append(out, book...)
	out = append(out, `,"data":`...)
	out = append(out, data...)
	return append(out, '}')
}

// Outbox is how services write events: Append, then once the transaction
// has committed, a wake-up of this instance's webhook dispatcher. The wake
// is in-process on purpose: a NOTIFY from the transaction (what the first
// version did, by trigger) takes a database-wide lock at commit and holds
// it through the commit's WAL flush, so every event-writing transaction of
// every team queued behind every other (about 1,250 creates/s in one book
// at most). Events written by another instance are dispatched by that
// instance; ones left by an instance that died before dispatching are
// found by every dispatcher's poll.
//
// Contact events are written only when a webhook of their team subscribes
// to them (see Wanted): an event no webhook wants would be fanned out to
// nobody.
type Outbox struct {
	wake func()
}

// NewOutbox returns an outbox that calls wake after each commit that wrote
// events; wake must not block.
func NewOutbox(wake func()) *Outbox { return &Outbox{wake: wake} }

// Append writes evs (contact events only when a webhook wants them) in
// tx, the transaction that makes the change (postgres.InTx), and wakes the
// dispatcher once it has committed. Taking a *postgres.Tx rather than any
// connection makes a write outside such a transaction (which the
// dispatcher would find only at its next poll, up to a second later) a
// compile error.
func (o *Outbox) Append(ctx context.Context, tx *postgres.Tx, now time.Time, evs ...Event) error {
	n, err := Append(ctx, tx, now, evs...)
	if err != nil {
		return err
	}
	if n > 0 && o.wake != nil {
		tx.AfterCommit(o.wake)
	}
	return nil
}

// Wanted reports whether an active webhook of the team subscribes to the
// event type, seen from db, the transaction of the change, which from then
// on holds the team's webhooks still (migration 00014): a webhook created
// or changed meanwhile commits after the change. A change that would emit
// many events asks first and skips building them when nobody wants them.
func (o *Outbox) Wanted(ctx context.Context, db postgres.DB, teamID uuid.UUID, typ string) (bool, error) {
	var yes bool
	err := db.QueryRow(ctx, `SELECT events_wanted($1, $2)`, teamID, typ).Scan(&yes)
	return yes, err
}

// WantedOf reports, in one statement, which of the event types an active
// webhook of the team subscribes to, seen from db as Wanted does. A
// change that may emit several types (a chunk of campaign emails: sent
// or failed, a participant completed) asks once for all of them.
func (o *Outbox) WantedOf(ctx context.Context, db postgres.DB, teamID uuid.UUID, types ...string) (map[string]bool, error) {
	out := make(map[string]bool, len(types))
	rows, _ := db.Query(ctx, `SELECT t FROM unnest($2::text[]) AS t WHERE events_wanted($1, t)`, teamID, types)
	var t string
	_, err := pgx.ForEachRow(rows, []any{&t}, func() error {
		out[t] = true
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("events wanted: %w", err)
	}
	return out, nil
}

// AppendIn is Append for a change whose caller holds a postgres.DB: in a
// *postgres.Tx it wakes the dispatcher after the commit; in anything else
// (a test's connection) the dispatcher's poll finds the events.
func (o *Outbox) AppendIn(ctx context.Context, db postgres.DB, now time.Time, evs ...Event) error {
	if o == nil || len(evs) == 0 {
		return nil
	}
	if tx, ok := db.(*postgres.Tx); ok {
		return o.Append(ctx, tx, now, evs...)
	}
	_, err := Append(ctx, db, now, evs...)
	return err
}

// Queue adds to b the statement that appends evs (at most fewEvents;
// contact events only when wanted), for a batch sent outside an explicit
// transaction: PostgreSQL runs a batch as one implicit transaction, so the
// change and its events still commit together, in one round trip. Call
// the returned function once the batch has succeeded; it wakes the
// dispatcher when events were written.
func (o *Outbox) Queue(b *pgx.Batch, now time.Time, evs ...Event) (committed func(), err error) {
	if len(evs) > fewEvents {
		return nil, fmt.Errorf("queue %d events: at most %d go in a batch", len(evs), fewEvents)
	}
	sql, args, err := fewStatement(now.UTC(), evs)
	if err != nil {
		return nil, err
	}
	var written int64
	b.Queue(sql, args...).Exec(func(ct pgconn.CommandTag) error {
		written = ct.RowsAffected()
		return nil
	})
	return func() {
		if written > 0 && o.wake != nil {
			o.wake()
		}
	}, nil
}

// Append writes events to the outbox (contact events only when a webhook
// wants them, see whenWanted), and queues them for the webhook
// dispatcher: a few in one statement, many in two COPY statements. db must be the transaction that makes the change. It
// returns how many were written and wakes no dispatcher: services use an
// Outbox; tests and tools that write events directly rely on the poll.
func Append(ctx context.Context, db postgres.DB, now time.Time, evs ...Event) (int, error) {
	switch {
	case len(evs) == 0:
		return 0, nil
	case len(evs) <= fewEvents:
		return insertFew(ctx, db, now.UTC(), evs)
	default:
		return copyMany(ctx, db, now.UTC(), evs)
	}
}

// Write stores one event without queueing it for fan-out and returns its
// id: its caller addresses it to a webhook itself (a test send).
func Write(ctx context.Context, db postgres.DB, now time.Time, ev Event) (uuid.UUID, error) {
	now = now.UTC()
	id, body, err := newRow(ev, now)
	if err != nil {
		return uuid.Nil, err
	}
	_, err = db.Exec(ctx, `INSERT INTO events (id, team_id, book_id, type, body, occurred_at) VALUES ($1, $2, $3, $4, $5, $6)`,
		id, ev.TeamID, ev.BookID, ev.Type, body, now)
	if err != nil {
		return uuid.Nil, fmt.Errorf("write %s event: %w", ev.Type, err)
	}
	return id, nil
}

// fewEvents is up to how many events go in one INSERT of both the events
// and their queue rows (one round trip: the common case of one contact
// changed) rather than two COPY statements.
const fewEvents = 16

// newRow gives an event its id and its stored body. Ids are time-ordered
// (UUIDv7), so they land at the right edge of the primary key: 10,000
// random ids cost about 40 ms more in index page visits and splits on a
// table of 600,000 events.
func newRow(ev Event, now time.Time) (uuid.UUID, []byte, error) {
	id, err := uuid.NewV7()
	if err != nil {
		return uuid.Nil, nil, fmt.Errorf("event id: %w", err)
	}
	data, err := json.Marshal(ev.Data)
	if err != nil {
		return uuid.Nil, nil, fmt.Errorf("marshal %s event: %w", ev.Type, err)
	}
	return id, envelope(ev, now, data), nil
}

// bodyBuffer builds stored bodies, as newRow does, into one buffer that
// each body reuses: valid until the next.
type bodyBuffer struct {
	buf bytes.Buffer
	enc *json.Encoder
	// at and ts are the last timestamp and its JSON: a batch's events
	// share one.
	at time.Time
	ts []byte
}

// body is the stored body of ev, as envelope builds it.
func (b *bodyBuffer) body(ev Event, at time.Time) ([]byte, error) {
	if b.enc == nil {
		b.enc = json.NewEncoder(&b.buf)
	}
	b.buf.Reset()
	b.buf.WriteString(`{"event":`)
	if err := b.enc.Encode(ev.Type); err != nil {
		return nil, fmt.Errorf("marshal %s event: %w", ev.Type, err)
	}
	b.buf.Truncate(b.buf.Len() - 1) // Encode ends each value with a newline
	b.buf.WriteString(`,"timestamp":`)
	if b.ts == nil || !at.Equal(b.at) || at.Location() != b.at.Location() {
		b.ts, _ = at.MarshalJSON()
		b.at = at
	}
	b.buf.Write(b.ts)
	b.buf.WriteString(`,"team_id":"`)
	var id [36]byte
	encodeUUID(id[:], ev.TeamID)
	b.buf.Write(id[:])
	b.buf.WriteString(`","book_id":`)
	if ev.BookID != nil {
		b.buf.WriteByte('"')
		encodeUUID(id[:], *ev.BookID)
		b.buf.Write(id[:])
		b.buf.WriteByte('"')
	} else {
		b.buf.WriteString("null")
	}
	b.buf.WriteString(`,"data":`)
	if err := b.enc.Encode(ev.Data); err != nil {
		return nil, fmt.Errorf("marshal %s event: %w", ev.Type, err)
	}
	b.buf.Truncate(b.buf.Len() - 1)
	b.buf.WriteByte('}')
	return b.buf.Bytes(), nil
}

// encodeUUID writes id in its canonical text form into dst (36 bytes).
func encodeUUID(dst []byte, id uuid.UUID) {
	hex.Encode(dst[0:8], id[0:4])
	dst[8] = '-'
	hex.Encode(dst[9:13], id[4:6])
	dst[13] = '-'
	hex.Encode(dst[14:18], id[6:8])
	dst[18] = '-'
	hex.Encode(dst[19:23], id[8:10])
	dst[23] = '-'
	hex.Encode(dst[24:], id[10:])
}

// fewStatement is the one statement that appends a few events and their
// queue rows, leaving out contact events no webhook wants: events_wanted
// runs once per distinct team and type.
func fewStatement(now time.Time, evs []Event) (string, []any, error) {
	var (
		ids    = make([]uuid.UUID, len(evs))
		teams  = make([]uuid.UUID, len(evs))
		books  = make([]*uuid.UUID, len(evs))
		types  = make([]string, len(evs))
		bodies = make([][]byte, len(evs))
	)
	for i, ev := range evs {
		id, body, err := newRow(ev, now)
		if err != nil {
			return "", nil, err
		}
		ids[i], teams[i], books[i], types[i], bodies[i] = id, ev.TeamID, ev.BookID, ev.Type, body
	}
	return `
		WITH r AS (
			SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::text[], $5::bytea[]) AS r(id, team_id, book_id, type, body)
		), wanted AS (
			SELECT team_id, type FROM (SELECT DISTINCT team_id, type FROM r) k
			WHERE type <> ALL ($7::text[]) OR events_wanted(team_id, type)
		), e AS (
			INSERT INTO events (id, team_id, book_id, type, body, occurred_at)
			SELECT r.id, r.team_id, r.book_id, r.type, r.body, $6
			FROM r JOIN wanted w ON w.team_id = r.team_id AND w.type = r.type
			RETURNING id, team_id, type
		)
		INSERT INTO event_queue (event_id, team_id, type, occurred_at) SELECT id, team_id, type, $6 FROM e`,
		[]any{ids, teams, books, types, bodies, now, whenWanted}, nil
}

func insertFew(ctx context.Context, db postgres.DB, now time.Time, evs []Event) (int, error) {
	sql, args, err := fewStatement(now, evs)
	if err != nil {
		return 0, err
	}
	tag, err := db.Exec(ctx, sql, args...)
	if err != nil {
		return 0, fmt.Errorf("append events: %w", err)
	}
	return int(tag.RowsAffected()), nil
}

// wantedOf leaves out the contact events of evs that no webhook wants: one
// statement asks events_wanted for each distinct team and type.
func wantedOf(ctx context.Context, db postgres.DB, evs []Event) ([]Event, error) {
	type key struct {
		team uuid.UUID
		typ  string
	}
	seen := map[key]bool{}
	var teams []uuid.UUID
	var types []string
	for _, ev := range evs {
		k := key{ev.TeamID, ev.Type}
		if _, ok := seen[k]; !ok {
			seen[k] = false
			teams, types = append(teams, ev.TeamID), append(types, ev.Type)
		}
	}
	rows, _ := db.Query(ctx, `
		SELECT t, ty FROM unnest($1::uuid[], $2::text[]) AS k(t, ty)
		WHERE ty <> ALL ($3::text[]) OR events_wanted(t, ty)`, teams, types, whenWanted)
	var k key
	_, err := pgx.ForEachRow(rows, []any{&k.team, &k.typ}, func() error {
		seen[k] = true
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("events wanted: %w", err)
	}
	all := true
	for _, w := range seen {
		all = all && w
	}
	if all {
		return evs, nil // the common case: a batch's one team and type, wanted
	}
	out := evs[:0:0]
	for _, ev := range evs {
		if seen[key{ev.TeamID, ev.Type}] {
			out = append(out, ev)
		}
	}
	return out, nil
}

// copyMany is PostgreSQL's bulk path: a 10,000-event change costs two round
// trips and far less parsing than an INSERT of unnested arrays. Each row
// is encoded when pgx asks for it: pgx sends the rows in chunks from a
// goroutine, so encoding the next chunk overlaps PostgreSQL's ingest of
// the last one instead of preceding all of it.
func copyMany(ctx context.Context, db postgres.DB, now time.Time, evs []Event) (int, error) {
	evs, err := wantedOf(ctx, db, evs)
	if err != nil || len(evs) == 0 {
		return 0, err
	}
	i := -1
	row := make([]any, 6)
	ids := make([]uuid.UUID, len(evs))
	// COPY encodes each row before it asks for the next, so one buffer
	// serves every body.
	var bodies bodyBuffer
	src := pgx.CopyFromFunc(func() ([]any, error) {
		if i++; i == len(evs) {
			return nil, nil
		}
		ev := evs[i]
		id, err := uuid.NewV7()
		if err != nil {
			return nil, fmt.Errorf("event id: %w", err)
		}
		body, err := bodies.body(ev, now)
		if err != nil {
			return nil, err
		}
		ids[i] = id
		row[0], row[1], row[2], row[3], row[4], row[5] = id, ev.TeamID, ev.BookID, ev.Type, body, now
		return row, nil
	})
	_, err = db.CopyFrom(ctx, pgx.Identifier{"events"}, []string{"id", "team_id", "book_id", "type", "body", "occurred_at"}, src)
	if err != nil {
		return 0, fmt.Errorf("append events: %w", err)
	}
	_, err = db.CopyFrom(ctx, pgx.Identifier{"event_queue"}, []string{"event_id", "team_id", "type", "occurred_at"},
		pgx.CopyFromSlice(len(evs), func(i int) ([]any, error) {
			return []any{ids[i], evs[i].TeamID, evs[i].Type, now}, nil
		}))
	if err != nil {
		return 0, fmt.Errorf("queue events: %w", err)
	}
	return len(evs), nil
}
