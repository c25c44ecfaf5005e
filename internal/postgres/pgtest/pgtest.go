// Package pgtest gives tests their own throwaway PostgreSQL databases. The
// schema is migrated once into a template database named by a hash of the
// migrations; each test then gets a fresh clone (CREATE DATABASE ...
// TEMPLATE, a few milliseconds), dropped when the test ends; a test whose
// database is left behind fails. The server comes from DATABASE_URL, else
// the local default on 127.0.0.1:5432.
package pgtest

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/contactbook/contactbook/internal/postgres"
	"github.com/contactbook/contactbook/migrations"
)

// ServerURL is the server tests create their databases on.
func ServerURL() string {
	if u := os.Getenv("DATABASE_URL"); u != "" {
		return u
	}
	return "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"
}

// Database is a test's database: its URL, a pool on it (closed when the
// test ends) and the same pool wrapped as the service wires it
// (postgres.Wrap), whose errors come out translated.
type Database struct {
	URL  string
	Pool *pgxpool.Pool
	DB   *postgres.Database
	// Plans holds the plans of the pool's statements, with RecordPlans
	// (nil otherwise).
	Plans *PlanLog
}

// Option says how a test's database differs from a fresh migrated one.
type Option func(*options)

type options struct {
	empty    bool
	url      string
	maxConns int32
	plans    PlanMode
}

// Empty creates the database without a schema, for tests of the
// migrations themselves.
func Empty() Option { return func(o *options) { o.empty = true } }

// On opens the pool on an existing database (another Setup's URL) instead
// of creating one: a second pool, as a second instance of the service
// holds. The database stays with the test that created it.
func On(url string) Option { return func(o *options) { o.url = url } }

// MaxConns sizes the pool (8 by default).
func MaxConns(n int32) Option { return func(o *options) { o.maxConns = n } }

// RecordPlans has the pool's connections report the plan of every
// statement they execute, in mode, into Database.Plans (see PlanLog).
func RecordPlans(mode PlanMode) Option { return func(o *options) { o.plans = mode } }

// Setup is how a test gets a database: a fresh clone of the migrated
// template, dropped when t ends, with a pool on it. Options say what
// differs.
func Setup(t testing.TB, opts ...Option) *Database {
	t.Helper()
	o := options{maxConns: 8}
	for _, opt := range opts {
		opt(&o)
	}
	url := o.url
	if url == "" {
		url = newDatabase(t, !o.empty)
	}
	d := &Database{URL: url}
	var err error
	if o.plans != "" {
		d.Pool, d.Plans, err = planPool(url, o.maxConns, o.plans)
	} else {
		d.Pool, err = postgres.Connect(context.Background(), url, o.maxConns)
	}
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	t.Cleanup(d.Pool.Close)
	d.DB = postgres.Wrap(d.Pool)
	return d
}

// namePrefix starts the name of every database a test creates; the Unix
// time that follows lets a later run recognise what a killed run left.
const namePrefix = "cbtest_"

// staleAfter is the age after which a test database is a leftover: no test
// run takes that long (`make test` times out after 10 minutes).
const staleAfter = 2 * time.Hour

func newDatabase(t testing.TB, migrated bool) string {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	admin, err := pgx.Connect(ctx, ServerURL())
	if err != nil {
		t.Fatalf("pgtest: connect to %s: %v (is PostgreSQL running? set DATABASE_URL)", redact(ServerURL()), err)
	}
	defer admin.Close(ctx)

	create := "CREATE DATABASE %s"
	tmpl := ""
	if migrated {
		if tmpl, err = ensureTemplate(ctx, admin); err != nil {
			t.Fatalf("pgtest: template: %v", err)
		}
		create += " TEMPLATE " + tmpl + " STRATEGY FILE_COPY"
	}
	name := fmt.Sprintf("%s%d_%s", namePrefix, time.Now().Unix(), randomHex(6))
	if _, err := admin.Exec(ctx, fmt.Sprintf(create, name)); err != nil {
		t.Fatalf("pgtest: create database: %v", err)
	}
	if tmpl != "" {
		if err := copySettings(ctx, admin, tmpl, name); err != nil {
			t.Fatalf("pgtest: %v", err)
		}
	}
	t.Cleanup(func() {
		if err := drop(name); err != nil {
			t.Errorf("pgtest: the test's database is left behind: %v", err)
		}
	})
	return withDatabase(ServerURL(), name)
}

// drop drops database name on its own connection (the test's are closed
// or about to be) and checks that it is gone.
func drop(name string) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := pgx.Connect(ctx, ServerURL())
	if err != nil {
		return fmt.Errorf("drop %s: %w", name, err)
	}
	defer c.Close(ctx)
	if _, err := c.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
		return fmt.Errorf("drop %s: %w", name, err)
	}
	var left bool
	if err := c.QueryRow(ctx, "SELECT EXISTS (SELECT FROM pg_database WHERE datname = $1)", name).Scan(&left); err != nil {
		return fmt.Errorf("check %s: %w", name, err)
	}
	if left {
		return fmt.Errorf("database %s still exists after DROP", name)
	}
	return nil
}

// dropStale drops the databases of test runs that were killed before their
// cleanup ran, recognised by the time in their names.
func dropStale(ctx context.Context, admin *pgx.Conn) error {
	rows, err := admin.Query(ctx, "SELECT datname FROM pg_database WHERE datname LIKE $1", namePrefix+"%")
	if err != nil {
		return err
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return err
	}
	for _, name := range names {
		created, _, ok := strings.Cut(strings.TrimPrefix(name, namePrefix), "_")
		sec, err := strconv.ParseInt(created, 10, 64)
		if !ok || err != nil || time.Since(time.Unix(sec, 0)) < staleAfter {
			continue
		}
		if _, err := admin.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			return err
		}
	}
	return nil
}

// ensureTemplate migrates the template for the current migrations once per
// server; an advisory lock serialises test binaries that race to build it.
func ensureTemplate(ctx context.Context, admin *pgx.Conn) (string, error) {
	sum, err := migrationsHash()
	if err != nil {
		return "", err
	}
	name := "cbtemplate_" + sum[:16]
	lockID := int64(binary.BigEndian.Uint64([]byte(sum[:8])))
	if _, err := admin.Exec(ctx, "SELECT pg_advisory_lock($1)", lockID); err != nil {
		return "", err
	}
	defer admin.Exec(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock($1)", lockID) //nolint:errcheck

	if err := dropStale(ctx, admin); err != nil {
		return "", fmt.Errorf("drop leftover test databases: %w", err)
	}
	var ready bool
	err = admin.QueryRow(ctx, "SELECT datistemplate FROM pg_database WHERE datname = $1", name).Scan(&ready)
	if err == nil && ready {
		return name, nil
	}
	// A half-built template (a crash mid-migration) is rebuilt from scratch.
	if _, err := admin.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
		return "", err
	}
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		return "", err
	}
	if _, err := postgres.Migrate(ctx, withDatabase(ServerURL(), name)); err != nil {
		return "", err
	}
	if _, err := admin.Exec(ctx, "ALTER DATABASE "+name+" WITH is_template true ALLOW_CONNECTIONS false"); err != nil {
		return "", err
	}
	return name, nil
}

// copySettings gives database to the settings the migrations set on
// template (ALTER DATABASE ... SET), which CREATE DATABASE does not copy.
func copySettings(ctx context.Context, admin *pgx.Conn, template, to string) error {
	rows, err := admin.Query(ctx, `
		SELECT split_part(c, '=', 1), substr(c, strpos(c, '=') + 1)
		FROM pg_db_role_setting s JOIN pg_database d ON d.oid = s.setdatabase, unnest(s.setconfig) AS c
		WHERE d.datname = $1 AND s.setrole = 0`, template)
	if err != nil {
		return fmt.Errorf("read the template's settings: %w", err)
	}
	settings, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) ([2]string, error) {
		var kv [2]string
		return kv, r.Scan(&kv[0], &kv[1])
	})
	if err != nil {
		return fmt.Errorf("read the template's settings: %w", err)
	}
	for _, kv := range settings {
		stmt := fmt.Sprintf("ALTER DATABASE %s SET %s = %s", pgx.Identifier{to}.Sanitize(), pgx.Identifier{kv[0]}.Sanitize(), quoteLiteral(kv[1]))
		if _, err := admin.Exec(ctx, stmt); err != nil {
			return fmt.Errorf("copy setting %s: %w", kv[0], err)
		}
	}
	return nil
}

func quoteLiteral(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

func migrationsHash() (string, error) {
	h := sha256.New()
	entries, err := fs.ReadDir(migrations.FS, ".")
	if err != nil {
		return "", err
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	for _, n := range names {
		b, err := fs.ReadFile(migrations.FS, n)
		if err != nil {
			return "", err
		}
		h.Write([]byte(n))
		h.Write(b)
	}
	// The job queue's schema is part of the template too.
	for _, m := range postgres.QueueMigrations() {
		h.Write([]byte(m))
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func withDatabase(raw, name string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	u.Path = "/" + name
	return u.String()
}

func redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "DATABASE_URL"
	}
	return u.Redacted()
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
