package postgres_test

import (
	"context"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/contactbook/contactbook/internal/apperr"
	"github.com/contactbook/contactbook/internal/postgres"
	"github.com/contactbook/contactbook/internal/postgres/pgtest"
)

// TestDatabaseTranslates checks that every way a store reaches the
// database through the wrapper returns classified errors whose cause the
// checks the stores make still see.
func TestDatabaseTranslates(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Setup(t).DB
	if postgres.Wrap(db) != db {
		t.Fatal("wrapping a Database again made a second wrapper")
	}
	if _, err := db.Exec(ctx, `CREATE TABLE t (id int PRIMARY KEY, n int CHECK (n >= 0))`); err != nil {
		t.Fatal(err)
	}

	var n int
	err := db.QueryRow(ctx, `SELECT n FROM t WHERE id = 1`).Scan(&n)
	if !apperr.Is(err, apperr.NotFound) || !errors.Is(err, pgx.ErrNoRows) {
		t.Fatalf("QueryRow on no row: %v", err)
	}
	_, err = db.Exec(ctx, `INSERT INTO t VALUES (1, -1)`)
	if !apperr.Is(err, apperr.InvalidInput) {
		t.Fatalf("Exec violating a check: %v", err)
	}
	_, err = db.Query(ctx, `SELECT nope FROM t`)
	if !apperr.Is(err, apperr.Internal) || apperr.CodeOf(err) != apperr.Internal {
		t.Fatalf("Query of a missing column: %v", err)
	}
	rows, err := db.Query(ctx, `SELECT 1/0`)
	if err == nil {
		for rows.Next() {
		}
		err = rows.Err()
	}
	var ae *apperr.Error
	if !errors.As(err, &ae) {
		t.Fatalf("rows.Err of a failing statement is not classified: %v", err)
	}
	// Stores that leave the query's error to the rows read it there.
	failed, _ := db.Query(ctx, `SELECT nope FROM t`)
	if _, err := pgx.CollectRows(failed, pgx.RowTo[int]); !errors.As(err, &ae) {
		t.Fatalf("the rows of a failed query carry an unclassified error: %v", err)
	}

	err = postgres.InTx(ctx, db, func(tx *postgres.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO t VALUES (1, 1)`); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO t VALUES (1, 2)`)
		if !postgres.IsUniqueViolation(err, "t_pkey") || !errors.As(err, &ae) {
			t.Errorf("unique violation in a transaction: %v", err)
		}
		return err
	})
	if !postgres.IsUniqueViolation(err, "") {
		t.Fatalf("InTx: %v", err)
	}

	b := &pgx.Batch{}
	b.Queue(`SELECT n FROM t WHERE id = 2`)
	br := db.SendBatch(ctx, b)
	err = br.QueryRow().Scan(&n)
	if !apperr.Is(err, apperr.NotFound) {
		t.Fatalf("batch QueryRow on no row: %v", err)
	}
	if err := br.Close(); err != nil {
		t.Fatal(err)
	}

	_, err = db.CopyFrom(ctx, pgx.Identifier{"t"}, []string{"id", "n"}, pgx.CopyFromRows([][]any{{3, 1}, {3, 1}}))
	if !postgres.IsUniqueViolation(err, "t_pkey") || !errors.As(err, &ae) {
		t.Fatalf("CopyFrom of a duplicate: %v", err)
	}
}
