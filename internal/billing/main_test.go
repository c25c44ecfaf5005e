package billing_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stripe/stripe-go/v76"
	"github.com/stripe/stripe-go/v76/webhook"

	"github.com/contactbook/contactbook/internal/apptest"
)

// stripeMockVersion is the stripe-mock `make test` installs
// (STRIPE_MOCK_VERSION in the Makefile).
const stripeMockVersion = "v0.203.0"

// projectStripeMock is where `make test` installs stripe-mock (see
// scripts/gotool.sh), relative to this package's directory, in which
// `go test` runs the tests.
var projectStripeMock = filepath.Join("..", "..", ".data", "bin", "stripe-mock@"+stripeMockVersion)

// stripeMockURL is the HTTP address of the stripe-mock this package's
// tests share (it keeps no state between requests).
var stripeMockURL string

// TestMain runs Stripe's own mock server, stripe-mock, as the payment
// provider behind STRIPE_API_BASE: it answers with real API objects and
// validates every request against the provider's OpenAPI spec, rejecting
// unknown or malformed parameters.
func TestMain(m *testing.M) {
	os.Exit(runWithStripeMock(m))
}

func runWithStripeMock(m *testing.M) int {
	bin, err := findStripeMock(projectStripeMock)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	// Port 0 on both listeners: the system picks free ports (no window in
	// which another process could take a port picked in advance), and
	// stripe-mock prints which. Both are bound to 127.0.0.1 so nothing
	// outside the machine can reach it.
	addrs := &listenAddrs{http: make(chan string, 1)}
	cmd := exec.Command(bin, "-http-addr", "127.0.0.1:0", "-https-addr", "127.0.0.1:0")
	cmd.Stdout, cmd.Stderr = addrs, addrs
	killWithParent(cmd)
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "start stripe-mock:", err)
		return 1
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	defer func() {
		_ = cmd.Process.Kill()
		<-exited
	}()
	select {
	case a := <-addrs.http:
		stripeMockURL = "http://" + a
	case <-exited:
		fmt.Fprintf(os.Stderr, "stripe-mock exited before listening:\n%s\n", addrs.output())
		return 1
	case <-time.After(30 * time.Second):
		fmt.Fprintf(os.Stderr, "stripe-mock did not start listening within 30 s:\n%s\n", addrs.output())
		return 1
	}
	if err := waitForStripeMock(stripeMockURL); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}

// listenAddrs reads stripe-mock's output for the HTTP address it listens on.
type listenAddrs struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	sent bool
	http chan string
}

const httpListening = "Listening for HTTP at address: "

func (l *listenAddrs) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf.Write(p)
	if l.sent {
		return len(p), nil
	}
	out := l.buf.String()
	complete := out[:strings.LastIndexByte(out, '\n')+1]
	for _, line := range strings.Split(complete, "\n") {
		if a, ok := strings.CutPrefix(line, httpListening); ok {
			l.http <- strings.TrimSpace(a)
			l.sent = true
			break
		}
	}
	return len(p), nil
}

func (l *listenAddrs) output() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// findStripeMock finds the stripe-mock binary: $STRIPE_MOCK_BIN (`make test`
// sets it), else the copy `make test` installs under the project's .data/bin,
// else where a plain `go install` puts it (GOBIN, else each GOPATH's bin),
// else PATH.
func findStripeMock(projectDir string) (string, error) {
	if p := os.Getenv("STRIPE_MOCK_BIN"); p != "" {
		if !isFile(p) {
			return "", fmt.Errorf("STRIPE_MOCK_BIN=%s: no such file", p)
		}
		return p, nil
	}
	dirs := []string{projectDir}
	// One variable per call: `go env A B` prints an empty line for an
	// unset variable, which is easily lost when the output is trimmed.
	goEnv := func(name string) string {
		out, err := exec.Command("go", "env", name).Output()
		if err != nil {
			return ""
		}
		return strings.TrimSpace(string(out))
	}
	if gobin := goEnv("GOBIN"); gobin != "" {
		dirs = append(dirs, gobin)
	}
	for _, p := range filepath.SplitList(goEnv("GOPATH")) {
		dirs = append(dirs, filepath.Join(p, "bin"))
	}
	for _, d := range dirs {
		if p := filepath.Join(d, "stripe-mock"); isFile(p) {
			return p, nil
		}
	}
	if p, err := exec.LookPath("stripe-mock"); err == nil {
		return p, nil
	}
	return "", fmt.Errorf("billing tests need stripe-mock %s; `make test` installs it, or set STRIPE_MOCK_BIN to its path "+
		"(searched %s, then PATH)", stripeMockVersion, strings.Join(dirs, ", "))
}

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}

func waitForStripeMock(base string) error {
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		req, _ := http.NewRequest(http.MethodGet, base+"/v1/customers/cus_123", nil)
		req.Header.Set("Authorization", "Bearer "+testSecretKey)
		if res, err := http.DefaultClient.Do(req); err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("stripe-mock at %s did not answer within 30 s", base)
}

const (
	testSecretKey     = "sk_test_123"
	testWebhookSecret = "whsec_contactbook_test_secret"
	testPublicBase    = "https://app.contactbook.test"
)

// providerCall is one request the service made to the provider, and the
// status stripe-mock answered (400 when the request broke the API spec).
type providerCall struct {
	Method string
	Path   string
	Header http.Header
	Form   url.Values
	Status int
}

// provider is a recording proxy in front of stripe-mock, so tests can
// assert exactly what the service sent.
type provider struct {
	URL   string
	mu    sync.Mutex
	calls []providerCall
}

func newProvider(t *testing.T) *provider {
	t.Helper()
	target, err := url.Parse(stripeMockURL)
	if err != nil {
		t.Fatal(err)
	}
	p := &provider{}
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.ModifyResponse = func(res *http.Response) error {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.calls[len(p.calls)-1].Status = res.StatusCode
		return nil
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		form, _ := url.ParseQuery(string(body))
		p.mu.Lock()
		p.calls = append(p.calls, providerCall{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Form: form})
		p.mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(body))
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	p.URL = srv.URL
	return p
}

func (p *provider) Calls() []providerCall {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]providerCall(nil), p.calls...)
}

// newEnv starts the service (apptest.Setup, without a team: these tests
// sign their owners up) with billing configured against p (nil: no
// provider at all, billing off) plus extra variables.
func newEnv(t *testing.T, p *provider, extra map[string]string) *apptest.Env {
	t.Helper()
	vars := map[string]string{
		"STRIPE_WEBHOOK_SECRET": testWebhookSecret,
		"PUBLIC_BASE_URL":       testPublicBase,
	}
	if p != nil {
		vars["STRIPE_SECRET_KEY"] = testSecretKey
		vars["STRIPE_API_BASE"] = p.URL
	}
	for k, v := range extra {
		vars[k] = v
	}
	return apptest.Setup(t, apptest.Options{Env: vars, NoTeam: true}).Env
}

// fixture fetches an API object from stripe-mock, in the shape of the API
// version stripe-mock serves, for building realistic event payloads.
func fixture(t *testing.T, path string) map[string]any {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, stripeMockURL+path, nil)
	req.Header.Set("Authorization", "Bearer "+testSecretKey)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var obj map[string]any
	if err := json.NewDecoder(res.Body).Decode(&obj); err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("fixture %s: status %d, %v", path, res.StatusCode, err)
	}
	return obj
}

// sessionObject is a completed subscription checkout session for team.
func sessionObject(t *testing.T, teamID, customer, sub string) map[string]any {
	cs := fixture(t, "/v1/checkout/sessions/cs_test_123")
	cs["mode"] = "subscription"
	cs["status"] = "complete"
	cs["payment_status"] = "paid"
	cs["client_reference_id"] = teamID
	cs["metadata"] = map[string]any{"team_id": teamID}
	cs["customer"] = customer
	cs["subscription"] = sub
	return cs
}

// subscriptionObject is a subscription of team with status.
func subscriptionObject(t *testing.T, teamID, id, customer, status string) map[string]any {
	sub := fixture(t, "/v1/subscriptions/sub_123")
	sub["id"] = id
	sub["status"] = status
	sub["customer"] = customer
	sub["metadata"] = map[string]any{"team_id": teamID}
	return sub
}

// event wraps obj into a provider event envelope.
func event(id, typ string, created time.Time, obj map[string]any) map[string]any {
	return map[string]any{
		"id": id, "object": "event", "api_version": stripe.APIVersion, "type": typ,
		"created": created.Unix(), "livemode": false, "pending_webhooks": 1,
		"request": map[string]any{"id": nil, "idempotency_key": nil},
		"data":    map[string]any{"object": obj},
	}
}

// sendEvent signs ev with secret through stripe-go's test helper and
// delivers it to the webhook.
func sendEvent(t *testing.T, env *apptest.Env, secret string, ev map[string]any) *apptest.Response {
	t.Helper()
	body, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	return sendSigned(t, env, secret, body)
}

func sendSigned(t *testing.T, env *apptest.Env, secret string, body []byte) *apptest.Response {
	t.Helper()
	return env.Anonymous().Post("/api/payments/webhook", apptest.Raw{ContentType: "application/json", Body: body},
		"Stripe-Signature", signedHeader(body, secret))
}

// signedHeader is a valid Stripe-Signature header for body, made by
// stripe-go's own test helper.
func signedHeader(body []byte, secret string) string {
	return webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{Payload: body, Secret: secret}).Header
}

// teamBilling reads a team's add-on state and stored provider ids.
func teamBilling(t *testing.T, env *apptest.Env, teamID string) (addon, customer, sub string) {
	t.Helper()
	var c, s *string
	err := env.App.Pool.QueryRow(context.Background(),
		`SELECT campaign_addon, stripe_customer_id, stripe_subscription_id FROM teams WHERE id = $1`, teamID).Scan(&addon, &c, &s)
	if err != nil {
		t.Fatal(err)
	}
	if c != nil {
		customer = *c
	}
	if s != nil {
		sub = *s
	}
	return addon, customer, sub
}

func checkoutBody(plan, currency string) map[string]any {
	return map[string]any{"plan": plan, "currency": currency}
}

const checkoutPath = "/api/payments/create-campaign-checkout"
