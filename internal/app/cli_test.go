package app_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/contactbook/contactbook/internal/app"
	"github.com/contactbook/contactbook/internal/apptest"
	"github.com/contactbook/contactbook/internal/postgres/pgbouncertest"
	"github.com/contactbook/contactbook/internal/postgres/pgtest"
)

func run(t *testing.T, ctx context.Context, env map[string]string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err = app.Main(ctx, args, func(k string) string { return env[k] }, &out, &errOut)
	return out.String(), errOut.String(), err
}

// TestHelp: every command explains itself on -h/--help, exits 0 and
// writes to stdout, whatever the configuration (here an invalid one).
func TestHelp(t *testing.T) {
	t.Parallel()
	broken := map[string]string{"LOG_LEVEL": "loud", "JWT_SECRET": "short"}
	for _, args := range [][]string{
		{"help"}, {"-h"}, {"--help"},
		{"serve", "--help"}, {"serve", "-h"},
		{"migrate", "--help"},
		{"addon", "--help"}, {"addon", "set", "--help"}, {"addon", "set", "-h"},
		{"images", "--help"}, {"images", "import", "--help"},
	} {
		stdout, stderr, err := run(t, context.Background(), broken, args...)
		if err != nil || !strings.HasPrefix(stdout, "usage: contactbook") || stderr != "" {
			t.Errorf("%q: err %v, stdout %q, stderr %q; want the usage on stdout and no error", args, err, stdout, stderr)
		}
	}
	stdout, _, _ := run(t, context.Background(), nil, "serve", "--help")
	for _, want := range []string{"-addr", "-no-migrate"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("serve --help does not describe %s:\n%s", want, stdout)
		}
	}
}

// TestCommandLineMistakes: a mistake fails with what went wrong and the
// usage, before anything connects anywhere.
func TestCommandLineMistakes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"frobnicate"}, `unknown command "frobnicate"`},
		{[]string{"serve", "--bogus"}, "flag provided but not defined: -bogus"},
		{[]string{"serve", "extra"}, `unexpected argument "extra"`},
		{[]string{"migrate", "now"}, `unexpected argument "now"`},
		{[]string{"addon"}, "subcommand is missing"},
		{[]string{"addon", "get"}, `unexpected argument "get"`},
		{[]string{"addon", "set", "--team", "acme", "--status", "active"}, "--team must be a team id"},
		{[]string{"images"}, "subcommand is missing"},
		{[]string{"images", "import", "now"}, `unexpected argument "now"`},
	} {
		_, _, err := run(t, context.Background(), nil, tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "usage: contactbook") {
			t.Errorf("%q: %v; want an error with %q and the usage", tc.args, err, tc.want)
		}
	}
}

// TestAddonSetSaysOnlyWhatItDid: `addon set` does its job and reports it,
// without the start-up warnings about settings it does not use.
func TestAddonSetSaysOnlyWhatItDid(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := pgtest.Setup(t)
	dbURL, conn := db.URL, db.Pool
	// The command runs on its own, without the service: the team it acts
	// on is a row written directly.
	var teamID string
	if err := conn.QueryRow(ctx, `INSERT INTO teams (name) VALUES ('Acme') RETURNING id`).Scan(&teamID); err != nil {
		t.Fatal(err)
	}
	// No JWT_SECRET, no payment provider: serve would warn about both.
	env := map[string]string{"DATABASE_URL": dbURL, "LOG_FORMAT": "text"}
	stdout, stderr, err := run(t, ctx, env, "addon", "set", "--team", teamID, "--status", "active")
	if err != nil {
		t.Fatalf("addon set: %v\n%s", err, stderr)
	}
	if stdout != "team "+teamID+": campaign add-on active\n" {
		t.Errorf("stdout %q", stdout)
	}
	if strings.Contains(stderr, "level=WARN") || strings.Contains(stderr, "STRIPE") || strings.Contains(stderr, "JWT_SECRET") {
		t.Errorf("addon set warns about settings it does not use:\n%s", stderr)
	}
	var addon string
	if err := conn.QueryRow(ctx, `SELECT campaign_addon FROM teams WHERE id = $1`, teamID).Scan(&addon); err != nil || addon != "active" {
		t.Fatalf("campaign_addon %q (%v)", addon, err)
	}

	// A trial granted by an operator after the team's own trial ended runs
	// for a fresh 14 days; one that ended would read as no add-on.
	if _, err := conn.Exec(ctx, `UPDATE teams SET trial_started_at = now() - interval '30 days', trial_ends_at = now() - interval '16 days' WHERE id = $1`, teamID); err != nil {
		t.Fatal(err)
	}
	if _, stderr, err := run(t, ctx, env, "addon", "set", "--team", teamID, "--status", "trial"); err != nil {
		t.Fatalf("addon set trial: %v\n%s", err, stderr)
	}
	var days float64
	if err := conn.QueryRow(ctx, `SELECT campaign_addon, extract(epoch FROM trial_ends_at - now()) / 86400 FROM teams WHERE id = $1`, teamID).Scan(&addon, &days); err != nil || addon != "trial" || days < 13.9 || days > 14 {
		t.Fatalf("after addon set trial: campaign_addon %q, trial ends in %.2f days (%v); want a 14-day trial", addon, days, err)
	}
}

// TestServe: serve reports the settings that leave features off, serves
// the API on HTTP_ADDR and the metrics on METRICS_ADDR only, and returns
// nil (exit status 0) once told to stop.
func TestServe(t *testing.T) {
	t.Parallel()
	addr, metricsAddr := apptest.FreeAddr(t), apptest.FreeAddr(t)
	env := map[string]string{
		"DATABASE_URL": pgtest.Setup(t).URL, "AUTO_MIGRATE": "false", "LOG_FORMAT": "text",
		"HTTP_ADDR": addr, "METRICS_ADDR": metricsAddr, "IMAGES_DIR": t.TempDir(),
	}
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	type result struct {
		stderr string
		err    error
	}
	done := make(chan result, 1)
	go func() {
		_, stderr, err := run(t, ctx, env, "serve")
		done <- result{stderr, err}
	}()

	get := func(url string) (int, string) {
		res, err := http.Get(url)
		if err != nil {
			return 0, err.Error()
		}
		defer res.Body.Close()
		body, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(body)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		if status, _ := get("http://" + addr + "/healthz"); status == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			stop()
			r := <-done
			t.Fatalf("serve did not answer within 30 s: %v\n%s", r.err, r.stderr)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if status, body := get("http://" + metricsAddr + "/metrics"); status != http.StatusOK || !strings.Contains(body, "contactbook_db_pool_max_conns") {
		t.Errorf("GET /metrics on METRICS_ADDR: %d %.200s", status, body)
	}
	if status, body := get("http://" + addr + "/metrics"); status != http.StatusNotFound {
		t.Errorf("GET /metrics on the public port: %d %.200s; want 404", status, body)
	}

	stop()
	r := <-done
	if r.err != nil {
		t.Fatalf("serve after a stop: %v\n%s", r.err, r.stderr)
	}
	// Without PUBLIC_BASE_URL, links and the API reference point at the
	// address the service listens on.
	base := "http://" + addr
	for _, want := range []string{"JWT_SECRET is not set", "billing is off", "billing webhook is off", "SYSTEM_MAILER_API_KEY is not set", "shutting down",
		"public_base_url=" + base + " ", "api_reference=" + base + "/docs", "PUBLIC_BASE_URL is not set: links in emails, image URLs and the API reference use " + base} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("serve's log lacks %q:\n%s", want, r.stderr)
		}
	}
}

// Through PgBouncer in transaction mode with DATABASE_POOL_MODE left at
// session, serve refuses to start, naming the setting, instead of
// starting and answering 500s; so does a DATABASE_DIRECT_URL that is the
// pooler. With both set right it starts.
func TestServeRefusesATransactionPoolerInSessionMode(t *testing.T) {
	t.Parallel()
	dbURL := pgtest.Setup(t).URL
	bouncer := pgbouncertest.Start(t, dbURL, pgbouncertest.Options{PoolSize: 3})
	pooled := bouncer.URL(dbURL)
	for _, c := range []struct {
		name string
		env  map[string]string
		want string
	}{
		{"pool mode left at session", map[string]string{"DATABASE_URL": pooled}, "DATABASE_POOL_MODE=transaction"},
		{"direct URL left at the pooler", map[string]string{"DATABASE_URL": pooled, "DATABASE_POOL_MODE": "transaction"}, "DATABASE_DIRECT_URL to PostgreSQL itself"},
	} {
		addr := apptest.FreeAddr(t)
		env := map[string]string{"HTTP_ADDR": addr, "IMAGES_DIR": t.TempDir(), "LOG_FORMAT": "text"}
		for k, v := range c.env {
			env[k] = v
		}
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		_, stderr, err := run(t, ctx, env, "serve")
		cancel()
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "transaction pooler") {
			t.Fatalf("%s: serve returned %v, want a refusal naming %s\n%s", c.name, err, c.want, stderr)
		}
		if strings.Contains(stderr, "msg=listening") {
			t.Fatalf("%s: serve listened before refusing:\n%s", c.name, stderr)
		}
	}
	// Set right, it starts and answers.
	addr := apptest.FreeAddr(t)
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, _, err := run(t, ctx, map[string]string{"DATABASE_URL": pooled, "DATABASE_DIRECT_URL": dbURL, "DATABASE_POOL_MODE": "transaction",
			"HTTP_ADDR": addr, "IMAGES_DIR": t.TempDir()}, "serve")
		done <- err
	}()
	deadline := time.Now().Add(30 * time.Second)
	for {
		res, err := http.Get("http://" + addr + "/readyz")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			stop()
			t.Fatalf("serve through PgBouncer set right did not become ready: %v", <-done)
		}
		time.Sleep(50 * time.Millisecond)
	}
	stop()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
