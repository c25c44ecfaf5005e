// Package apptest runs the whole service against a throwaway PostgreSQL
// database for end-to-end tests over HTTP: a fresh migrated database per
// test, the real router behind an httptest server, an injectable clock, and
// small helpers to sign up users, create books and keys, and call the API.
package apptest

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/contactbook/contactbook/internal/app"
	"github.com/contactbook/contactbook/internal/apptest/logbuf"
	"github.com/contactbook/contactbook/internal/config"
	"github.com/contactbook/contactbook/internal/mailer/mailertest"
	"github.com/contactbook/contactbook/internal/postgres/pgtest"
	"github.com/contactbook/contactbook/internal/testclock"
)

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
	logs     *logbuf.Buffer
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
	// CAMPAIGN_SCHEDULE, the prunes, the account email
	// requeue) as in production; without it tests run that work when they
	// mean to.
	PeriodicJobs bool
	// WithoutJobs works no jobs: requests queue them, as on an instance
	// that has stopped before working them. Account emails are jobs too:
	// none is sent.
	WithoutJobs bool

	// Bare starts the service alone on the settings above: no fake
	// provider, no team, none of the settings Setup adds (MAILER_BASE_URL,
	// PUBLIC_BASE_URL, JWT_TTL). The Team holds the Env only. For tests of
	// the service's own defaults and of instances wired by hand.
	Bare bool

	// The options below are the team's and the provider's; Bare ignores
	// them.

	// Addon is the Campaigns add-on state of Setup's team ("" is active).
	Addon string
	// OwnerOnly leaves the admin, member and viewer out (their fields stay
	// nil), for tests that need one user and not the three sign-ups.
	OwnerOnly bool
	// NoTeam starts the service and the fake provider only, for tests that
	// sign their users up themselves: the Team's users, book and clients
	// stay empty.
	NoTeam bool
	// AccountMail sends the account emails (invitations, resets, sign-in
	// codes) to the fake provider from AccountMailSender, as production
	// does with SYSTEM_MAILER_API_KEY; without it they are only logged.
	AccountMail bool
	// Mail is the fake provider to send to (another Team's Mail: two
	// instances of the service sending to one provider); nil starts one.
	Mail *mailertest.Server
}

// newEnv starts the service on a fresh database; it stops with the test.
func newEnv(t testing.TB, o Options) *Env {
	t.Helper()
	dbURL := o.DatabaseURL
	if dbURL == "" {
		dbURL = pgtest.Setup(t).URL
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
	clock := testclock.At(time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC))
	now := clock.Now
	if o.RealClock {
		now = time.Now
	}
	logs := &logbuf.Buffer{}
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
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
		workers.Go(func() { _ = a.TransactionalRunner.Run(workCtx) })
	}
	t.Cleanup(func() {
		srv.Close()
		stopWork()
		workers.Wait()
		a.Close()
	})
	return &Env{T: t, App: a, Server: srv, URL: srv.URL, DBURL: dbURL, Clock: clock, logs: logs}
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

// Logs returns what the service has logged so far.
func (e *Env) Logs() string {
	return e.logs.String()
}

// Unique returns a string unique within the Env, for emails and names.
func (e *Env) Unique(prefix string) string {
	return prefix + strconv.FormatInt(e.counter.Add(1), 10)
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

// QueryString runs a SQL query returning one text value, for assertions
// on database state.
func (e *Env) QueryString(sql string, args ...any) string {
	e.T.Helper()
	var s string
	if err := e.App.Pool.QueryRow(context.Background(), sql, args...).Scan(&s); err != nil {
		e.T.Fatalf("apptest: %s: %v", sql, err)
	}
	return s
}
