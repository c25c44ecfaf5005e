package postgres_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/contactbook/contactbook/internal/postgres/pgtest"
)

// schemaBook creates a team and a book and returns the book's id.
func schemaBook(t *testing.T, pool *pgxpool.Pool) string {
	t.Helper()
	var book string
	err := pool.QueryRow(context.Background(), `
		WITH t AS (INSERT INTO teams (name) VALUES ('t') RETURNING id)
		INSERT INTO books (team_id, name, slug) SELECT id, 'b', 'b' FROM t RETURNING id`).Scan(&book)
	if err != nil {
		t.Fatal(err)
	}
	return book
}

// blocked reports whether f is still waiting after a moment, and returns a
// channel with f's result.
func blocked(f func() error) (bool, <-chan error) {
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		done <- err
		return false, done
	case <-time.After(300 * time.Millisecond):
		return true, done
	}
}

// TestBookDeleteRacesContactInsert: contacts.book_id has no foreign key
// (its row locks serialised a book's writers, migration 00008); the book's
// advisory lock gives the same guarantee. A deletion waits for a contact
// insert in flight and takes the contact with the book; an insert after a
// deletion in flight fails as a foreign key violation. Either way no
// contact outlives its book, and the counters go with it.
func TestBookDeleteRacesContactInsert(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Setup(t).Pool

	t.Run("insert first", func(t *testing.T) {
		book := schemaBook(t, pool)
		ins, err := pool.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer ins.Rollback(ctx) //nolint:errcheck
		if _, err := ins.Exec(ctx, `INSERT INTO contacts (book_id, first_name) VALUES ($1, 'racing')`, book); err != nil {
			t.Fatal(err)
		}
		waiting, done := blocked(func() error {
			_, err := pool.Exec(ctx, `DELETE FROM books WHERE id = $1`, book)
			return err
		})
		if !waiting {
			t.Fatalf("the book was deleted while a contact insert was in flight (%v)", <-done)
		}
		if err := ins.Commit(ctx); err != nil {
			t.Fatal(err)
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		var contacts, counters int
		if err := pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM contacts WHERE book_id = $1), (SELECT count(*) FROM book_contact_counts WHERE book_id = $1)`, book).
			Scan(&contacts, &counters); err != nil {
			t.Fatal(err)
		}
		if contacts != 0 || counters != 0 {
			t.Fatalf("after the book's deletion: %d contacts and %d counter rows left", contacts, counters)
		}
	})

	t.Run("delete first", func(t *testing.T) {
		book := schemaBook(t, pool)
		del, err := pool.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer del.Rollback(ctx) //nolint:errcheck
		if _, err := del.Exec(ctx, `DELETE FROM books WHERE id = $1`, book); err != nil {
			t.Fatal(err)
		}
		waiting, done := blocked(func() error {
			_, err := pool.Exec(ctx, `INSERT INTO contacts (book_id, first_name) VALUES ($1, 'late')`, book)
			return err
		})
		if !waiting {
			t.Fatalf("a contact was inserted while its book's deletion was in flight (%v)", <-done)
		}
		if err := del.Commit(ctx); err != nil {
			t.Fatal(err)
		}
		var pgErr *pgconn.PgError
		if err := <-done; !errors.As(err, &pgErr) || pgErr.Code != "23503" || pgErr.ConstraintName != "contacts_book_id_fkey" {
			t.Fatalf("insert into a deleted book: %v, want a foreign key violation", err)
		}
	})
}

// TestContactCounterSlots: the count is spread over slots per connection
// and sums right through inserts and deletes on several connections.
func TestContactCounterSlots(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Setup(t).Pool
	book := schemaBook(t, pool)
	conns := make([]*pgxpool.Conn, 4)
	for i := range conns {
		c, err := pool.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Release()
		conns[i] = c
	}
	for i, c := range conns {
		if _, err := c.Exec(ctx, `INSERT INTO contacts (book_id, first_name) SELECT $1, 'n' FROM generate_series(1, $2::int)`, book, 10*(i+1)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := conns[0].Exec(ctx, `DELETE FROM contacts WHERE id IN (SELECT id FROM contacts WHERE book_id = $1 LIMIT 7)`, book); err != nil {
		t.Fatal(err)
	}
	var counted, rows int
	err := pool.QueryRow(ctx, `SELECT (SELECT sum(n) FROM book_contact_counts WHERE book_id = $1), (SELECT count(*) FROM contacts WHERE book_id = $1)`, book).
		Scan(&counted, &rows)
	if err != nil {
		t.Fatal(err)
	}
	if counted != 100-7 || rows != counted {
		t.Fatalf("counter %d, rows %d, want 93", counted, rows)
	}
}

// TestEnforceEmailsRacesContactInsert: switching a book to unique emails
// waits for a contact insert in flight, so an address that insert
// duplicates is seen and the switch is refused; without the wait the book
// would enforce uniqueness while holding a duplicate.
func TestEnforceEmailsRacesContactInsert(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Setup(t).Pool
	book := schemaBook(t, pool)
	const insert = `INSERT INTO contacts (book_id, first_name, emails) VALUES ($1, 'c', '[{"address": "Same@example.com", "label": "work"}]')`
	if _, err := pool.Exec(ctx, insert, book); err != nil {
		t.Fatal(err)
	}
	ins, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer ins.Rollback(ctx) //nolint:errcheck
	if _, err := ins.Exec(ctx, insert, book); err != nil {
		t.Fatal(err)
	}
	waiting, done := blocked(func() error {
		_, err := pool.Exec(ctx, `UPDATE books SET enforce_unique_emails = true WHERE id = $1`, book)
		return err
	})
	if !waiting {
		t.Fatalf("enforcement switched while a contact insert was in flight (%v)", <-done)
	}
	if err := ins.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	var pgErr *pgconn.PgError
	if err := <-done; !errors.As(err, &pgErr) || pgErr.Code != "23505" || pgErr.ConstraintName != "contact_emails_enforced_key" {
		t.Fatalf("switching on enforcement over a duplicate: %v, want a unique violation", err)
	}
}

// TestContactDeleteTakesDependents: deleting contacts takes their labels,
// values, email rows, interactions and campaign participations with them
// (one set-based trigger, migration 00017), and an enrolment in flight
// (which locks the contacts it enrols, as the foreign key it replaces did)
// makes the delete wait and then go with the new participants.
func TestContactDeleteTakesDependents(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Setup(t).Pool
	book := schemaBook(t, pool)
	var campaign, label, field string
	if err := pool.QueryRow(ctx, `
		WITH c AS (INSERT INTO campaigns (book_id, name) VALUES ($1, 'c') RETURNING id),
		     l AS (INSERT INTO labels (book_id, name) VALUES ($1, 'l') RETURNING id),
		     f AS (INSERT INTO field_definitions (book_id, key, name, type) VALUES ($1, 'k', 'K', 'text') RETURNING id)
		SELECT c.id, l.id, f.id FROM c, l, f`, book).Scan(&campaign, &label, &field); err != nil {
		t.Fatal(err)
	}
	var ids []string
	if err := pool.QueryRow(ctx, `
		WITH c AS (
			INSERT INTO contacts (book_id, first_name, emails)
			SELECT $1, 'P' || g, jsonb_build_array(jsonb_build_object('address', 'p' || g || '@example.com'))
			FROM generate_series(1, 20) g RETURNING id
		), l AS (INSERT INTO contact_labels (contact_id, label_id) SELECT id, $2 FROM c),
		   v AS (INSERT INTO contact_field_values (contact_id, field_id, value) SELECT id, $3, 'x' FROM c),
		   i AS (INSERT INTO interactions (contact_id, kind) SELECT id, 'note' FROM c)
		SELECT array_agg(id::text) FROM c`, book, label, field).Scan(&ids); err != nil {
		t.Fatal(err)
	}
	enroll := `
		INSERT INTO campaign_participants (campaign_id, contact_id, enrolled_at)
		SELECT $1, ct.id, now() FROM contacts ct WHERE ct.id = ANY($2::uuid[]) FOR KEY SHARE OF ct
		ON CONFLICT (campaign_id, contact_id) DO NOTHING`
	if _, err := pool.Exec(ctx, enroll, campaign, ids[:10]); err != nil {
		t.Fatal(err)
	}
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck
	if _, err := tx.Exec(ctx, enroll, campaign, ids[10:]); err != nil {
		t.Fatal(err)
	}
	waiting, done := blocked(func() error {
		_, err := pool.Exec(ctx, `DELETE FROM contacts WHERE id = ANY($1::uuid[])`, ids)
		return err
	})
	if !waiting {
		t.Fatalf("contacts were deleted while their enrolment was in flight (%v)", <-done)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	var left int
	if err := pool.QueryRow(ctx, `
		SELECT (SELECT count(*) FROM contact_labels) + (SELECT count(*) FROM contact_field_values) + (SELECT count(*) FROM contact_emails)
		     + (SELECT count(*) FROM interactions) + (SELECT count(*) FROM campaign_participants) + (SELECT count(*) FROM contacts)`).Scan(&left); err != nil {
		t.Fatal(err)
	}
	if left != 0 {
		t.Fatalf("%d rows outlived their contacts", left)
	}
}
