package events_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/contactbook/contactbook/internal/events"
	"github.com/contactbook/contactbook/internal/postgres"
	"github.com/contactbook/contactbook/internal/postgres/pgtest"
)

// The fixtures of this package are rows written directly: its tests run the
// outbox on a bare database, without the service whose API would make them.

// subscribe gives the team an active webhook for the event types.
func subscribe(t *testing.T, pool *pgxpool.Pool, team uuid.UUID, types ...string) uuid.UUID {
	t.Helper()
	var id uuid.UUID
	if err := pool.QueryRow(context.Background(), `
		INSERT INTO webhooks (team_id, url, events, secret) VALUES ($1, 'https://hooks.example.com/in', $2, 'whsec_test')
		RETURNING id`, team, types).Scan(&id); err != nil {
		t.Fatal(err)
	}
	return id
}

func newTeam(t *testing.T, pool *pgxpool.Pool) uuid.UUID {
	t.Helper()
	var team uuid.UUID
	if err := pool.QueryRow(context.Background(), `INSERT INTO teams (name) VALUES ('t') RETURNING id`).Scan(&team); err != nil {
		t.Fatal(err)
	}
	return team
}

func countEvents(t *testing.T, pool *pgxpool.Pool, team uuid.UUID) (evs, queued int) {
	t.Helper()
	if err := pool.QueryRow(context.Background(), `
		SELECT (SELECT count(*) FROM events WHERE team_id = $1), (SELECT count(*) FROM event_queue WHERE team_id = $1)`,
		team).Scan(&evs, &queued); err != nil {
		t.Fatal(err)
	}
	return evs, queued
}

// TestContactEventsOnlyWhenWanted: contact events are written only when an
// active webhook of their team subscribes to their type, by both ways of
// writing (a few in one statement, many by COPY); other events always.
func TestContactEventsOnlyWhenWanted(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Setup(t).Pool
	team, other := newTeam(t, pool), newTeam(t, pool)
	book := uuid.New()
	var wakes int
	outbox := events.NewOutbox(func() { wakes++ })
	batch := func(typ string, n int) []events.Event {
		evs := make([]events.Event, n)
		for i := range evs {
			evs[i] = events.Event{Type: typ, TeamID: team, BookID: &book, Data: map[string]int{"n": i}}
		}
		return evs
	}
	appendAll := func(evs []events.Event) {
		t.Helper()
		if err := postgres.InTx(ctx, pool, func(tx *postgres.Tx) error { return outbox.Append(ctx, tx, time.Now(), evs...) }); err != nil {
			t.Fatal(err)
		}
	}

	// No webhook; one of another team; an inactive one; one for another type.
	subscribe(t, pool, other, events.ContactUpdated)
	off := subscribe(t, pool, team, events.ContactUpdated)
	if _, err := pool.Exec(ctx, `UPDATE webhooks SET active = false WHERE id = $1`, off); err != nil {
		t.Fatal(err)
	}
	subscribe(t, pool, team, events.ContactCreated)
	for _, n := range []int{1, 3, 100} {
		appendAll(batch(events.ContactUpdated, n))
	}
	if evs, queued := countEvents(t, pool, team); evs != 0 || queued != 0 || wakes != 0 {
		t.Fatalf("unwanted contact.updated: %d events, %d queued, %d wakes; want none", evs, queued, wakes)
	}
	// Team events do not depend on webhooks.
	appendAll([]events.Event{{Type: events.MemberJoined, TeamID: team, Data: map[string]string{"user_id": "u"}}})
	if evs, _ := countEvents(t, pool, team); evs != 1 || wakes != 1 {
		t.Fatalf("member.joined without a webhook: %d events, %d wakes; want 1 and 1", evs, wakes)
	}

	// Subscribed: every event of the change, in its transaction.
	subscribe(t, pool, team, events.ContactDeleted, events.ContactUpdated)
	for _, n := range []int{1, 3, 100} {
		appendAll(batch(events.ContactUpdated, n))
	}
	// A mixed change: the wanted contact events and the team events.
	appendAll(append(batch(events.ContactDeleted, 20), append(batch(events.ContactUpdated, 2), batch(events.MemberRemoved, 5)...)...))
	appendAll(batch(events.ContactCreated, 30))
	if evs, queued := countEvents(t, pool, team); evs != 1+104+27+30 || queued != evs || wakes != 6 {
		t.Fatalf("subscribed: %d events, %d queued, %d wakes; want 162, 162, 6", evs, queued, wakes)
	}
	rollback := errors.New("rollback")
	err := postgres.InTx(ctx, pool, func(tx *postgres.Tx) error {
		if err := outbox.Append(ctx, tx, time.Now(), batch(events.ContactUpdated, 50)...); err != nil {
			return err
		}
		return rollback
	})
	if evs, _ := countEvents(t, pool, team); !errors.Is(err, rollback) || evs != 162 || wakes != 6 {
		t.Fatalf("rolled back: %v, %d events, %d wakes; want 162 and 6", err, evs, wakes)
	}
}

// TestWebhookCreatedDuringAChange pins the rule for a webhook subscribed
// while a change is in flight: it gets the change's events exactly when
// its subscription commits before the change does.
func TestWebhookCreatedDuringAChange(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Setup(t).Pool
	outbox := events.NewOutbox(nil)
	book := uuid.New()
	ev := func(team uuid.UUID) events.Event {
		return events.Event{Type: events.ContactUpdated, TeamID: team, BookID: &book, Data: map[string]int{"n": 1}}
	}
	createWebhook := func(team uuid.UUID) <-chan error {
		done := make(chan error, 1)
		go func() {
			_, err := pool.Exec(ctx, `INSERT INTO webhooks (team_id, url, events, secret) VALUES ($1, 'https://hooks.example.com/in', $2, 'whsec_test')`,
				team, []string{events.ContactUpdated})
			done <- err
		}()
		return done
	}

	t.Run("subscription after the change's check waits for its commit", func(t *testing.T) {
		team := newTeam(t, pool)
		var created <-chan error
		err := postgres.InTx(ctx, pool, func(tx *postgres.Tx) error {
			wanted, err := outbox.Wanted(ctx, tx, team, events.ContactUpdated)
			if err != nil || wanted {
				t.Fatalf("wanted = %v, %v before any webhook", wanted, err)
			}
			created = createWebhook(team)
			select {
			case err := <-created:
				t.Fatalf("the webhook committed during the change (%v): the change would commit without the events it now wants", err)
			case <-time.After(300 * time.Millisecond):
			}
			// What the change appends is still decided by its check.
			return outbox.Append(ctx, tx, time.Now(), ev(team))
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := <-created; err != nil {
			t.Fatal(err)
		}
		if evs, _ := countEvents(t, pool, team); evs != 0 {
			t.Fatalf("%d events for a change that committed before the webhook; want 0", evs)
		}
	})

	t.Run("subscription in flight at the check is waited for and seen", func(t *testing.T) {
		team := newTeam(t, pool)
		hook, err := pool.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = hook.Rollback(ctx) }()
		if _, err := hook.Exec(ctx, `INSERT INTO webhooks (team_id, url, events, secret) VALUES ($1, 'https://hooks.example.com/in', $2, 'whsec_test')`,
			team, []string{events.ContactUpdated}); err != nil {
			t.Fatal(err)
		}
		changed := make(chan error, 1)
		go func() {
			changed <- postgres.InTx(ctx, pool, func(tx *postgres.Tx) error { return outbox.Append(ctx, tx, time.Now(), ev(team)) })
		}()
		select {
		case err := <-changed:
			t.Fatalf("the change committed (%v) while a subscription to its events was in flight", err)
		case <-time.After(300 * time.Millisecond):
		}
		if err := hook.Commit(ctx); err != nil {
			t.Fatal(err)
		}
		if err := <-changed; err != nil {
			t.Fatal(err)
		}
		if evs, queued := countEvents(t, pool, team); evs != 1 || queued != 1 {
			t.Fatalf("%d events, %d queued for a change that committed after the webhook; want 1", evs, queued)
		}
	})
}
