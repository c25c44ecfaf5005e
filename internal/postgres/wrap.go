package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Database is a pool whose every error comes out translated (see
// Translate): the stores return what it gives them as it is, so the
// service's error model is applied in this one place rather than at each
// statement. It wraps the pool once, where the app is wired; the job queue
// keeps the raw pool (River reads pgx's own errors).
//
// Translated errors keep their cause, so errors.Is(err, pgx.ErrNoRows),
// IsUniqueViolation and the like see through them; compare errors with
// errors.Is, never ==.
type Database struct{ raw Pool }

// Wrap returns db translating its errors. *pgxpool.Pool and an acquired
// *pgxpool.Conn satisfy Pool; a Database is returned as it is.
func Wrap(db Pool) *Database {
	if d, ok := db.(*Database); ok {
		return d
	}
	return &Database{raw: db}
}

// Exec runs a statement.
func (d *Database) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	tag, err := d.raw.Exec(ctx, sql, args...)
	return tag, Translate(err)
}

// Query runs a statement returning rows whose Scan and Err translate too.
func (d *Database) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	rows, err := d.raw.Query(ctx, sql, args...)
	return wrapRows(rows), Translate(err)
}

// QueryRow runs a statement returning at most one row.
func (d *Database) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	return translatedRow{d.raw.QueryRow(ctx, sql, args...)}
}

// CopyFrom copies rows into table.
func (d *Database) CopyFrom(ctx context.Context, table pgx.Identifier, cols []string, src pgx.CopyFromSource) (int64, error) {
	n, err := d.raw.CopyFrom(ctx, table, cols, src)
	return n, Translate(err)
}

// SendBatch sends queued statements in one round trip.
func (d *Database) SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults {
	return translatedBatch{d.raw.SendBatch(ctx, b)}
}

// Begin starts a transaction that translates its errors the same way.
func (d *Database) Begin(ctx context.Context) (pgx.Tx, error) {
	tx, err := d.raw.Begin(ctx)
	if err != nil {
		return nil, Translate(err)
	}
	return translatedTx{tx}, nil
}

// translatedTx is a transaction (or a savepoint in one) of a Database.
// The methods it does not override (Rollback's caller ignores the error,
// LargeObjects, Prepare, Conn) reach pgx's transaction as they are.
type translatedTx struct{ pgx.Tx }

func (t translatedTx) Begin(ctx context.Context) (pgx.Tx, error) {
	tx, err := t.Tx.Begin(ctx)
	if err != nil {
		return nil, Translate(err)
	}
	return translatedTx{tx}, nil
}

func (t translatedTx) Commit(ctx context.Context) error { return Translate(t.Tx.Commit(ctx)) }

func (t translatedTx) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	tag, err := t.Tx.Exec(ctx, sql, args...)
	return tag, Translate(err)
}

func (t translatedTx) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	rows, err := t.Tx.Query(ctx, sql, args...)
	return wrapRows(rows), Translate(err)
}

func (t translatedTx) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	return translatedRow{t.Tx.QueryRow(ctx, sql, args...)}
}

func (t translatedTx) CopyFrom(ctx context.Context, table pgx.Identifier, cols []string, src pgx.CopyFromSource) (int64, error) {
	n, err := t.Tx.CopyFrom(ctx, table, cols, src)
	return n, Translate(err)
}

func (t translatedTx) SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults {
	return translatedBatch{t.Tx.SendBatch(ctx, b)}
}

// translatedRows translates the errors of Scan and Err; a row scanned
// without error costs nothing more than pgx's own.
type translatedRows struct{ pgx.Rows }

// wrapRows wraps rows even when the query failed: pgx then returns rows
// that carry the error, and stores that skip the query's error
// (`rows, _ := db.Query(...)`) read it from rows.Err or the Collect
// helpers, which must see it translated too.
func wrapRows(rows pgx.Rows) pgx.Rows {
	if rows == nil {
		return nil
	}
	return translatedRows{rows}
}

func (r translatedRows) Err() error { return Translate(r.Rows.Err()) }

func (r translatedRows) Scan(dest ...any) error { return Translate(r.Rows.Scan(dest...)) }

// translatedRow is QueryRow's row: Scan's pgx.ErrNoRows becomes NOT_FOUND
// (the cause kept for errors.Is).
type translatedRow struct{ pgx.Row }

func (r translatedRow) Scan(dest ...any) error { return Translate(r.Row.Scan(dest...)) }

type translatedBatch struct{ pgx.BatchResults }

func (b translatedBatch) Exec() (pgconn.CommandTag, error) {
	tag, err := b.BatchResults.Exec()
	return tag, Translate(err)
}

func (b translatedBatch) Query() (pgx.Rows, error) {
	rows, err := b.BatchResults.Query()
	return wrapRows(rows), Translate(err)
}

func (b translatedBatch) QueryRow() pgx.Row { return translatedRow{b.BatchResults.QueryRow()} }

func (b translatedBatch) Close() error { return Translate(b.BatchResults.Close()) }
