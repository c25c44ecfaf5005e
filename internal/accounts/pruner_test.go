package accounts

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/contactbook/contactbook/internal/jobs"
	"github.com/contactbook/contactbook/internal/postgres"
	"github.com/contactbook/contactbook/internal/postgres/pgtest"
)

func TestSweepDeletesOnlyWhatExpired(t *testing.T) {
	t.Parallel()
	pool := pgtest.Setup(t).Pool
	ctx := context.Background()
	now := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	var st store
	u, err := st.insertUser(ctx, pool, "ann@example.com", "Ann", "x")
	if err != nil {
		t.Fatal(err)
	}
	old, live := uuid.New(), uuid.New()
	for id, exp := range map[uuid.UUID]time.Time{old: now.Add(-time.Second), live: now.Add(time.Hour)} {
		if err := st.insertSession(ctx, pool, id, u.ID, now.Add(-24*time.Hour), exp, "", ""); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.replaceReset(ctx, pool, u.ID, []byte("h"), now.Add(-2*time.Hour), now.Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	if _, err := st.countAttempts(ctx, pool, []string{"stale"}, now.Add(-2*time.Hour), loginWindow); err != nil {
		t.Fatal(err)
	}
	if _, err := st.countAttempts(ctx, pool, []string{"fresh"}, now, loginWindow); err != nil {
		t.Fatal(err)
	}
	if err := st.prune(ctx, pool, now); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		sql  string
		want int
	}{
		{`SELECT count(*) FROM sessions`, 1},
		{`SELECT count(*) FROM sessions WHERE id = '` + live.String() + `'`, 1},
		{`SELECT count(*) FROM password_resets`, 0},
		{`SELECT count(*) FROM auth_throttles WHERE key = 'fresh'`, 1},
		{`SELECT count(*) FROM auth_throttles`, 1},
	} {
		var n int
		if err := pool.QueryRow(ctx, c.sql).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != c.want {
			t.Errorf("%s = %d, want %d", c.sql, n, c.want)
		}
	}
}

// The prune is a periodic job: two instances on one database prune once
// when they start (only the elected leader enqueues it), and an expired
// session is gone.
func TestSweepIsALeaderOnlyPeriodicJob(t *testing.T) {
	t.Parallel()
	pool := pgtest.Setup(t).Pool
	ctx := context.Background()
	now := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	var st store
	u, err := st.insertUser(ctx, pool, "ann@example.com", "Ann", "x")
	if err != nil {
		t.Fatal(err)
	}
	if err := st.insertSession(ctx, pool, uuid.New(), u.ID, now.Add(-24*time.Hour), now.Add(-time.Second), "", ""); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		q, err := jobs.New(pool, jobs.Config{})
		if err != nil {
			t.Fatal(err)
		}
		if err := q.Add(NewPruner(postgres.Wrap(pool), func() time.Time { return now })); err != nil {
			t.Fatal(err)
		}
		runCtx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- q.Run(runCtx) }()
		t.Cleanup(func() {
			cancel()
			if err := <-done; err != nil {
				t.Error(err)
			}
		})
	}
	count := func(sql string) int {
		var n int
		if err := pool.QueryRow(ctx, sql).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	deadline := time.Now().Add(15 * time.Second)
	for count(`SELECT count(*) FROM river_job WHERE kind = 'accounts_prune' AND state = 'completed'`) < 1 {
		if time.Now().After(deadline) {
			t.Fatal("no prune ran")
		}
		time.Sleep(20 * time.Millisecond)
	}
	// Give a second leader, were there one, the time to prune too.
	time.Sleep(time.Second)
	if n := count(`SELECT count(*) FROM river_job WHERE kind = 'accounts_prune'`); n != 1 {
		t.Fatalf("%d prunes, want 1", n)
	}
	if n := count(`SELECT count(*) FROM sessions`); n != 0 {
		t.Fatalf("%d sessions left, want 0", n)
	}
}
