package postgres_test

import (
	"context"
	"io/fs"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/contactbook/contactbook/internal/postgres"
	"github.com/contactbook/contactbook/internal/postgres/pgtest"
	"github.com/contactbook/contactbook/migrations"
)

// TestMigrationsApplyToEmptyDatabase runs every migration (the service's
// and the job queue's) on a database
// that has nothing, twice at once (two instances starting together), then
// once more (nothing left to do).
func TestMigrationsApplyToEmptyDatabase(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dbURL := pgtest.Setup(t, pgtest.Empty()).URL

	files, err := fs.Glob(migrations.FS, "*.sql")
	if err != nil || len(files) == 0 {
		t.Fatalf("no migrations: %v", err)
	}
	type result struct {
		applied []string
		err     error
	}
	results := make(chan result, 2)
	for range 2 {
		go func() {
			applied, err := postgres.Migrate(ctx, dbURL)
			results <- result{applied, err}
		}()
	}
	total := 0
	for range 2 {
		r := <-results
		if r.err != nil {
			t.Fatalf("migrate: %v", r.err)
		}
		total += len(r.applied)
	}
	if want := len(files) + len(postgres.QueueMigrations()); total != want {
		t.Fatalf("applied %d migrations in all, want %d (each exactly once)", total, want)
	}
	again, err := postgres.Migrate(ctx, dbURL)
	if err != nil || len(again) != 0 {
		t.Fatalf("second run applied %v (%v)", again, err)
	}

	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	for _, table := range []string{"users", "teams", "team_members", "api_keys", "books", "labels", "field_definitions", "events", "contacts", "suppressions", "river_job", "river_leader"} {
		var ok bool
		if err := conn.QueryRow(ctx, `SELECT to_regclass($1) IS NOT NULL`, "public."+table).Scan(&ok); err != nil || !ok {
			t.Errorf("table %s missing (%v)", table, err)
		}
	}
}

func TestTranslate(t *testing.T) {
	if err := postgres.Translate(nil); err != nil {
		t.Fatal(err)
	}
	if got := postgres.Translate(pgx.ErrNoRows); got == nil || got.Error() == "" {
		t.Fatal("no rows must translate to an error")
	}
}

// TestTeamDeleteRemovesItsEvents: the outbox and its queue have no foreign
// keys (a per-row check on every event of a bulk change); the
// statement-level trigger that replaces the cascade removes a deleted
// team's events and queue rows and leaves the others.
func TestTeamDeleteRemovesItsEvents(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Setup(t).Pool
	var gone, kept string
	for _, dst := range []*string{&gone, &kept} {
		if err := pool.QueryRow(ctx, `INSERT INTO teams (name) VALUES ('t') RETURNING id`).Scan(dst); err != nil {
			t.Fatal(err)
		}
		if _, err := pool.Exec(ctx, `
			WITH e AS (INSERT INTO events (team_id, type, body) SELECT $1, 'member.joined', '{}' FROM generate_series(1, 3)
			           RETURNING id, team_id, type, occurred_at)
			INSERT INTO event_queue (event_id, team_id, type, occurred_at) SELECT * FROM e`, *dst); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := pool.Exec(ctx, `DELETE FROM teams WHERE id = $1`, gone); err != nil {
		t.Fatal(err)
	}
	for _, table := range []string{"events", "event_queue"} {
		var nGone, nKept int
		if err := pool.QueryRow(ctx, `SELECT count(*) FILTER (WHERE team_id = $1), count(*) FILTER (WHERE team_id = $2) FROM `+table, gone, kept).
			Scan(&nGone, &nKept); err != nil {
			t.Fatal(err)
		}
		if nGone != 0 || nKept != 3 {
			t.Errorf("%s after deleting a team: %d of its rows left (want 0), %d of the other team's (want 3)", table, nGone, nKept)
		}
	}
}
