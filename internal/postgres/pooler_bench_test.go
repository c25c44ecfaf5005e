package postgres_test

import (
	"context"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/contactbook/contactbook/internal/postgres"
	"github.com/contactbook/contactbook/internal/postgres/pgbouncertest"
	"github.com/contactbook/contactbook/internal/postgres/pgtest"
)

// BenchmarkPoolModes measures what a statement costs in each pool mode:
// session (named prepared statements, planned once per connection and then
// reused) against transaction (unnamed statements, parsed and planned at
// each execution), straight to PostgreSQL and through PgBouncer. The
// statements are a point read and a page of the contacts list over a book
// of 2,000 contacts.
func BenchmarkPoolModes(b *testing.B) {
	ctx := context.Background()
	dbURL := pgtest.Setup(b).URL
	setup, err := postgres.Connect(ctx, dbURL, 2)
	if err != nil {
		b.Fatal(err)
	}
	defer setup.Close()
	var book uuid.UUID
	if err := setup.QueryRow(ctx, `
		WITH t AS (INSERT INTO teams (name) VALUES ('Bench') RETURNING id)
		INSERT INTO books (team_id, name, slug) SELECT id, 'Bench', 'bench' FROM t RETURNING id`).Scan(&book); err != nil {
		b.Fatal(err)
	}
	if _, err := setup.Exec(ctx, `
		INSERT INTO contacts (book_id, first_name, last_name, emails)
		SELECT $1, 'c' || g, 'Bench', jsonb_build_array(jsonb_build_object('address', 'c' || g || '@example.com', 'label', 'work', 'primary', true))
		FROM generate_series(1, 2000) AS g`, book); err != nil {
		b.Fatal(err)
	}
	if _, err := setup.Exec(ctx, `ANALYZE contacts`); err != nil {
		b.Fatal(err)
	}
	var id uuid.UUID
	if err := setup.QueryRow(ctx, `SELECT id FROM contacts WHERE book_id = $1 LIMIT 1`, book).Scan(&id); err != nil {
		b.Fatal(err)
	}
	bouncer := pgbouncertest.Start(b, dbURL, pgbouncertest.Options{})
	statements := map[string]func(pool *pgxpool.Pool) error{
		"get": func(pool *pgxpool.Pool) error {
			var first, last string
			return pool.QueryRow(ctx, `SELECT first_name, last_name FROM contacts WHERE id = $1 AND book_id = $2`, id, book).Scan(&first, &last)
		},
		"list": func(pool *pgxpool.Pool) error {
			rows, err := pool.Query(ctx, `SELECT id, first_name, last_name, emails FROM contacts WHERE book_id = $1
				ORDER BY lower(last_name), lower(first_name), id LIMIT 50 OFFSET 100`, book)
			if err != nil {
				return err
			}
			rows.Close()
			return rows.Err()
		},
	}
	for _, route := range []struct {
		name, url string
		mode      postgres.PoolMode
	}{
		{"direct-session", dbURL, postgres.PoolSession},
		{"direct-transaction", dbURL, postgres.PoolTransaction},
		{"pgbouncer-transaction", bouncer.URL(dbURL), postgres.PoolTransaction},
	} {
		pool, err := postgres.ConnectMode(ctx, route.url, 1, route.mode)
		if err != nil {
			b.Fatal(err)
		}
		for _, name := range []string{"get", "list"} {
			b.Run(name+"/"+route.name, func(b *testing.B) {
				for b.Loop() {
					if err := statements[name](pool); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
		pool.Close()
	}
}
