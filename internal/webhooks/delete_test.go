package webhooks_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/contactbook/contactbook/internal/apptest"
	"github.com/contactbook/contactbook/internal/events"
)

// TestWebhookDeleteWhileAnAttemptCompletes: deleting a webhook while one
// of its attempts is being recorded waits for that attempt instead of
// deadlocking with it (a 500 to the admin, or a lost log row).
//
// The completion locks its delivery row first and the webhook row last
// (its log row's foreign key is checked at the end of its statement);
// the test holds a transaction at exactly that point while the delete
// arrives.
func TestWebhookDeleteWhileAnAttemptCompletes(t *testing.T) {
	t.Parallel()
	env := apptest.Setup(t, apptest.Options{Bare: true}).Env
	ctx := context.Background()
	owner := env.Signup("ann")
	id, _ := createWebhook(t, owner, "https://hooks.example.com/in", events.ContactCreated)
	appendEvents(t, env, owner.TeamID, 1, env.Clock.Now())
	// A delivery due tomorrow, written directly so that the engine leaves
	// it alone: the test plays the attempt itself, statement by statement.
	var delivery, event string
	err := env.App.Pool.QueryRow(ctx, `
		INSERT INTO webhook_deliveries (event_id, webhook_id, next_attempt_at)
		SELECT id, $1, now() + interval '1 day' FROM events WHERE team_id = $2
		RETURNING id::text, event_id::text`, id, owner.TeamID).Scan(&delivery, &event)
	if err != nil {
		t.Fatal(err)
	}

	attempt, err := env.App.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer attempt.Rollback(ctx) //nolint:errcheck // no-op after commit
	if _, err := attempt.Exec(ctx, `UPDATE webhook_deliveries SET attempts = attempts + 1 WHERE id = $1`, delivery); err != nil {
		t.Fatal(err)
	}

	deleted := make(chan int, 1)
	go func() {
		deleted <- owner.Delete(fmt.Sprintf("/api/teams/%s/webhooks/%s", owner.TeamID, id)).Status
	}()
	// Wait until the delete is blocked behind the attempt's row lock.
	deadline := time.Now().Add(10 * time.Second)
	for {
		var waiting int
		if err := env.App.Pool.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock'`).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		if waiting > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the delete never waited for the attempt in progress")
		}
		time.Sleep(10 * time.Millisecond)
	}

	// The attempt's log row needs the webhook row: with the delete holding
	// it, one of the two would be chosen as a deadlock victim.
	if _, err := attempt.Exec(ctx, `
		INSERT INTO webhook_attempts (delivery_id, webhook_id, event_id, event_type, attempt, duration_ms, success, created_at)
		VALUES ($1, $2, $3, 'contact.created', 1, 5, true, now())`, delivery, id, event); err != nil {
		t.Fatalf("recording the attempt: %v", err)
	}
	if err := attempt.Commit(ctx); err != nil {
		t.Fatalf("committing the attempt: %v", err)
	}
	if status := <-deleted; status != http.StatusNoContent {
		t.Fatalf("delete answered %d, want 204", status)
	}
	if n := env.QueryInt(`SELECT count(*) FROM webhook_attempts WHERE webhook_id = $1`, id); n != 0 {
		t.Fatalf("%d log rows outlived their webhook", n)
	}
}
