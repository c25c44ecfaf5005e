package webhooks_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/contactbook/contactbook/internal/postgres/pgtest"
	"github.com/contactbook/contactbook/internal/webhooks"
)

// eventID is a UUIDv7 of the millisecond at, as events.Append makes them.
func eventID(t *testing.T, at time.Time) uuid.UUID {
	t.Helper()
	id, err := uuid.NewV7()
	if err != nil {
		t.Fatal(err)
	}
	ms := at.UnixMilli()
	for i := range 6 {
		id[i] = byte(ms >> (8 * (5 - i)))
	}
	return id
}

// TestRetentionPrunesOldHistory: events older than the retention go with
// their finished deliveries, and old log rows go; an old event still
// queued for fan-out or with a delivery pending stays, as does everything
// recent.
func TestRetentionPrunesOldHistory(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.Setup(t).Pool
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	old, recent := now.Add(-48*time.Hour), now.Add(-time.Hour)

	// Rows written directly: retention runs on a bare database here, and
	// its rules are about the ages and states of rows the API cannot date.
	team := bareTeam(t, pool)
	var hook uuid.UUID
	if err := pool.QueryRow(ctx, `INSERT INTO webhooks (team_id, url, events, secret) VALUES ($1, 'https://example.com/h', '{contact.created}', 's') RETURNING id`, team).
		Scan(&hook); err != nil {
		t.Fatal(err)
	}
	event := func(at time.Time, queued bool, delivery string) uuid.UUID {
		id := eventID(t, at)
		if _, err := pool.Exec(ctx, `INSERT INTO events (id, team_id, type, body, occurred_at) VALUES ($1, $2, 'contact.created', '{}', $3)`, id, team, at); err != nil {
			t.Fatal(err)
		}
		if queued {
			if _, err := pool.Exec(ctx, `INSERT INTO event_queue (event_id, team_id, type, occurred_at) VALUES ($1, $2, 'contact.created', $3)`, id, team, at); err != nil {
				t.Fatal(err)
			}
		}
		if delivery != "" {
			if _, err := pool.Exec(ctx, `INSERT INTO webhook_deliveries (event_id, webhook_id, status, next_attempt_at) VALUES ($1, $2, $3, $4)`, id, hook, delivery, at); err != nil {
				t.Fatal(err)
			}
			if _, err := pool.Exec(ctx, `
				INSERT INTO webhook_attempts (delivery_id, webhook_id, event_id, event_type, attempt, duration_ms, success, created_at)
				SELECT d.id, $2, $1, 'contact.created', 1, 5, true, $3 FROM webhook_deliveries d WHERE d.event_id = $1`, id, hook, at); err != nil {
				t.Fatal(err)
			}
		}
		return id
	}
	gone := event(old, false, "succeeded")
	goneToo := event(old, false, "")
	queued := event(old, true, "")
	pending := event(old, false, "pending")
	fresh := event(recent, false, "failed")

	r := webhooks.NewRetention(pool, 24*time.Hour, func() time.Time { return now }, nil)
	res, err := r.Prune(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// The pending delivery's attempt is old too: the log is pruned by age.
	if res.Events != 2 || res.Attempts != 2 || res.Skipped {
		t.Errorf("pruned %+v, want 2 events and 2 attempts", res)
	}
	for id, want := range map[uuid.UUID]bool{gone: false, goneToo: false, queued: true, pending: true, fresh: true} {
		var n int
		if err := pool.QueryRow(ctx, `SELECT count(*) FROM events WHERE id = $1`, id).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if (n == 1) != want {
			t.Errorf("event %s: present %v, want %v", id, n == 1, want)
		}
	}
	var deliveries, attempts int
	if err := pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM webhook_deliveries), (SELECT count(*) FROM webhook_attempts)`).Scan(&deliveries, &attempts); err != nil {
		t.Fatal(err)
	}
	if deliveries != 2 || attempts != 1 {
		t.Errorf("left %d deliveries (want 2: pending and recent) and %d attempts (want 1: recent)", deliveries, attempts)
	}
	if again, err := r.Prune(ctx); err != nil || again.Events != 0 || again.Attempts != 0 {
		t.Errorf("second prune: %+v, %v; want nothing left to prune", again, err)
	}
}

// TestRetentionBatchesAndOneAtATime: more events than one batch all go;
// an instance finding another pruning skips the round.
func TestRetentionBatchesAndOneAtATime(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.Setup(t).Pool
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	team := bareTeam(t, pool)
	// 12,000 events of two days ago with UUIDv7 ids of that millisecond.
	oldMs := now.Add(-48 * time.Hour).UnixMilli()
	if _, err := pool.Exec(ctx, `
		INSERT INTO events (id, team_id, type, body, occurred_at)
		SELECT (substr(h, 1, 8) || '-' || substr(h, 9, 4) || '-7000-8000-' || lpad(to_hex(g), 12, '0'))::uuid,
		       $1, 'contact.created', '{}', $3
		FROM generate_series(1, 12000) g, lpad(to_hex($2::bigint), 12, '0') h`, team, oldMs, now.Add(-48*time.Hour)); err != nil {
		t.Fatal(err)
	}
	r := webhooks.NewRetention(pool, 24*time.Hour, func() time.Time { return now }, nil)

	other, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.Exec(ctx, `SELECT pg_advisory_lock(7302, 1)`); err != nil {
		t.Fatal(err)
	}
	if res, err := r.Prune(ctx); err != nil || !res.Skipped || res.Events != 0 {
		t.Errorf("while another instance prunes: %+v, %v; want skipped", res, err)
	}
	if _, err := other.Exec(ctx, `SELECT pg_advisory_unlock(7302, 1)`); err != nil {
		t.Fatal(err)
	}
	other.Release()

	res, err := r.Prune(ctx)
	if err != nil || res.Events != 12000 {
		t.Fatalf("pruned %+v, %v; want 12000 events", res, err)
	}
	var left int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM events`).Scan(&left); err != nil || left != 0 {
		t.Fatalf("%d events left (%v)", left, err)
	}
}

// bareTeam inserts a team row for tests that run on a bare database.
func bareTeam(t *testing.T, pool *pgxpool.Pool) uuid.UUID {
	t.Helper()
	var team uuid.UUID
	if err := pool.QueryRow(context.Background(), `INSERT INTO teams (name) VALUES ('t') RETURNING id`).Scan(&team); err != nil {
		t.Fatal(err)
	}
	return team
}
