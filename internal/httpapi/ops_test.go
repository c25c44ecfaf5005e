package httpapi_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"

	"github.com/contactbook/contactbook/internal/apptest"
	"github.com/contactbook/contactbook/internal/httpapi"
)

// TestRootRedirectsToDashboard: a browser opening the service lands on the
// dashboard, for GET and HEAD alike.
func TestRootRedirectsToDashboard(t *testing.T) {
	t.Parallel()
	env := apptest.Setup(t, apptest.Options{Bare: true}).Env
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, method := range []string{http.MethodGet, http.MethodHead} {
		req, _ := http.NewRequest(method, env.URL+"/", nil)
		res, err := noFollow.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusFound || res.Header.Get("Location") != "/app/" {
			t.Fatalf("%s /: %d, Location %q; want 302 to /app/", method, res.StatusCode, res.Header.Get("Location"))
		}
	}
}

// TestHeadAnswersAsGet: HEAD on any GET route answers what GET answers,
// without a body; a route without GET still refuses HEAD.
func TestHeadAnswersAsGet(t *testing.T) {
	t.Parallel()
	env := apptest.Setup(t, apptest.Options{Bare: true}).Env
	owner := env.Signup("owner")
	key := owner.NewKey()

	// Every GET route, anonymously: same status as GET (mostly 401), never 405.
	routes, ok := env.App.Handler.(chi.Routes)
	if !ok {
		t.Fatalf("the handler is a %T, not a chi router", env.App.Handler)
	}
	var gets []string
	err := chi.Walk(routes, func(method, route string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		if method == http.MethodGet {
			gets = append(gets, paramName.ReplaceAllString(strings.ReplaceAll(route, "/*", ""), "6f1c1d7e-0000-4000-8000-000000000000"))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(gets) < 20 {
		t.Fatalf("only %d GET routes found: %v", len(gets), gets)
	}
	for _, path := range gets {
		if path == "/" || path == "/app" {
			continue // redirects, followed by the client: TestRootRedirectsToDashboard
		}
		get := env.Anonymous().Get(path)
		head := env.Anonymous().Do(http.MethodHead, path, nil)
		if head.Status != get.Status || head.Status == http.StatusMethodNotAllowed || len(head.Body) != 0 {
			t.Errorf("HEAD %s: %d with %d bytes; GET: %d", path, head.Status, len(head.Body), get.Status)
		}
	}

	// Authenticated, on each router: the GET's status and headers.
	for _, tc := range []struct {
		client *apptest.Client
		path   string
	}{
		{owner.Client, "/api/books"},
		{key, "/api/v1/books"},
		{env.Anonymous(), "/healthz"},
		{env.Anonymous(), "/docs"},
		{env.Anonymous(), "/api/openapi.json"},
	} {
		get := tc.client.Get(tc.path).Expect(http.StatusOK)
		head := tc.client.Do(http.MethodHead, tc.path, nil).Expect(http.StatusOK)
		if len(head.Body) != 0 || head.Header.Get("Content-Type") != get.Header.Get("Content-Type") {
			t.Errorf("HEAD %s: %d bytes, Content-Type %q; GET's is %q", tc.path, len(head.Body),
				head.Header.Get("Content-Type"), get.Header.Get("Content-Type"))
		}
	}
	env.Anonymous().Do(http.MethodHead, "/api/auth/login", nil).Expect(http.StatusMethodNotAllowed)
}

// TestMetricsEndpoint: the public port serves /metrics only to holders of
// METRICS_TOKEN; without a token configured the path does not exist there.
func TestMetricsEndpoint(t *testing.T) {
	t.Parallel()
	apptest.Setup(t, apptest.Options{Bare: true}).Env.Anonymous().Get("/metrics").ExpectError(http.StatusNotFound, "NOT_FOUND")

	const token = "metrics-token-0123456789"
	env := apptest.Setup(t, apptest.Options{Bare: true, Env: map[string]string{"METRICS_TOKEN": token}}).Env
	owner := env.Signup("owner")
	owner.Get("/api/books").Expect(http.StatusOK)
	owner.Get("/api/books/not-a-uuid").Expect(http.StatusNotFound)
	env.Anonymous().Get("/metrics").ExpectError(http.StatusUnauthorized, "UNAUTHORIZED")
	env.Client("metrics-token-wrong-guess").Get("/metrics").ExpectError(http.StatusUnauthorized, "UNAUTHORIZED")
	owner.Get("/metrics").ExpectError(http.StatusUnauthorized, "UNAUTHORIZED") // a login token is not the metrics token
	body := string(env.Client(token).Get("/metrics").Expect(http.StatusOK).Body)
	for _, want := range []string{
		`contactbook_http_requests_total{method="GET",route="/api/books",status="200"} 1`,
		`contactbook_http_requests_total{method="GET",route="/api/books/{id}",status="404"} 1`,
		`contactbook_db_pool_max_conns`,
		`contactbook_webhook_queue_depth 0`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %q", want)
		}
	}
}

// TestMetricsHandler: the handler of the metrics listener (METRICS_ADDR)
// serves /metrics, to anyone who reaches it without a token configured,
// else only with the token.
func TestMetricsHandler(t *testing.T) {
	t.Parallel()
	metrics := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "up 1\n") })
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	for _, tc := range []struct {
		token, auth, path string
		want              int
	}{
		{"", "", "/metrics", http.StatusOK},
		{"", "", "/other", http.StatusNotFound},
		{"metrics-token-0123456789", "", "/metrics", http.StatusUnauthorized},
		{"metrics-token-0123456789", "Bearer metrics-token-9876543210", "/metrics", http.StatusUnauthorized},
		{"metrics-token-0123456789", "Bearer metrics-token-0123456789", "/metrics", http.StatusOK},
	} {
		srv := httptest.NewServer(httpapi.MetricsHandler(log, metrics, tc.token))
		req, _ := http.NewRequest(http.MethodGet, srv.URL+tc.path, nil)
		if tc.auth != "" {
			req.Header.Set("Authorization", tc.auth)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		srv.Close()
		if res.StatusCode != tc.want || (tc.want == http.StatusOK && string(body) != "up 1\n") {
			t.Errorf("token %q, %s %q: %d %s, want %d", tc.token, tc.path, tc.auth, res.StatusCode, body, tc.want)
		}
	}
}
