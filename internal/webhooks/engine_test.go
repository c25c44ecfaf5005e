package webhooks_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/contactbook/contactbook/internal/apptest"
	"github.com/contactbook/contactbook/internal/apptest/logbuf"
	"github.com/contactbook/contactbook/internal/events"
	"github.com/contactbook/contactbook/internal/webhooks"
)

// contactEvents produces contact.created, contact.updated and
// contact.deleted through the contacts API and returns the data each event
// must carry: exactly what the API answered.
func contactEvents(t *testing.T, owner *apptest.User, bookID string) map[string]any {
	t.Helper()
	key := owner.NewKey().InBook(bookID)
	created := key.Post("/api/v1/contacts", map[string]any{"first_name": "Ada", "last_name": "Lovelace"}).Expect(http.StatusCreated)
	id := created.String("data.id")
	updated := key.Patch("/api/v1/contacts/"+id, map[string]any{"company": "Analytical Engines"}).Expect(http.StatusOK)
	key.Delete("/api/v1/contacts/" + id).Expect(http.StatusNoContent)
	return map[string]any{
		events.ContactCreated: created.Value("data"),
		events.ContactUpdated: updated.Value("data"),
		events.ContactDeleted: map[string]any{"id": id},
	}
}

func TestWebhookEventPayloadsAndSignatures(t *testing.T) {
	t.Parallel()
	// The events of contacts, books and members, which this test causes
	// (the engagement events have their tests with the changes that
	// cause them).
	var types []string
	for _, ti := range events.Catalogue {
		if ti.Group == events.GroupContacts || ti.Group == events.GroupTeam {
			types = append(types, ti.Type)
		}
	}
	env := apptest.Setup(t, apptest.Options{Bare: true}).Env
	eng := engine(env, webhooks.EngineConfig{})
	owner := env.Signup("ann")
	drain(t, eng)
	rc := newReceiver(t, nil)
	hookID, secret := createWebhook(t, owner, rc.URL+"/hooks", types...)
	if !strings.HasPrefix(secret, "whsec_") {
		t.Fatalf("secret %q lacks the whsec_ prefix", secret)
	}

	bob := env.Join(owner, "bob", "member")
	owner.Delete(fmt.Sprintf("/api/teams/%s/members/%s", owner.TeamID, bob.ID)).Expect(http.StatusNoContent)
	bookID := owner.CreateBook("Friends")
	book := owner.Get("/api/books/" + bookID).Expect(http.StatusOK).Value("data")
	want := contactEvents(t, owner, bookID)
	owner.Delete("/api/books/" + bookID).Expect(http.StatusNoContent)
	member := map[string]any{"user_id": bob.ID, "email": bob.Email, "name": "bob", "role": "member"}
	want[events.MemberJoined] = member
	want[events.MemberRemoved] = member
	want[events.BookCreated] = book
	want[events.BookDeleted] = map[string]any{"id": bookID}

	if n := run(t, eng); n != len(types) {
		t.Fatalf("made %d attempts, want %d", n, len(types))
	}
	now := env.Clock.Now()
	seen := map[string]bool{}
	for _, d := range rc.deliveries() {
		typ := d.Header.Get("X-Service-Event")
		if seen[typ] {
			t.Errorf("%s delivered twice", typ)
		}
		seen[typ] = true
		checkSignatures(t, d, secret)
		for h, v := range map[string]string{
			"Content-Type":        "application/json",
			"User-Agent":          "contactbook-Webhooks/1.0",
			"X-Service-Timestamp": strconv.FormatInt(now.Unix(), 10),
			"webhook-timestamp":   strconv.FormatInt(now.Unix(), 10),
		} {
			if got := d.Header.Get(h); got != v {
				t.Errorf("%s: header %s = %q, want %q", typ, h, got, v)
			}
		}
		// The delivery id is the id of this event's delivery to this
		// webhook, and the body is the stored one byte for byte.
		deliveryID := d.Header.Get("X-Service-Delivery")
		if d.Header.Get("webhook-id") != deliveryID ||
			env.QueryInt(`SELECT count(*) FROM webhook_deliveries d JOIN events e ON e.id = d.event_id
				WHERE d.id::text = $1 AND d.webhook_id = $5 AND e.team_id = $2 AND e.type = $3 AND e.body = $4`,
				deliveryID, owner.TeamID, typ, d.Body, hookID) != 1 {
			t.Errorf("%s: X-Service-Delivery %q, webhook-id %q: not the id of the delivery whose event was sent", typ, deliveryID, d.Header.Get("webhook-id"))
		}

		p := payload(t, d)
		if p["event"] != typ || p["team_id"] != owner.TeamID || p["timestamp"] != now.Format(time.RFC3339) {
			t.Errorf("%s: envelope %v", typ, p)
		}
		if _, ok := p["book_id"]; !ok {
			t.Errorf("%s: book_id missing", typ)
		}
		switch {
		case strings.HasPrefix(typ, "member."):
			if p["book_id"] != nil {
				t.Errorf("%s: book_id %v, want null", typ, p["book_id"])
			}
		default:
			if p["book_id"] != bookID {
				t.Errorf("%s: book_id %v, want %s", typ, p["book_id"], bookID)
			}
		}
		if !reflect.DeepEqual(p["data"], want[typ]) {
			t.Errorf("%s: data\n got %v\nwant %v", typ, p["data"], want[typ])
		}
	}
	if len(seen) != len(types) {
		t.Fatalf("delivered %v, want every type", seen)
	}

	// The log shows every attempt with the payload that was sent.
	log := owner.Get(fmt.Sprintf("/api/teams/%s/webhooks/%s/deliveries", owner.TeamID, hookID)).Expect(http.StatusOK)
	if log.Len("data") != len(types) {
		t.Fatalf("log holds %d entries, want %d", log.Len("data"), len(types))
	}
	bodies, deliveryIDs := map[string][]byte{}, map[string]string{}
	for _, d := range rc.deliveries() {
		bodies[d.Header.Get("X-Service-Event")] = d.Body
		deliveryIDs[d.Header.Get("X-Service-Event")] = d.Header.Get("X-Service-Delivery")
	}
	for i := range len(types) {
		e := fmt.Sprintf("data.%d.", i)
		typ := log.String(e + "event_type")
		var sent any
		_ = json.Unmarshal(bodies[typ], &sent)
		if !reflect.DeepEqual(log.Value(e+"payload"), sent) {
			t.Errorf("log payload of %s = %v, want the body sent %s", typ, log.Value(e+"payload"), bodies[typ])
		}
		if log.String(e+"webhook_id") != hookID || log.Bool(e+"manual") ||
			log.String(e+"delivery_id") != deliveryIDs[typ] || log.Int(e+"response_status") != 200 || log.String(e+"response_body") != "ok" ||
			!log.Bool(e+"success") || log.String(e+"created_at") != now.Format(time.RFC3339) || !log.Has(e+"duration_ms") || !log.Has(e+"id") {
			t.Errorf("log entry %d: %v", i, log.Value(strings.TrimSuffix(e, ".")))
		}
		if m, _ := log.Value(strings.TrimSuffix(e, ".")).(map[string]any); len(m) != 11 {
			t.Errorf("log entry has fields %v, want exactly the eleven the API documents", m)
		}
	}
	if n := env.QueryInt(`SELECT count(*) FROM webhook_deliveries WHERE status = 'succeeded' AND attempts = 1`); n != len(types) {
		t.Errorf("%d deliveries succeeded, want %d", n, len(types))
	}
}

func TestWebhookRetrySchedule(t *testing.T) {
	t.Parallel()
	env := apptest.Setup(t, apptest.Options{Bare: true}).Env
	eng := engine(env, webhooks.EngineConfig{})
	owner := env.Signup("ann")
	drain(t, eng)
	rc := newReceiver(t, func(w http.ResponseWriter, _ *http.Request, _ int) {
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = io.WriteString(w, "busy")
	})
	hookID, secret := createWebhook(t, owner, rc.URL, events.BookCreated)
	start := env.Clock.Now()
	owner.CreateBook("Work")

	if n := run(t, eng); n != 1 {
		t.Fatalf("first round made %d attempts, want 1", n)
	}
	for i, delay := range []time.Duration{10 * time.Second, 60 * time.Second, 5 * time.Minute} {
		env.Clock.Advance(delay - time.Second)
		if n := run(t, eng); n != 0 {
			t.Fatalf("retry %d left %s early", i+1, time.Second)
		}
		env.Clock.Advance(time.Second)
		if n := run(t, eng); n != 1 {
			t.Fatalf("retry %d: %d attempts, want 1", i+1, n)
		}
	}
	env.Clock.Advance(time.Hour) // (less than the login token's lifetime)
	if n := run(t, eng); n != 0 {
		t.Fatalf("a fifth attempt was made")
	}

	got := rc.deliveries()
	if len(got) != 4 {
		t.Fatalf("receiver got %d requests, want 4", len(got))
	}
	wantAt := []time.Duration{0, 10 * time.Second, 70 * time.Second, 370 * time.Second}
	for i, d := range got {
		checkSignatures(t, d, secret)
		if d.Header.Get("X-Service-Delivery") != got[0].Header.Get("X-Service-Delivery") || string(d.Body) != string(got[0].Body) {
			t.Errorf("attempt %d is not the same delivery byte for byte", i+1)
		}
		if ts := d.Header.Get("webhook-timestamp"); ts != strconv.FormatInt(start.Add(wantAt[i]).Unix(), 10) {
			t.Errorf("attempt %d at %s, want start+%s", i+1, ts, wantAt[i])
		}
	}
	if n := env.QueryInt(`SELECT count(*) FROM webhook_deliveries WHERE status = 'failed' AND attempts = 4 AND lease_owner IS NULL`); n != 1 {
		t.Errorf("delivery not failed after 4 attempts")
	}
	log := owner.Get(fmt.Sprintf("/api/teams/%s/webhooks/%s/deliveries", owner.TeamID, hookID)).Expect(http.StatusOK)
	if log.Len("data") != 4 {
		t.Fatalf("log holds %d entries, want 4", log.Len("data"))
	}
	for i := range 4 {
		e := fmt.Sprintf("data.%d.", i)
		at := start.Add(wantAt[3-i]).Format(time.RFC3339) // newest first
		if log.String(e+"created_at") != at || log.Int(e+"response_status") != 503 || log.String(e+"response_body") != "busy" || log.Bool(e+"success") {
			t.Errorf("log entry %d: %v, want a 503 at %s", i, log.Value(strings.TrimSuffix(e, ".")), at)
		}
	}
}

func TestWebhookRetryThenSuccess(t *testing.T) {
	t.Parallel()
	env := apptest.Setup(t, apptest.Options{Bare: true}).Env
	eng := engine(env, webhooks.EngineConfig{})
	owner := env.Signup("ann")
	drain(t, eng)
	rc := newReceiver(t, func(w http.ResponseWriter, _ *http.Request, n int) {
		if n == 0 {
			w.WriteHeader(http.StatusInternalServerError)
		}
	})
	id, _ := createWebhook(t, owner, rc.URL, events.BookCreated)
	owner.CreateBook("Work")
	run(t, eng)
	env.Clock.Advance(10 * time.Second)
	run(t, eng)
	env.Clock.Advance(time.Hour)
	run(t, eng)
	if rc.count() != 2 {
		t.Fatalf("receiver got %d requests, want 2", rc.count())
	}
	if n := env.QueryInt(`SELECT count(*) FROM webhook_deliveries WHERE status = 'succeeded' AND attempts = 2`); n != 1 {
		t.Errorf("delivery did not succeed on the second attempt")
	}
	// The log filtered by outcome: the failed attempt, the successful one.
	path := fmt.Sprintf("/api/teams/%s/webhooks/%s/deliveries", owner.TeamID, id)
	failed, ok := owner.Get(path+"?success=false").Expect(http.StatusOK), owner.Get(path+"?success=true").Expect(http.StatusOK)
	if failed.Len("data") != 1 || failed.Int("data.0.response_status") != 500 || failed.Bool("data.0.success") ||
		ok.Len("data") != 1 || ok.Int("data.0.response_status") != 200 || !ok.Bool("data.0.success") {
		t.Errorf("filtered log: failed %s, succeeded %s", failed.Body, ok.Body)
	}
	if all := owner.Get(path).Expect(http.StatusOK); all.Len("data") != 2 {
		t.Errorf("unfiltered log: %s", all.Body)
	}
	owner.Get(path+"?success=maybe").ExpectError(http.StatusBadRequest, "INVALID_INPUT")
}

func TestWebhookClientErrorAndRedirectNotRetried(t *testing.T) {
	t.Parallel()
	env := apptest.Setup(t, apptest.Options{Bare: true}).Env
	eng := engine(env, webhooks.EngineConfig{})
	owner := env.Signup("ann")
	drain(t, eng)
	gone := newReceiver(t, func(w http.ResponseWriter, _ *http.Request, _ int) { w.WriteHeader(http.StatusGone) })
	target := newReceiver(t, nil)
	redirect := newReceiver(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		http.Redirect(w, r, target.URL, http.StatusTemporaryRedirect)
	})
	goneID, _ := createWebhook(t, owner, gone.URL, events.BookCreated)
	redirectID, _ := createWebhook(t, owner, redirect.URL, events.BookCreated)
	owner.CreateBook("Work")
	if n := run(t, eng); n != 2 {
		t.Fatalf("%d attempts, want 2", n)
	}
	for range 3 {
		env.Clock.Advance(10 * time.Minute)
		run(t, eng)
	}
	if gone.count() != 1 || redirect.count() != 1 || target.count() != 0 {
		t.Fatalf("requests: 410 receiver %d, redirecting receiver %d, redirect target %d; want 1, 1, 0", gone.count(), redirect.count(), target.count())
	}
	for id, status := range map[string]int{goneID: 410, redirectID: 307} {
		log := owner.Get(fmt.Sprintf("/api/teams/%s/webhooks/%s/deliveries", owner.TeamID, id)).Expect(http.StatusOK)
		if log.Len("data") != 1 || log.Int("data.0.response_status") != status || log.Bool("data.0.success") {
			t.Errorf("log of the %d receiver: %s", status, log.Body)
		}
	}
	if n := env.QueryInt(`SELECT count(*) FROM webhook_deliveries WHERE status = 'failed' AND attempts = 1`); n != 2 {
		t.Errorf("%d deliveries failed after one attempt, want 2", n)
	}
}

func TestWebhookResponseBodyTruncated(t *testing.T) {
	t.Parallel()
	env := apptest.Setup(t, apptest.Options{Bare: true}).Env
	eng := engine(env, webhooks.EngineConfig{})
	owner := env.Signup("ann")
	drain(t, eng)
	long := newReceiver(t, func(w http.ResponseWriter, _ *http.Request, _ int) {
		_, _ = io.WriteString(w, strings.Repeat("abcdefgh", 2000)) // 16,000 bytes
	})
	binary := newReceiver(t, func(w http.ResponseWriter, _ *http.Request, _ int) {
		_, _ = w.Write([]byte("ok\x00\xff\xfe done"))
	})
	longID, _ := createWebhook(t, owner, long.URL, events.BookCreated)
	binID, _ := createWebhook(t, owner, binary.URL, events.BookCreated)
	owner.CreateBook("Work")
	run(t, eng)
	log := owner.Get(fmt.Sprintf("/api/teams/%s/webhooks/%s/deliveries", owner.TeamID, longID)).Expect(http.StatusOK)
	if got := log.String("data.0.response_body"); got != strings.Repeat("abcdefgh", 512) {
		t.Errorf("logged body is %d bytes, want the first 4096", len(got))
	}
	log = owner.Get(fmt.Sprintf("/api/teams/%s/webhooks/%s/deliveries", owner.TeamID, binID)).Expect(http.StatusOK)
	if got := log.String("data.0.response_body"); got != "ok\uFFFD done" {
		t.Errorf("logged body %q, want invalid UTF-8 replaced and NUL dropped", got)
	}
}

func TestWebhookTimeoutAndNetworkErrorRetried(t *testing.T) {
	t.Parallel()
	env := apptest.Setup(t, apptest.Options{Bare: true}).Env
	eng := engine(env, webhooks.EngineConfig{Timeout: 300 * time.Millisecond})
	owner := env.Signup("ann")
	drain(t, eng)
	slow := newReceiver(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	})
	closed := newReceiver(t, nil)
	closedURL := closed.URL
	closed.Close() // nothing listens there any more
	slowID, _ := createWebhook(t, owner, slow.URL, events.BookCreated)
	downID, _ := createWebhook(t, owner, closedURL, events.BookCreated)
	owner.CreateBook("Work")
	began := time.Now()
	if n := run(t, eng); n != 2 {
		t.Fatalf("%d attempts, want 2", n)
	}
	if took := time.Since(began); took > 4*time.Second {
		t.Errorf("the round took %s: the timeout did not cut the attempt", took)
	}
	for id, want := range map[string]string{slowID: "timeout: no response within 300ms", downID: "network error: "} {
		log := owner.Get(fmt.Sprintf("/api/teams/%s/webhooks/%s/deliveries", owner.TeamID, id)).Expect(http.StatusOK)
		if log.Len("data") != 1 || log.Value("data.0.response_status") != nil || log.Bool("data.0.success") ||
			!strings.HasPrefix(log.String("data.0.response_body"), want) || !log.Has("data.0.response_status") {
			t.Errorf("log: %s; want a null status and %q", log.Body, want)
		}
		if id == slowID && log.Int("data.0.duration_ms") < 300 {
			t.Errorf("timed-out attempt lasted %d ms", log.Int("data.0.duration_ms"))
		}
	}
	// Both are retried 10 s later.
	if n := env.QueryInt(`SELECT count(*) FROM webhook_deliveries WHERE status = 'pending' AND attempts = 1 AND next_attempt_at = $1`,
		env.Clock.Now().Add(10*time.Second)); n != 2 {
		t.Errorf("%d deliveries scheduled for +10 s, want 2", n)
	}
	if _, err := env.App.Pool.Exec(context.Background(), `UPDATE webhooks SET active = false WHERE id = $1`, slowID); err != nil {
		t.Fatal(err)
	}
	env.Clock.Advance(10 * time.Second)
	run(t, eng)
	if n := env.QueryInt(`SELECT count(*) FROM webhook_attempts WHERE webhook_id = $1`, downID); n != 2 {
		t.Errorf("network error: %d attempts after +10 s, want 2", n)
	}
}

func TestWebhookFilteringAndInactive(t *testing.T) {
	t.Parallel()
	env := apptest.Setup(t, apptest.Options{Bare: true}).Env
	eng := engine(env, webhooks.EngineConfig{})
	owner := env.Signup("ann")
	other := env.Signup("olga")
	drain(t, eng)
	books := newReceiver(t, nil)
	members := newReceiver(t, nil)
	off := newReceiver(t, nil)
	outsider := newReceiver(t, nil)
	createWebhook(t, owner, books.URL, events.BookCreated, events.BookDeleted)
	createWebhook(t, owner, members.URL, events.MemberJoined)
	offID, _ := createWebhook(t, owner, off.URL, events.Types...)
	owner.Patch(fmt.Sprintf("/api/teams/%s/webhooks/%s", owner.TeamID, offID), map[string]any{"active": false}).Expect(http.StatusOK)
	createWebhook(t, other, outsider.URL, events.Types...)

	owner.CreateBook("Work")
	env.Join(owner, "bob", "viewer")
	run(t, eng)
	if books.count() != 1 || members.count() != 1 || off.count() != 0 || outsider.count() != 0 {
		t.Fatalf("requests: books %d, members %d, inactive %d, other team %d; want 1, 1, 0, 0",
			books.count(), members.count(), off.count(), outsider.count())
	}
	if got := books.deliveries()[0].Header.Get("X-Service-Event"); got != events.BookCreated {
		t.Errorf("book webhook got %s", got)
	}
	if got := members.deliveries()[0].Header.Get("X-Service-Event"); got != events.MemberJoined {
		t.Errorf("member webhook got %s", got)
	}
	// Only the subscribed, active webhooks got delivery rows at all.
	if n := env.QueryInt(`SELECT count(*) FROM webhook_deliveries`); n != 2 {
		t.Errorf("%d delivery rows, want 2", n)
	}
}

func TestWebhookDeactivateCancelsPending(t *testing.T) {
	t.Parallel()
	env := apptest.Setup(t, apptest.Options{Bare: true}).Env
	eng := engine(env, webhooks.EngineConfig{})
	owner := env.Signup("ann")
	drain(t, eng)
	rc := newReceiver(t, func(w http.ResponseWriter, _ *http.Request, n int) {
		if n == 0 {
			w.WriteHeader(http.StatusBadGateway)
		}
	})
	id, _ := createWebhook(t, owner, rc.URL, events.BookCreated)
	owner.CreateBook("One")
	run(t, eng)
	path := fmt.Sprintf("/api/teams/%s/webhooks/%s", owner.TeamID, id)
	owner.Patch(path, map[string]any{"active": false}).Expect(http.StatusOK)
	if n := env.QueryInt(`SELECT count(*) FROM webhook_deliveries WHERE status = 'canceled'`); n != 1 {
		t.Fatalf("the pending retry was not canceled")
	}
	owner.CreateBook("Two") // while inactive: never delivered
	env.Clock.Advance(time.Hour)
	run(t, eng)
	owner.Patch(path, map[string]any{"active": true}).Expect(http.StatusOK)
	run(t, eng)
	if rc.count() != 1 {
		t.Fatalf("receiver got %d requests while inactive or after reactivation, want only the first 1", rc.count())
	}
	owner.CreateBook("Three")
	run(t, eng)
	if rc.count() != 2 {
		t.Fatalf("reactivated webhook got %d requests, want 2", rc.count())
	}
}

func TestWebhookSSRFRefusedEndToEnd(t *testing.T) {
	t.Parallel()
	env := apptest.Setup(t, apptest.Options{Bare: true}).Env // the API accepts local URLs (insecure mode) ...
	eng := guardedEngine(env, webhooks.EngineConfig{Timeout: 2 * time.Second})
	owner := env.Signup("ann")
	drain(t, eng)
	rc := newReceiver(t, nil)
	port := rc.URL[strings.LastIndexByte(rc.URL, ':')+1:]
	// ... but an engine with the guard on refuses them at dial time: a name
	// resolving to loopback, an IPv4-mapped loopback, the metadata address.
	urls := []string{
		"http://localhost:" + port + "/hook",
		"http://[::ffff:127.0.0.1]:" + port + "/hook",
		"http://169.254.169.254/latest/meta-data/",
	}
	ids := make([]string, len(urls))
	for i, u := range urls {
		ids[i], _ = createWebhook(t, owner, u, events.BookCreated)
	}
	owner.CreateBook("Work")
	if n := run(t, eng); n != len(urls) {
		t.Fatalf("%d attempts, want %d", n, len(urls))
	}
	env.Clock.Advance(time.Hour)
	run(t, eng)
	if rc.count() != 0 {
		t.Fatalf("the receiver on loopback got %d requests", rc.count())
	}
	for i, id := range ids {
		log := owner.Get(fmt.Sprintf("/api/teams/%s/webhooks/%s/deliveries", owner.TeamID, id)).Expect(http.StatusOK)
		body := log.String("data.0.response_body")
		// The log says no more than that: a resolved address would tell an
		// admin what internal names resolve to.
		if log.Len("data") != 1 || log.Value("data.0.response_status") != nil || body != "refused: address not allowed" {
			t.Errorf("%s: log %s, want one attempt refused with \"refused: address not allowed\"", urls[i], log.Body)
		}
	}
	// Refusals are final: no retry.
	if n := env.QueryInt(`SELECT count(*) FROM webhook_deliveries WHERE status = 'failed' AND attempts = 1`); n != len(urls) {
		t.Errorf("%d refused deliveries failed at once, want %d", n, len(urls))
	}
}

func TestWebhookRunDeliversOnCommitAndShutsDownGracefully(t *testing.T) {
	t.Parallel()
	// The poll is an hour: only the service's own commits (events.Outbox)
	// can wake the app's engine.
	env := apptest.Setup(t, apptest.Options{Bare: true, RealClock: true, Env: map[string]string{"WEBHOOK_POLL": "1h", "WEBHOOK_WORKERS": "4"}}).Env
	eng := env.App.WebhookEngine
	owner := env.Signup("ann")
	release := make(chan struct{})
	rc := newReceiver(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		var p struct {
			Data struct {
				Name string `json:"name"`
			} `json:"data"`
		}
		_ = json.NewDecoder(r.Body).Decode(&p)
		if p.Data.Name == "slow" {
			<-release
		}
	})
	t.Cleanup(func() { // runs before the receiver closes
		select {
		case <-release:
		default:
			close(release)
		}
	})
	createWebhook(t, owner, rc.URL, events.BookCreated)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- eng.Run(ctx) }()

	began := time.Now()
	owner.CreateBook("fast")
	rc.waitFor(t, 1, 5*time.Second)
	t.Logf("commit to delivery: %s", rc.deliveries()[0].At.Sub(began))

	// An attempt in flight when the engine stops still finishes and is logged.
	owner.CreateBook("slow")
	rc.waitFor(t, 2, 5*time.Second)
	cancel()
	select {
	case <-done:
		t.Fatal("Run returned while an attempt was in flight")
	case <-time.After(200 * time.Millisecond):
	}
	close(release)
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after the attempt finished")
	}
	if n := env.QueryInt(`SELECT count(*) FROM webhook_deliveries WHERE status = 'succeeded' AND lease_owner IS NULL`); n != 2 {
		t.Errorf("%d deliveries recorded as succeeded, want 2", n)
	}
	if n := env.QueryInt(`SELECT count(*) FROM webhook_attempts WHERE success`); n != 2 {
		t.Errorf("%d successful attempts logged, want 2", n)
	}
}

func TestWebhookLeaseTakeover(t *testing.T) {
	t.Parallel()
	env := apptest.Setup(t, apptest.Options{Bare: true}).Env
	eng := engine(env, webhooks.EngineConfig{Lease: time.Minute})
	owner := env.Signup("ann")
	drain(t, eng)
	rc := newReceiver(t, nil)
	createWebhook(t, owner, rc.URL, events.BookCreated)
	owner.CreateBook("One")
	if _, err := eng.DispatchOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	// Another instance claimed the delivery and died mid-attempt.
	lease := func(until time.Time) {
		if _, err := env.App.Pool.Exec(context.Background(),
			`UPDATE webhook_deliveries SET lease_owner = 'dead-instance', lease_until = $1`, until); err != nil {
			t.Fatal(err)
		}
	}
	lease(env.Clock.Now().Add(time.Minute))
	if n, _ := eng.DeliverDue(context.Background()); n != 0 {
		t.Fatalf("a delivery under a live lease was taken")
	}
	env.Clock.Advance(61 * time.Second)
	if n, _ := eng.DeliverDue(context.Background()); n != 1 {
		t.Fatalf("an expired lease was not taken over")
	}

	// A running engine takes over at once the leases of owners that have
	// no connection left (a killed process), without waiting for expiry.
	owner.CreateBook("Two")
	if _, err := eng.DispatchOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := env.App.Pool.Exec(context.Background(),
		`UPDATE webhook_deliveries SET lease_owner = 'dead-instance', lease_until = $1 WHERE status = 'pending'`,
		env.Clock.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- eng.Run(ctx) }()
	rc.waitFor(t, 2, 5*time.Second)
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// outcomes records what the engine reports to its observer.
type outcomes struct {
	mu  sync.Mutex
	got map[string]int
}

func (o *outcomes) WebhookAttempt(outcome string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.got[outcome]++
}

func TestWebhookAttemptsAreObserved(t *testing.T) {
	t.Parallel()
	env := apptest.Setup(t, apptest.Options{Bare: true}).Env
	obs := &outcomes{got: map[string]int{}}
	var logs logbuf.Buffer
	eng := engine(env, webhooks.EngineConfig{Observer: obs, Log: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	owner := env.Signup("ann")
	drain(t, eng)
	ok := newReceiver(t, nil)
	gone := newReceiver(t, func(w http.ResponseWriter, _ *http.Request, _ int) { w.WriteHeader(http.StatusGone) })
	down := newReceiver(t, func(w http.ResponseWriter, _ *http.Request, _ int) { w.WriteHeader(http.StatusBadGateway) })
	for _, rc := range []*receiver{ok, gone, down} {
		createWebhook(t, owner, rc.URL, events.BookCreated)
	}
	owner.CreateBook("Work")
	run(t, eng)
	obs.mu.Lock()
	defer obs.mu.Unlock()
	if obs.got["success"] != 1 || obs.got["failed"] != 1 || obs.got["retry"] != 1 {
		t.Fatalf("observed %v, want one success, one failed, one retry", obs.got)
	}
	for _, want := range []string{"outcome=retry", "response_status=502", "outcome=failed", "response_status=410", "delivery_id=", "event_id=", "webhook_id="} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("attempt logs lack %q:\n%s", want, logs.String())
		}
	}
}
