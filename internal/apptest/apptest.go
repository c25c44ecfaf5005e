// Package apptest runs the whole service against a throwaway PostgreSQL
// database for end-to-end tests over HTTP: a fresh migrated database per
// test, the real router behind an httptest server, an injectable clock, and
// small helpers to sign up users, create books and keys, and call the API.
package apptest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/contactbook/contactbook/internal/app"
	"github.com/contactbook/contactbook/internal/auth"
	"github.com/contactbook/contactbook/internal/config"
	"github.com/contactbook/contactbook/internal/postgres/pgtest"
)

// Clock is a settable clock for rules that depend on time.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock forward.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// Set puts the clock at t.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
}

// Env is one running service on its own database.
type Env struct {
	T        testing.TB
	App      *app.App
	Server   *httptest.Server
	URL      string
	DBURL    string
	Clock    *Clock
	counter  atomic.Int64
	reqCount atomic.Int64
	logw     *lockedWriter
}

// Options adjust an Env.
type Options struct {
	// Env holds configuration variables on top of the test defaults.
	Env map[string]string
	// RealClock uses time.Now instead of the settable clock.
	RealClock bool
	// DatabaseURL runs the service on an existing database (another Env's
	// DBURL: two instances of the service on one database) instead of a
	// fresh one.
	DatabaseURL string
	// PeriodicJobs enqueues the periodic jobs (the campaign scheduler on
	// CAMPAIGN_SCHEDULE, the hourly prune, the sweep, the account email
	// requeue) as in production; without it tests run that work when they
	// mean to.
	PeriodicJobs bool
	// WithoutJobs works no jobs: requests queue them, as on an instance
	// that has stopped before working them. Account emails are jobs too:
	// none is sent.
	WithoutJobs bool
}

// New starts the service on a fresh database; it stops with the test.
func New(t testing.TB, opts ...Options) *Env {
	t.Helper()
	var o Options
	if len(opts) > 0 {
		o = opts[0]
	}
	dbURL := o.DatabaseURL
	if dbURL == "" {
		dbURL = pgtest.NewURL(t)
	}
	vars := map[string]string{
		"DATABASE_URL":           dbURL,
		"JWT_SECRET":             "test-secret-0123456789abcdef",
		"AUTO_MIGRATE":           "false",
		"DB_MAX_CONNS":           "8",
		"WEBHOOK_ALLOW_INSECURE": "true",
		"IMAGES_DIR":             t.TempDir(),
		"LOG_LEVEL":              "debug",
		"LOG_FORMAT":             "text",
		// bcrypt at its minimum cost: signups dominate test time otherwise.
		"PASSWORD_HASH_COST": "4",
	}
	for k, v := range o.Env {
		vars[k] = v
	}
	cfg, err := config.Load(func(k string) string { return vars[k] })
	if err != nil {
		t.Fatalf("apptest: config: %v", err)
	}
	clock := &Clock{now: time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)}
	now := clock.Now
	if o.RealClock {
		now = time.Now
	}
	logBuf := &bytes.Buffer{}
	logw := &lockedWriter{w: logBuf}
	log := slog.New(slog.NewTextHandler(logw, &slog.HandlerOptions{Level: slog.LevelDebug}))
	a, err := app.Build(context.Background(), cfg, log, app.Options{Now: now, WithoutPeriodicJobs: !o.PeriodicJobs})
	if err != nil {
		t.Fatalf("apptest: build: %v", err)
	}
	handler := a.Handler
	// Benchmarks measure the service, not the contract check.
	if _, bench := t.(*testing.B); !bench {
		handler = validating(t, handler)
	}
	srv := httptest.NewServer(handler)
	// The job queue runs as in production: it works the campaign runs and
	// imports that requests ask for and sends (or, with no
	// SYSTEM_MAILER_API_KEY, logs) the account emails they queue.
	workCtx, stopWork := context.WithCancel(context.Background())
	var workers sync.WaitGroup
	if !o.WithoutJobs {
		workers.Go(func() { _ = a.Jobs.Run(workCtx) })
	}
	t.Cleanup(func() {
		srv.Close()
		stopWork()
		workers.Wait()
		a.Close()
	})
	return &Env{T: t, App: a, Server: srv, URL: srv.URL, DBURL: dbURL, Clock: clock, logw: logw}
}

// Metrics returns the service's metrics as a scrape sees them, straight
// from the metrics handler (the public port serves them only to holders of
// METRICS_TOKEN).
func (e *Env) Metrics() string {
	e.T.Helper()
	rec := httptest.NewRecorder()
	e.App.Metrics.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != http.StatusOK {
		e.T.Fatalf("apptest: metrics: status %d: %s", rec.Code, rec.Body)
	}
	return rec.Body.String()
}

// FreeAddr returns a loopback address whose port was free a moment ago,
// for tests that start the service on addresses of their own.
func FreeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

type lockedWriter struct {
	mu sync.Mutex
	w  *bytes.Buffer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// Logs returns what the service has logged so far.
func (e *Env) Logs() string {
	e.logw.mu.Lock()
	defer e.logw.mu.Unlock()
	return e.logw.w.String()
}

// Unique returns a string unique within the Env, for emails and names.
func (e *Env) Unique(prefix string) string {
	return prefix + strconv.FormatInt(e.counter.Add(1), 10)
}

// Response is an answer from the service.
type Response struct {
	T      testing.TB
	Status int
	Header http.Header
	Body   []byte
	parsed any
}

// Client calls the API with one set of credentials.
type Client struct {
	env    *Env
	Token  string // JWT or API key
	BookID string // sent as X-Book-ID when not empty
}

// Client returns a client with the given bearer credential.
func (e *Env) Client(token string) *Client { return &Client{env: e, Token: token} }

// Anonymous returns a client without credentials.
func (e *Env) Anonymous() *Client { return &Client{env: e} }

// InBook returns a copy of c that sends X-Book-ID: bookID.
func (c *Client) InBook(bookID string) *Client {
	cp := *c
	cp.BookID = bookID
	return &cp
}

// Raw is a body sent as is, with the given content type.
type Raw struct {
	ContentType string
	Body        []byte
}

// Do sends a request. body may be nil, Raw, or a value sent as JSON.
func (c *Client) Do(method, path string, body any, headers ...string) *Response {
	t := c.env.T
	t.Helper()
	var rd io.Reader
	contentType := ""
	switch b := body.(type) {
	case nil:
	case Raw:
		rd, contentType = bytes.NewReader(b.Body), b.ContentType
	default:
		buf, err := json.Marshal(b)
		if err != nil {
			t.Fatalf("apptest: marshal body: %v", err)
		}
		rd, contentType = bytes.NewReader(buf), "application/json"
	}
	req, err := http.NewRequest(method, c.env.URL+path, rd)
	if err != nil {
		t.Fatalf("apptest: %v", err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	if c.BookID != "" {
		req.Header.Set("X-Book-ID", c.BookID)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("apptest: %s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	out, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatalf("apptest: read body: %v", err)
	}
	c.env.reqCount.Add(1)
	return &Response{T: t, Status: res.StatusCode, Header: res.Header, Body: out}
}

// Get, Post, Patch, Put and Delete are Do with a method.
func (c *Client) Get(path string, headers ...string) *Response {
	c.env.T.Helper()
	return c.Do(http.MethodGet, path, nil, headers...)
}
func (c *Client) Post(path string, body any, headers ...string) *Response {
	c.env.T.Helper()
	return c.Do(http.MethodPost, path, body, headers...)
}
func (c *Client) Patch(path string, body any, headers ...string) *Response {
	c.env.T.Helper()
	return c.Do(http.MethodPatch, path, body, headers...)
}
func (c *Client) Put(path string, body any, headers ...string) *Response {
	c.env.T.Helper()
	return c.Do(http.MethodPut, path, body, headers...)
}
func (c *Client) Delete(path string, headers ...string) *Response {
	c.env.T.Helper()
	return c.Do(http.MethodDelete, path, nil, headers...)
}

// Expect fails the test unless the status is want; it returns r.
func (r *Response) Expect(want int) *Response {
	r.T.Helper()
	if r.Status != want {
		r.T.Fatalf("status %d, want %d; body: %s", r.Status, want, truncate(r.Body))
	}
	return r
}

// ExpectError fails unless the answer is the error envelope with status
// and code.
func (r *Response) ExpectError(status int, code string) *Response {
	r.T.Helper()
	r.Expect(status)
	if got := r.String("error.code"); got != code {
		r.T.Fatalf("error code %q, want %q; body: %s", got, code, truncate(r.Body))
	}
	if r.String("error.message") == "" {
		r.T.Fatalf("error without message: %s", truncate(r.Body))
	}
	return r
}

func truncate(b []byte) string {
	if len(b) > 2000 {
		return string(b[:2000]) + "..."
	}
	return string(b)
}

// Value returns the JSON value at a dotted path ("data.items.0.id"); nil
// when absent.
func (r *Response) Value(path string) any {
	r.T.Helper()
	if r.parsed == nil {
		if err := json.Unmarshal(r.Body, &r.parsed); err != nil {
			r.T.Fatalf("body is not JSON (%v): %s", err, truncate(r.Body))
		}
	}
	cur := r.parsed
	if path == "" {
		return cur
	}
	for _, part := range strings.Split(path, ".") {
		switch v := cur.(type) {
		case map[string]any:
			cur = v[part]
		case []any:
			i, err := strconv.Atoi(part)
			if err != nil || i < 0 || i >= len(v) {
				return nil
			}
			cur = v[i]
		default:
			return nil
		}
	}
	return cur
}

// Has reports whether the path exists (even as null).
func (r *Response) Has(path string) bool {
	r.T.Helper()
	parent, last := "", path
	if i := strings.LastIndexByte(path, '.'); i >= 0 {
		parent, last = path[:i], path[i+1:]
	}
	m, ok := r.Value(parent).(map[string]any)
	if !ok {
		return false
	}
	_, ok = m[last]
	return ok
}

// String returns the string at path ("" when absent or not a string).
func (r *Response) String(path string) string {
	r.T.Helper()
	s, _ := r.Value(path).(string)
	return s
}

// Int returns the number at path as an int (0 when absent).
func (r *Response) Int(path string) int {
	r.T.Helper()
	f, _ := r.Value(path).(float64)
	return int(f)
}

// Bool returns the boolean at path.
func (r *Response) Bool(path string) bool {
	r.T.Helper()
	b, _ := r.Value(path).(bool)
	return b
}

// Len returns the length of the array at path (-1 when not an array).
func (r *Response) Len(path string) int {
	r.T.Helper()
	a, ok := r.Value(path).([]any)
	if !ok {
		return -1
	}
	return len(a)
}

// Decode unmarshals the JSON at path into dst.
func (r *Response) Decode(path string, dst any) {
	r.T.Helper()
	b, err := json.Marshal(r.Value(path))
	if err != nil {
		r.T.Fatal(err)
	}
	if err := json.Unmarshal(b, dst); err != nil {
		r.T.Fatalf("decode %s: %v", path, err)
	}
}

// User is a signed-up user with their first team.
type User struct {
	*Client
	ID     string
	Email  string
	TeamID string
}

// WaitJobs waits until no job of the queue is queued or running (the
// test's database holds only its own jobs); it fails the test after 30 s.
func (e *Env) WaitJobs() {
	e.T.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var n int
		if err := e.App.Pool.QueryRow(context.Background(),
			`SELECT count(*) FROM river_job WHERE state IN ('available', 'pending', 'retryable', 'running', 'scheduled')`).Scan(&n); err != nil {
			e.T.Fatalf("apptest: jobs: %v", err)
		}
		if n == 0 {
			return
		}
		if time.Now().After(deadline) {
			e.T.Fatalf("apptest: %d jobs still queued or running after 30 s", n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Signup creates a user (owner of a new team) and returns a client that
// carries their token.
func (e *Env) Signup(name string) *User {
	e.T.Helper()
	email := strings.ToLower(e.Unique(name)) + "@example.com"
	r := e.Anonymous().Post("/api/auth/signup", map[string]string{
		"email": email, "password": "correct horse battery", "name": name, "team_name": name + "'s team",
	}).Expect(http.StatusCreated)
	return &User{Client: e.Client(r.String("data.token")), ID: r.String("data.user.id"), Email: email, TeamID: r.String("data.team.id")}
}

// Join signs up a user and adds them to team with role (by an owner).
func (e *Env) Join(owner *User, name, role string) *User {
	e.T.Helper()
	u := e.Signup(name)
	e.AddMember(owner, u, role)
	u.TeamID = owner.TeamID
	return u
}

// AddMember makes u a member of admin's team through the invitation flow:
// admin invites u's address, u accepts. The emailed token is not at hand,
// so the invitation's stored hash is set to that of a token made here.
func (e *Env) AddMember(admin, u *User, role string) {
	e.T.Helper()
	id := admin.Post(fmt.Sprintf("/api/teams/%s/invitations", admin.TeamID), map[string]string{"email": u.Email, "role": role}).
		Expect(http.StatusCreated).String("data.id")
	token, hash, err := auth.NewLinkToken()
	if err != nil {
		e.T.Fatal(err)
	}
	if _, err := e.App.Pool.Exec(context.Background(), `UPDATE invitations SET token_hash = $2 WHERE id = $1`, id, hash); err != nil {
		e.T.Fatalf("apptest: set invitation token: %v", err)
	}
	u.Post("/api/invitations/accept", map[string]string{"token": token}).Expect(http.StatusOK)
}

// CreateBook creates a book in the user's team and returns its id.
func (u *User) CreateBook(name string) string {
	u.env.T.Helper()
	return u.Post("/api/books", map[string]any{"team_id": u.TeamID, "name": name}).
		Expect(http.StatusCreated).String("data.id")
}

// NewKey creates an API key of the user's team and returns a client that
// carries it.
func (u *User) NewKey() *Client {
	u.env.T.Helper()
	key := u.Post(fmt.Sprintf("/api/teams/%s/api-keys", u.TeamID), map[string]string{"name": "test key"}).
		Expect(http.StatusCreated).String("data.key")
	return u.env.Client(key)
}

// SetAddon sets the user's team's Campaigns add-on state directly.
func (u *User) SetAddon(state string) {
	u.env.T.Helper()
	if _, err := u.env.App.Pool.Exec(context.Background(), `UPDATE teams SET campaign_addon = $2 WHERE id = $1`, u.TeamID, state); err != nil {
		u.env.T.Fatalf("apptest: set add-on: %v", err)
	}
}

// QueryInt runs a SQL query returning one integer, for assertions on
// database state.
func (e *Env) QueryInt(sql string, args ...any) int {
	e.T.Helper()
	var n int
	if err := e.App.Pool.QueryRow(context.Background(), sql, args...).Scan(&n); err != nil {
		e.T.Fatalf("apptest: %s: %v", sql, err)
	}
	return n
}
