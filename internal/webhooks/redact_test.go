package webhooks_test

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/contactbook/contactbook/internal/apptest"
	"github.com/contactbook/contactbook/internal/events"
	"github.com/contactbook/contactbook/internal/webhooks"
)

// TestWebhookURLPasswordsStayHidden: a URL with user:password@ is shown
// with the password masked in every answer, the delivery log and log
// lines, while deliveries still authenticate with it.
func TestWebhookURLPasswordsStayHidden(t *testing.T) {
	t.Parallel()
	env := apptest.Setup(t, apptest.Options{Bare: true}).Env
	var logs bytes.Buffer
	eng := engine(env, webhooks.EngineConfig{Log: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	owner := env.Signup("ann")
	drain(t, eng)
	rc := newReceiver(t, nil)
	const secretPw = "s3cr3t-Pa55word"
	host := strings.TrimPrefix(rc.URL, "http://")
	var answers []string
	keep := func(r *apptest.Response) *apptest.Response { answers = append(answers, string(r.Body)); return r }

	base := fmt.Sprintf("/api/teams/%s/webhooks", owner.TeamID)
	created := keep(owner.Post(base, map[string]any{"url": "http://alice:" + secretPw + "@" + host + "/hook", "events": []string{events.ContactCreated}}).
		Expect(http.StatusCreated))
	id := created.String("data.webhook.id")
	if got, want := created.String("data.webhook.url"), "http://alice:xxxxx@"+host+"/hook"; got != want {
		t.Fatalf("created url %q, want %q", got, want)
	}
	keep(owner.Get(base).Expect(http.StatusOK))
	// Sending the URL back as shown keeps the password, also with another path.
	p := keep(owner.Patch(base+"/"+id, map[string]any{"url": "http://alice:xxxxx@" + host + "/hook2", "active": true}).Expect(http.StatusOK))
	if p.String("data.url") != "http://alice:xxxxx@"+host+"/hook2" {
		t.Fatalf("patched url %q", p.String("data.url"))
	}
	if env.QueryInt(`SELECT count(*) FROM webhooks WHERE url = $1`, "http://alice:"+secretPw+"@"+host+"/hook2") != 1 {
		t.Fatal("the masked URL replaced the stored password")
	}
	// Pointed elsewhere, the masked password is refused: it would go to
	// a receiver the owner of the password did not choose.
	moved := owner.Patch(base+"/"+id, map[string]any{"url": "http://alice:xxxxx@127.0.0.1:1/hook"}).ExpectError(http.StatusBadRequest, "INVALID_INPUT")
	if !strings.Contains(string(moved.Body), `"field":"url"`) {
		t.Fatalf("the refusal does not name url: %s", moved.Body)
	}
	owner.Patch(base+"/"+id, map[string]any{"url": "http://bob:xxxxx@" + host + "/hook"}).ExpectError(http.StatusBadRequest, "INVALID_INPUT")

	// A failing webhook whose stored URL no longer parses: its error text
	// quotes the URL.
	bad := keep(owner.Post(base, map[string]any{"url": "http://bob:" + secretPw + "@127.0.0.1:1/x", "events": []string{events.ContactCreated}}).
		Expect(http.StatusCreated)).String("data.webhook.id")
	if _, err := env.App.Pool.Exec(t.Context(), `UPDATE webhooks SET url = url || '%zz' WHERE id = $1`, bad); err != nil {
		t.Fatal(err)
	}
	appendEvents(t, env, owner.TeamID, 1, env.Clock.Now())
	run(t, eng)

	got := rc.deliveries()
	if len(got) != 1 {
		t.Fatalf("receiver got %d requests", len(got))
	}
	if auth := got[0].Header.Get("Authorization"); auth != "Basic "+base64.StdEncoding.EncodeToString([]byte("alice:"+secretPw)) {
		t.Fatalf("receiver Authorization %q, want Basic alice:<password>", auth)
	}
	for _, w := range []string{id, bad} {
		keep(owner.Get(base + "/" + w + "/deliveries").Expect(http.StatusOK))
	}
	if !strings.Contains(answers[len(answers)-1], "invalid URL") {
		t.Fatalf("the failing webhook's log: %s", answers[len(answers)-1])
	}
	for _, a := range append(answers, logs.String(), env.Logs()) {
		if strings.Contains(a, secretPw) {
			t.Fatalf("the password shows: %.2000s", a)
		}
	}
}
