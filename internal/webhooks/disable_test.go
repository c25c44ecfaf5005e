package webhooks_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/contactbook/contactbook/internal/apptest"
	"github.com/contactbook/contactbook/internal/events"
	"github.com/contactbook/contactbook/internal/webhooks"
)

func TestWebhookSwitchedOffAfterFailingAndOnAgain(t *testing.T) {
	t.Parallel()
	env := apptest.Setup(t, apptest.Options{Bare: true, Env: map[string]string{"WEBHOOK_DISABLE_AFTER": "1h"}}).Env
	// The service's own engine: switched off with its notice to the team.
	eng := env.App.WebhookEngine
	owner := env.Signup("ann")
	admin := env.Join(owner, "adam", "admin")
	member := env.Join(owner, "mia", "member")
	drain(t, eng)
	var up atomic.Bool
	rc := newReceiver(t, switchable(&up, http.StatusServiceUnavailable))
	hookID, _ := createWebhook(t, owner, rc.URL, events.ContactCreated)
	healthy, _ := createWebhook(t, owner, newReceiver(t, nil).URL, events.ContactCreated)
	base := fmt.Sprintf("/api/teams/%s/webhooks/%s", owner.TeamID, hookID)
	t0 := env.Clock.Now()

	appendEvents(t, env, owner.TeamID, 2, t0)
	run(t, eng) // first attempts fail: failing since t0
	env.Clock.Advance(59 * time.Minute)
	appendEvents(t, env, owner.TeamID, 1, env.Clock.Now())
	run(t, eng) // retries and a new event fail, 59 minutes in: still on
	if owner.Get(base+"/deliveries?limit=1").Expect(http.StatusOK).Len("data") != 1 {
		t.Fatalf("no attempt logged; receiver got %d; %d deliveries", rc.count(), env.QueryInt(`SELECT count(*) FROM webhook_deliveries`))
	}
	if env.QueryInt(`SELECT count(*) FROM webhooks WHERE active`) != 2 {
		t.Fatal("switched off before failing for an hour")
	}
	env.Clock.Advance(2 * time.Minute)
	appendEvents(t, env, owner.TeamID, 2, env.Clock.Now())
	run(t, eng) // an hour and a minute of nothing but failures

	var hook map[string]any
	for _, w := range owner.Get(fmt.Sprintf("/api/teams/%s/webhooks", owner.TeamID)).Expect(http.StatusOK).Value("data").([]any) {
		if m := w.(map[string]any); m["id"] == hookID {
			hook = m
		} else if m["active"] != true {
			t.Errorf("the healthy webhook %s was switched off too", healthy)
		}
	}
	reason, _ := hook["disabled_reason"].(string)
	if hook["active"] != false || hook["disabled_at"] != env.Clock.Now().Format(time.RFC3339) || !strings.Contains(reason, "failed since") {
		t.Fatalf("failing webhook: %v", hook)
	}
	held := env.QueryInt(`SELECT count(*) FROM webhook_deliveries WHERE webhook_id::text = $1 AND status = 'held'`, hookID)
	if held != 5 || env.QueryInt(`SELECT count(*) FROM webhook_deliveries WHERE webhook_id::text = $1 AND status = 'pending'`, hookID) != 0 {
		t.Fatalf("%d deliveries held, want the 5 pending ones", held)
	}
	if n := env.QueryInt(`SELECT count(*) FROM audit_log WHERE team_id::text = $1 AND action = 'webhook.disabled'
		AND actor_type = 'system' AND target_type = 'webhook' AND target_id = $2 AND details->>'reason' = $3`, owner.TeamID, hookID, reason); n != 1 {
		t.Errorf("%d webhook.disabled audit entries, want 1", n)
	}
	// The notice goes to the admins and owners only (logged, as no
	// provider key is set, once the mail worker has sent it).
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		logs := env.Logs()
		sent := func(u *apptest.User) bool {
			return strings.Contains(logs, "kind=webhook_disabled to="+u.Email)
		}
		if sent(owner) && sent(admin) {
			if sent(member) {
				t.Error("a member got the notice")
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the notice did not reach the owner and the admin:\n%s", logs)
		}
	}
	// Held deliveries are not sent while the webhook is off.
	up.Store(true)
	before := rc.count()
	env.Clock.Advance(time.Hour)
	if n := run(t, eng); n != 0 || rc.count() != before {
		t.Fatalf("a switched-off webhook got %d attempts", n)
	}

	// Switching it on clears the reason and sends what was kept, oldest
	// event first.
	r := owner.Patch(base, map[string]any{"active": true}).Expect(http.StatusOK)
	if r.Value("data.disabled_reason") != nil || r.Value("data.disabled_at") != nil || !r.Bool("data.active") {
		t.Fatalf("switched on: %v", r.Value("data"))
	}
	eng1 := engine(env, webhooks.EngineConfig{Workers: 1}) // one at a time: in the order handed out
	if n := run(t, eng1); n != 5 {
		t.Fatalf("switching on sent %d deliveries, want the 5 kept", n)
	}
	var at []string
	for _, d := range rc.deliveries()[before:] {
		at = append(at, payload(t, d)["timestamp"].(string))
	}
	for i := 1; i < len(at); i++ {
		if at[i] < at[i-1] {
			t.Errorf("kept deliveries sent out of order: %v", at)
		}
	}
	if env.QueryInt(`SELECT count(*) FROM webhook_deliveries WHERE webhook_id::text = $1 AND status = 'succeeded'`, hookID) != 5 {
		t.Error("the kept deliveries did not succeed")
	}
}

// failingSinceOf is when the audit log says the webhook's failures began,
// each time the service switched it off, oldest first.
func failingSinceOf(t *testing.T, env *apptest.Env, hookID string) []string {
	t.Helper()
	rows, err := env.App.Pool.Query(context.Background(), `
		SELECT details->>'failing_since' FROM audit_log
		WHERE action = 'webhook.disabled' AND target_id = $1 ORDER BY details->>'failing_since'`, hookID)
	if err != nil {
		t.Fatal(err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestWebhookSwitchOffCountsFromItsCreation: a webhook that never
// succeeded has failed since it was created, however late its first
// attempt.
func TestWebhookSwitchOffCountsFromItsCreation(t *testing.T) {
	t.Parallel()
	env := apptest.Setup(t, apptest.Options{Bare: true}).Env
	eng := engine(env, webhooks.EngineConfig{DisableAfter: time.Hour})
	owner := env.Signup("ann")
	drain(t, eng)
	rc := newReceiver(t, switchable(new(atomic.Bool), http.StatusServiceUnavailable))
	created := env.Clock.Now()
	hookID, _ := createWebhook(t, owner, rc.URL, events.ContactCreated)
	env.Clock.Advance(2 * time.Hour) // nothing to send meanwhile
	appendEvents(t, env, owner.TeamID, 1, env.Clock.Now())
	if n := run(t, eng); n != 1 {
		t.Fatalf("%d attempts, want 1", n)
	}
	if env.QueryInt(`SELECT count(*) FROM webhooks WHERE id::text = $1 AND active`, hookID) != 0 {
		t.Fatal("a webhook created two hours ago that never succeeded is still on after a failed attempt")
	}
	if got := failingSinceOf(t, env, hookID); fmt.Sprint(got) != fmt.Sprint([]string{created.Format(time.RFC3339)}) {
		t.Errorf("failing since %v, want its creation, %s", got, created.Format(time.RFC3339))
	}
}

// TestWebhookSwitchOffCountsFromLastSuccessOrSwitchOn: the failures count
// from the last success, quiet time included; a webhook switched on
// again counts from then, however old its last success, so its next
// failure does not switch it off at once.
func TestWebhookSwitchOffCountsFromLastSuccessOrSwitchOn(t *testing.T) {
	t.Parallel()
	env := apptest.Setup(t, apptest.Options{Bare: true}).Env
	eng := engine(env, webhooks.EngineConfig{DisableAfter: time.Hour})
	owner := env.Signup("ann")
	drain(t, eng)
	var up atomic.Bool
	up.Store(true)
	rc := newReceiver(t, switchable(&up, http.StatusServiceUnavailable))
	hookID, _ := createWebhook(t, owner, rc.URL, events.ContactCreated)
	base := fmt.Sprintf("/api/teams/%s/webhooks/%s", owner.TeamID, hookID)
	active := func() bool {
		return env.QueryInt(`SELECT count(*) FROM webhooks WHERE id::text = $1 AND active`, hookID) == 1
	}
	send := func() {
		t.Helper()
		appendEvents(t, env, owner.TeamID, 1, env.Clock.Now())
		run(t, eng)
	}

	succeeded := env.Clock.Now()
	send()
	up.Store(false)
	env.Clock.Advance(2 * time.Hour)
	send()
	if active() {
		t.Fatal("still on after a failed attempt two hours after the last success")
	}

	env.Clock.Advance(time.Minute)
	switchedOn := env.Clock.Now()
	owner.Patch(base, map[string]any{"active": true}).Expect(http.StatusOK)
	run(t, eng) // the kept delivery fails again
	send()
	if !active() {
		t.Fatal("switched off again at its first failure after being switched on")
	}
	env.Clock.Advance(59 * time.Minute)
	send()
	if !active() {
		t.Fatal("switched off again within the hour after being switched on")
	}
	env.Clock.Advance(2 * time.Minute)
	send()
	if active() {
		t.Fatal("still on after failing for an hour since it was switched on")
	}
	want := []string{succeeded.Format(time.RFC3339), switchedOn.Format(time.RFC3339)}
	if got := failingSinceOf(t, env, hookID); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("failing since %v, want the last success then the switch-on: %v", got, want)
	}
}
