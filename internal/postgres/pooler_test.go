package postgres_test

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/contactbook/contactbook/internal/postgres"
	"github.com/contactbook/contactbook/internal/postgres/pgbouncertest"
	"github.com/contactbook/contactbook/internal/postgres/pgtest"
)

// hammer runs statements with parameters from 8 client connections at
// once, on a pooler with 2 server connections, so that a connection's next
// statement usually lands on another server connection than its last; it
// returns the first error.
func hammer(ctx context.Context, t *testing.T, url string, mode postgres.PoolMode) error {
	pool, err := postgres.ConnectMode(ctx, url, 8, mode)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	for w := range 8 {
		wg.Go(func() {
			for i := range 40 {
				var got string
				var ids []uuid.UUID
				err := pool.QueryRow(ctx, fmt.Sprintf(`SELECT $1::text || %d, ARRAY[$2::uuid]`, i%5), "w", uuid.New()).Scan(&got, &ids)
				if err == nil {
					err = postgres.InTx(ctx, pool, func(tx *postgres.Tx) error {
						_, err := tx.Exec(ctx, `SELECT $1::int + $2`, w, i)
						return err
					})
				}
				if err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
					return
				}
			}
		})
	}
	wg.Wait()
	return first
}

// Through PgBouncer in transaction mode, the transaction pool mode works
// and the session mode's cached prepared statements do not: the second
// half proves the pooler really moves connections between server sessions.
func TestPoolModeThroughPgBouncer(t *testing.T) {
	ctx := context.Background()
	dbURL := pgtest.Setup(t).URL
	bouncer := pgbouncertest.Start(t, dbURL, pgbouncertest.Options{PoolSize: 2})
	url := bouncer.URL(dbURL)
	if err := hammer(ctx, t, url, postgres.PoolTransaction); err != nil {
		t.Fatalf("transaction mode through PgBouncer: %v", err)
	}
	if err := hammer(ctx, t, url, postgres.PoolSession); err == nil {
		t.Fatal("session mode (named prepared statements) worked through PgBouncer in transaction mode; the test no longer proves anything")
	} else {
		t.Logf("session mode through PgBouncer fails as expected: %v", err)
	}
}

// Connections carry no jit startup parameter (PgBouncer refuses it); the
// database's own setting, from the migrations, turns JIT off.
func TestJITOffWithoutStartupParameter(t *testing.T) {
	ctx := context.Background()
	dbURL := pgtest.Setup(t).URL
	bouncer := pgbouncertest.Start(t, dbURL, pgbouncertest.Options{})
	for name, url := range map[string]string{"direct": dbURL, "pgbouncer": bouncer.URL(dbURL)} {
		pool, err := postgres.ConnectMode(ctx, url, 2, postgres.PoolTransaction)
		if err != nil {
			t.Fatal(err)
		}
		var jit, tz string
		if err := pool.QueryRow(ctx, `SELECT current_setting('jit'), current_setting('TimeZone')`).Scan(&jit, &tz); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		pool.Close()
		if jit != "off" || tz != "UTC" {
			t.Errorf("%s: jit %q, TimeZone %q; want off and UTC", name, jit, tz)
		}
	}
	cfg, err := pgx.ParseConfig(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	if _, sent := cfg.RuntimeParams["jit"]; sent {
		t.Fatal("the test URL itself sets jit")
	}
}

// The pooler's counters, which the scale-out scenario reads to size a
// deployment, count what passed through it.
func TestPgBouncerStats(t *testing.T) {
	ctx := context.Background()
	dbURL := pgtest.Setup(t).URL
	bouncer := pgbouncertest.Start(t, dbURL, pgbouncertest.Options{})
	pool, err := postgres.ConnectMode(ctx, bouncer.URL(dbURL), 2, postgres.PoolTransaction)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	name := strings.TrimPrefix(must(url.Parse(dbURL)).Path, "/")
	before, err := bouncer.Stats(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	for range 20 {
		if _, err := pool.Exec(ctx, `SELECT pg_sleep(0.001)`); err != nil {
			t.Fatal(err)
		}
	}
	after, err := bouncer.Stats(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	d := after.Sub(before)
	if d.Queries < 20 || d.Transactions < 20 || d.QueryTime < 20*time.Millisecond {
		t.Fatalf("counters grew by %+v for 20 statements of at least 1 ms", d)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// A transaction pooler is told from PostgreSQL itself whatever its pool
// size: with one server connection, a few, or many.
func TestTransactionPooledDetectsPgBouncer(t *testing.T) {
	ctx := context.Background()
	dbURL := pgtest.Setup(t).URL
	direct, err := pgx.ParseConfig(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if pooled, err := postgres.TransactionPooled(ctx, direct); err != nil || pooled {
			t.Fatalf("PostgreSQL itself: pooled %v, %v", pooled, err)
		}
	}
	for _, size := range []int{1, 3, 20} {
		bouncer := pgbouncertest.Start(t, dbURL, pgbouncertest.Options{PoolSize: size})
		cfg, err := pgx.ParseConfig(bouncer.URL(dbURL))
		if err != nil {
			t.Fatal(err)
		}
		for i := range 5 {
			if pooled, err := postgres.TransactionPooled(ctx, cfg); err != nil || !pooled {
				t.Fatalf("PgBouncer in transaction mode, pool size %d, try %d: pooled %v, %v", size, i, pooled, err)
			}
		}
		bouncer.Stop()
	}
}
