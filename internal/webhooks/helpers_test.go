package webhooks_test

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/contactbook/contactbook/internal/apptest"
	"github.com/contactbook/contactbook/internal/webhooks"
)

// delivery is one request the fake receiver got.
type delivery struct {
	Header http.Header
	Body   []byte
	At     time.Time
}

// receiver is a webhook endpoint: it records every request and answers
// with respond (200 "ok" when nil).
type receiver struct {
	*httptest.Server
	mu      sync.Mutex
	got     []delivery
	respond func(w http.ResponseWriter, r *http.Request, n int)
	arrived chan struct{}
}

func newReceiver(t testing.TB, respond func(w http.ResponseWriter, r *http.Request, n int)) *receiver {
	rc := &receiver{respond: respond, arrived: make(chan struct{}, 100000)}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body)) // respond may read it again
		rc.mu.Lock()
		n := len(rc.got)
		rc.got = append(rc.got, delivery{Header: r.Header.Clone(), Body: body, At: time.Now()})
		rc.mu.Unlock()
		select {
		case rc.arrived <- struct{}{}:
		default:
		}
		if rc.respond != nil {
			rc.respond(w, r, n)
			return
		}
		_, _ = io.WriteString(w, "ok")
	}))
	t.Cleanup(rc.Close)
	return rc
}

func (rc *receiver) deliveries() []delivery {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]delivery(nil), rc.got...)
}

func (rc *receiver) count() int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return len(rc.got)
}

// waitFor waits (in real time) until the receiver holds n requests.
func (rc *receiver) waitFor(t testing.TB, n int, within time.Duration) {
	t.Helper()
	deadline := time.After(within)
	for rc.count() < n {
		select {
		case <-rc.arrived:
		case <-deadline:
			t.Fatalf("receiver got %d requests, want %d within %s", rc.count(), n, within)
		}
	}
}

// engine builds a delivery engine on the env's database and clock, with
// the SSRF guard off.
func engine(env *apptest.Env, cfg webhooks.EngineConfig) *webhooks.Engine {
	if cfg.Now == nil {
		cfg.Now = env.Clock.Now
	}
	cfg.AllowInsecure = true // receivers are httptest servers on loopback
	return webhooks.NewEngine(env.App.Pool, cfg)
}

// guardedEngine builds an engine with the SSRF guard on.
func guardedEngine(env *apptest.Env, cfg webhooks.EngineConfig) *webhooks.Engine {
	cfg.AllowInsecure = false
	if cfg.Now == nil {
		cfg.Now = env.Clock.Now
	}
	return webhooks.NewEngine(env.App.Pool, cfg)
}

// createWebhook subscribes url to types in the user's team and returns
// the webhook id and signing secret.
func createWebhook(t testing.TB, u *apptest.User, url string, types ...string) (id, secret string) {
	t.Helper()
	r := u.Post(fmt.Sprintf("/api/teams/%s/webhooks", u.TeamID), map[string]any{"url": url, "events": types}).Expect(http.StatusCreated)
	return r.String("data.webhook.id"), r.String("data.secret")
}

// run fans out and delivers everything due now.
func run(t testing.TB, eng *webhooks.Engine) int {
	t.Helper()
	ctx := context.Background()
	if _, err := eng.DispatchOnce(ctx); err != nil {
		t.Fatalf("dispatch: %v", err)
	}
	n, err := eng.DeliverDue(ctx)
	if err != nil {
		t.Fatalf("deliver: %v", err)
	}
	return n
}

// drain empties the outbox (e.g. the signup's member.joined) before a
// test subscribes, so only the test's own events are delivered.
func drain(t testing.TB, eng *webhooks.Engine) {
	t.Helper()
	if _, err := eng.DispatchOnce(context.Background()); err != nil {
		t.Fatalf("dispatch: %v", err)
	}
}

// checkSignatures verifies both signature schemes of a request the way a
// receiver would, independently of the package's own code.
func checkSignatures(t testing.TB, d delivery, secret string) {
	t.Helper()
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(d.Body)
	if want := hex.EncodeToString(mac.Sum(nil)); !hmac.Equal([]byte(d.Header.Get("X-Service-Signature")), []byte(want)) {
		t.Errorf("X-Service-Signature = %q, want %q", d.Header.Get("X-Service-Signature"), want)
	}
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil {
		t.Fatalf("secret %q is not whsec_ + base64: %v", secret, err)
	}
	if len(key) != 32 {
		t.Errorf("secret key is %d bytes, want 32", len(key))
	}
	id, ts := d.Header.Get("webhook-id"), d.Header.Get("webhook-timestamp")
	std := hmac.New(sha256.New, key)
	std.Write([]byte(id + "." + ts + "."))
	std.Write(d.Body)
	want := "v1," + base64.StdEncoding.EncodeToString(std.Sum(nil))
	found := false
	for _, sig := range strings.Fields(d.Header.Get("webhook-signature")) {
		found = found || hmac.Equal([]byte(sig), []byte(want))
	}
	if !found {
		t.Errorf("webhook-signature = %q, want %q", d.Header.Get("webhook-signature"), want)
	}
}

// payload decodes a request body.
func payload(t testing.TB, d delivery) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(d.Body, &m); err != nil {
		t.Fatalf("body is not a JSON object: %v: %s", err, d.Body)
	}
	return m
}
