package events_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/contactbook/contactbook/internal/events"
	"github.com/contactbook/contactbook/internal/postgres"
	"github.com/contactbook/contactbook/internal/postgres/pgtest"
)

// TestOutboxWakesAfterCommit: the dispatcher is woken once per committed
// transaction that wrote events, after the commit (the events are then
// visible to it), and never for one that rolled back.
func TestOutboxWakesAfterCommit(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Setup(t).Pool
	team := newTeam(t, pool)
	queued := func() int {
		var n int
		if err := pool.QueryRow(ctx, `SELECT count(*) FROM event_queue WHERE team_id = $1`, team).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	subscribe(t, pool, team, events.MemberJoined)
	var wakes, seen []int
	outbox := events.NewOutbox(func() {
		wakes = append(wakes, 1)
		seen = append(seen, queued())
	})
	ev := events.Event{Type: events.MemberJoined, TeamID: team, Data: map[string]string{"user_id": "u"}}

	if err := postgres.InTx(ctx, pool, func(tx *postgres.Tx) error {
		if err := outbox.Append(ctx, tx, time.Now(), ev, ev); err != nil {
			return err
		}
		if len(wakes) != 0 {
			t.Error("woken before the commit")
		}
		return outbox.Append(ctx, tx, time.Now(), ev)
	}); err != nil {
		t.Fatal(err)
	}
	if len(wakes) != 2 || seen[0] != 3 {
		t.Fatalf("after a commit of 3 events in two appends: %d wakes, %v events queued when woken; want 2 wakes seeing 3", len(wakes), seen)
	}

	rollback := errors.New("rollback")
	if err := postgres.InTx(ctx, pool, func(tx *postgres.Tx) error {
		if err := outbox.Append(ctx, tx, time.Now(), ev); err != nil {
			return err
		}
		return rollback
	}); !errors.Is(err, rollback) {
		t.Fatal(err)
	}
	if len(wakes) != 2 || queued() != 3 {
		t.Fatalf("after a rollback: %d wakes (want 2), %d events queued (want 3)", len(wakes), queued())
	}
}

// TestAppendFewAndMany: both ways of writing (one statement for a few
// events, COPY for many) store the same bodies and queue every event once.
func TestAppendFewAndMany(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Setup(t).Pool
	team := newTeam(t, pool)
	subscribe(t, pool, team, events.ContactUpdated, events.MemberJoined)
	book := uuid.New()
	at := time.Date(2026, 11, 22, 9, 40, 0, 123000000, time.UTC)
	for _, n := range []int{1, 3, 40} {
		evs := make([]events.Event, n)
		for i := range evs {
			evs[i] = events.Event{Type: events.ContactUpdated, TeamID: team, BookID: &book, Data: map[string]int{"n": i}}
			if i%2 == 1 {
				evs[i] = events.Event{Type: events.MemberJoined, TeamID: team, Data: map[string]int{"n": i}}
			}
		}
		if err := postgres.InTx(ctx, pool, func(tx *postgres.Tx) error {
			_, err := events.Append(ctx, tx, at, evs...)
			return err
		}); err != nil {
			t.Fatalf("%d events: %v", n, err)
		}
		rows, err := pool.Query(ctx, `
			SELECT e.type, e.book_id, e.body, e.occurred_at, q.type
			FROM events e JOIN event_queue q ON q.event_id = e.id AND q.team_id = e.team_id AND q.occurred_at = e.occurred_at
			WHERE e.team_id = $1`, team)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[int]bool{}
		for rows.Next() {
			var (
				typ, qtype string
				bookID     *uuid.UUID
				body       []byte
				occurred   time.Time
			)
			if err := rows.Scan(&typ, &bookID, &body, &occurred, &qtype); err != nil {
				t.Fatal(err)
			}
			var b struct {
				Event     string     `json:"event"`
				Timestamp time.Time  `json:"timestamp"`
				TeamID    uuid.UUID  `json:"team_id"`
				BookID    *uuid.UUID `json:"book_id"`
				Data      struct{ N int }
			}
			if err := json.Unmarshal(body, &b); err != nil {
				t.Fatalf("body %s: %v", body, err)
			}
			wantBook := b.Data.N%2 == 0
			if b.Event != typ || qtype != typ || !b.Timestamp.Equal(at) || !occurred.Equal(at) || b.TeamID != team ||
				(bookID != nil) != wantBook || (b.BookID != nil) != wantBook || (wantBook && (*bookID != book || *b.BookID != book)) {
				t.Errorf("%d events: row %s %v %s %v does not match its event", n, typ, bookID, body, occurred)
			}
			seen[b.Data.N] = true
		}
		if rows.Err() != nil {
			t.Fatal(rows.Err())
		}
		if len(seen) != n {
			t.Fatalf("%d events appended, %d found with their queue rows", n, len(seen))
		}
		if _, err := pool.Exec(ctx, `DELETE FROM event_queue WHERE team_id = $1`, team); err != nil {
			t.Fatal(err)
		}
		if _, err := pool.Exec(ctx, `DELETE FROM events WHERE team_id = $1`, team); err != nil {
			t.Fatal(err)
		}
	}
}
