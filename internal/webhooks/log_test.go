package webhooks_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/contactbook/contactbook/internal/apptest"
	"github.com/contactbook/contactbook/internal/events"
	"github.com/contactbook/contactbook/internal/postgres"
	"github.com/contactbook/contactbook/internal/webhooks"
)

// appendEvents writes n contact.created events of the user's team in one
// transaction; data.n numbers them.
func appendEvents(t testing.TB, env *apptest.Env, teamID string, n int, at time.Time) {
	t.Helper()
	team := uuid.MustParse(teamID)
	evs := make([]events.Event, n)
	for i := range evs {
		book := uuid.New()
		evs[i] = events.Event{Type: events.ContactCreated, TeamID: team, BookID: &book, Data: map[string]any{"id": uuid.NewString(), "n": i}}
	}
	err := postgres.InTx(context.Background(), env.App.DB, func(tx *postgres.Tx) error {
		return env.App.Outbox.Append(context.Background(), tx, at, evs...)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestWebhookDeliveryLogPaging(t *testing.T) {
	t.Parallel()
	env := apptest.Setup(t, apptest.Options{Bare: true}).Env
	eng := engine(env, webhooks.EngineConfig{})
	owner := env.Signup("ann")
	drain(t, eng)
	rc := newReceiver(t, nil)
	id, _ := createWebhook(t, owner, rc.URL, events.ContactCreated)
	for i := range 3 { // three rounds at three times: newest first across them
		appendEvents(t, env, owner.TeamID, 20+i, env.Clock.Now())
		run(t, eng)
		env.Clock.Advance(time.Minute)
	}
	path := fmt.Sprintf("/api/teams/%s/webhooks/%s/deliveries", owner.TeamID, id)
	for query, want := range map[string]int{"": 50, "?limit=0": 50, "?limit=7": 7, "?limit=200": 63, "?limit=5000": 63} {
		r := owner.Get(path + query).Expect(http.StatusOK)
		if r.Len("data") != want {
			t.Errorf("%s: %d entries, want %d", query, r.Len("data"), want)
		}
	}
	all := owner.Get(path + "?limit=200").Expect(http.StatusOK)
	last := ""
	for i := range 63 {
		at := all.String(fmt.Sprintf("data.%d.created_at", i))
		if last != "" && at > last {
			t.Fatalf("entry %d at %s comes after one at %s: not newest first", i, at, last)
		}
		last = at
	}
	if first := all.String("data.0.created_at"); first != env.Clock.Now().Add(-time.Minute).Format(time.RFC3339) {
		t.Errorf("newest entry at %s", first)
	}
}
