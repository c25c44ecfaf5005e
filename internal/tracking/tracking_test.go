package tracking

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/contactbook/contactbook/internal/postgres/pgtest"
)

func TestCheckName(t *testing.T) {
	t.Parallel()
	for _, ok := range []string{"order.paid", "a", "trial:started-2_x", "z"} {
		if err := CheckName("name", ok); err != nil {
			t.Errorf("%q refused: %v", ok, err)
		}
	}
	long := make([]byte, 101)
	for i := range long {
		long[i] = 'a'
	}
	for _, bad := range []string{"", "Order", "a b", "é", string(long), "a/b"} {
		if CheckName("name", bad) == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// The prune reads an event's age from its id: ids of the service's clock
// sort by time, and everything received before the window goes.
func TestPruneByTimeOrderedIDs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := pgtest.Setup(t).DB
	var book, contact uuid.UUID
	if err := db.QueryRow(ctx, `WITH t AS (INSERT INTO teams (name) VALUES ('T') RETURNING id)
		INSERT INTO books (team_id, name, slug) SELECT id, 'B', 'b' FROM t RETURNING id`).Scan(&book); err != nil {
		t.Fatal(err)
	}
	contact = uuid.New()
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	for _, age := range []time.Duration{100 * time.Hour, 73 * time.Hour, 71 * time.Hour, time.Minute} {
		at := now.Add(-age)
		if _, err := db.Exec(ctx, `INSERT INTO tracked_events (id, book_id, contact_id, name, occurred_at, created_at)
			VALUES ($1, $2, $3, 'e', $4, $4)`, newID(at), book, contact, at); err != nil {
			t.Fatal(err)
		}
	}
	if a, b := newID(now.Add(-time.Hour)), newID(now); a.String() >= b.String() {
		t.Fatalf("ids do not sort by time: %s >= %s", a, b)
	}
	n, err := NewRetention(db, 72*time.Hour, func() time.Time { return now }, nil).Prune(ctx)
	if err != nil || n != 2 {
		t.Fatalf("Prune = %d, %v; want 2", n, err)
	}
	if n, _ := NewRetention(db, 0, func() time.Time { return now }, nil).Prune(ctx); n != 0 {
		t.Fatalf("a retention of 0 pruned %d", n)
	}
}
