package events_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/contactbook/contactbook/internal/events"
	"github.com/contactbook/contactbook/internal/postgres"
	"github.com/contactbook/contactbook/internal/postgres/pgtest"
)

// TestOutboxWakesAfterCommit: the dispatcher is woken once per committed
// transaction that wrote events, after the commit (the events are then
// visible to it), and never for one that rolled back.
func TestOutboxWakesAfterCommit(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.NewPool(t)
	var team uuid.UUID
	if err := pool.QueryRow(ctx, `INSERT INTO teams (name) VALUES ('t') RETURNING id`).Scan(&team); err != nil {
		t.Fatal(err)
	}
	queued := func() int {
		var n int
		if err := pool.QueryRow(ctx, `SELECT count(*) FROM event_queue WHERE team_id = $1`, team).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	var wakes, seen []int
	outbox := events.NewOutbox(func() {
		wakes = append(wakes, 1)
		seen = append(seen, queued())
	})
	ev := events.Event{Type: events.MemberJoined, TeamID: team, Data: map[string]string{"user_id": "u"}}

	if err := postgres.InTx(ctx, pool, func(tx pgx.Tx) error {
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
	if err := postgres.InTx(ctx, pool, func(tx pgx.Tx) error {
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
