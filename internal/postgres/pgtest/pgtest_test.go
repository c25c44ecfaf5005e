package pgtest_test

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/contactbook/contactbook/internal/postgres"
	"github.com/contactbook/contactbook/internal/postgres/pgtest"
)

// TestDatabasesAreDroppedWithTheTest: a test's database, migrated or empty,
// is gone once the test has ended, even while the test still held a
// connection to it.
func TestDatabasesAreDroppedWithTheTest(t *testing.T) {
	ctx := context.Background()
	for name, create := range map[string]func(testing.TB) string{
		"migrated": func(t testing.TB) string { return pgtest.Setup(t).URL },
		"empty":    func(t testing.TB) string { return pgtest.Setup(t, pgtest.Empty()).URL },
	} {
		var db string
		var held *pgx.Conn
		t.Run(name, func(t *testing.T) {
			dbURL := create(t)
			u, err := url.Parse(dbURL)
			if err != nil {
				t.Fatal(err)
			}
			db = strings.TrimPrefix(u.Path, "/")
			conn, err := pgx.Connect(ctx, dbURL)
			if err != nil {
				t.Fatal(err)
			}
			// Left open on purpose: the drop must not depend on the test
			// closing its connections.
			if err := conn.Ping(ctx); err != nil {
				t.Fatal(err)
			}
			held = conn
		})
		if held != nil {
			_ = held.Close(ctx) // the drop has ended its session
		}
		if db == "" {
			t.Fatalf("%s: no database made", name)
		}
		if exists(t, db) {
			t.Errorf("%s database %s still exists after its test ended", name, db)
		}
	}
}

func exists(t *testing.T, name string) bool {
	t.Helper()
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, pgtest.ServerURL())
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	var ok bool
	if err := admin.QueryRow(ctx, "SELECT EXISTS (SELECT FROM pg_database WHERE datname = $1)", name).Scan(&ok); err != nil {
		t.Fatal(err)
	}
	return ok
}

// TestTemplateHoldsTheJobQueue: a test database carries the job queue's
// schema at the version the binary migrates to (the template is named by
// a digest that includes the queue's migrations, so a River upgrade builds
// a new one).
func TestTemplateHoldsTheJobQueue(t *testing.T) {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, pgtest.Setup(t).URL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var n int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM river_migration WHERE line = 'main'`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if want := len(postgres.QueueMigrations()); n != want {
		t.Fatalf("template has %d job queue migrations, want %d", n, want)
	}
}

// The plan pool reports what a statement read: a lookup by primary key
// reads a row, a scan of a filtered table reads all of it, in custom and
// generic plans alike.
func TestPlanPoolReportsRowsRead(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dbURL := pgtest.Setup(t).URL
	for _, mode := range []pgtest.PlanMode{pgtest.CustomPlans, pgtest.GenericPlans} {
		recorded := pgtest.Setup(t, pgtest.On(dbURL), pgtest.RecordPlans(mode))
		pool, log := recorded.Pool, recorded.Plans
		if _, err := pool.Exec(ctx, `CREATE TABLE IF NOT EXISTS plan_probe AS SELECT g AS id, g % 7 AS k FROM generate_series(1, 5000) g;
			CREATE UNIQUE INDEX IF NOT EXISTS plan_probe_id ON plan_probe (id); ANALYZE plan_probe`); err != nil {
			t.Fatal(err)
		}
		plans := log.Record(t, func() {
			var n int
			if err := pool.QueryRow(ctx, `SELECT k FROM plan_probe WHERE id = $1`, 42).Scan(&n); err != nil {
				t.Fatal(err)
			}
			if err := pool.QueryRow(ctx, `SELECT count(*) FROM plan_probe WHERE k = $1`, 3).Scan(&n); err != nil {
				t.Fatal(err)
			}
		})
		lookup := plans.One(t, "WHERE id = $1")
		if got := lookup.RowsOf("plan_probe"); got != 1 {
			t.Errorf("%s: the lookup read %.0f rows of the table, want 1\n%s", mode, got, lookup.Summary())
		}
		scan := plans.One(t, "WHERE k = $1")
		if got := scan.RowsOf("plan_probe"); got != 5000 {
			t.Errorf("%s: the scan read %.0f rows of the table, want 5000 (kept and filtered)\n%s", mode, got, scan.Summary())
		}
		if got := scan.RowsRead(); got < 5000 {
			t.Errorf("%s: the scan's plan read %.0f rows, want at least 5000", mode, got)
		}
	}
}
