// Package postgres owns the connection pool, transactions, migrations and
// the translation of PostgreSQL errors into the service's error model. Every
// store builds on it; none of them opens connections of its own.
package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"

	"github.com/contactbook/contactbook/internal/apperr"
	"github.com/contactbook/contactbook/migrations"
)

// DB is what stores need: queries outside and inside transactions.
type DB interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	CopyFrom(ctx context.Context, table pgx.Identifier, cols []string, src pgx.CopyFromSource) (int64, error)
}

// PlanEachTime, passed as a query's first argument, has PostgreSQL plan the
// statement for the values of this execution (pgx sends it as an unnamed
// statement) instead of reusing the generic plan it switches to after five
// executions of a prepared statement. Use it for statements that take a
// large id array: = ANY($n) over a 10,000-element array is then a hashed
// lookup or an index scan chosen for the array's real size, whereas a
// generic plan assumes a handful of elements and, on a table whose
// statistics say it is small, scans it testing every row against the whole
// array one element at a time (185 ms for the custom values of one bulk
// request). Planning costs a few milliseconds, nothing next to such a
// statement.
const PlanEachTime = pgx.QueryExecModeCacheDescribe

// Connect opens a pool straight to PostgreSQL (or through a pooler in
// session mode); see ConnectMode.
func Connect(ctx context.Context, url string, maxConns int32) (*pgxpool.Pool, error) {
	return ConnectMode(ctx, url, maxConns, PoolSession)
}

// ConnectMode opens a pool for connections that reach PostgreSQL as mode
// says. Timestamps are scanned in UTC so every API response carries them
// the same way whatever the server's or host's time zone, and UUIDs travel
// in binary. The only startup parameter sent beyond the connection string's
// is timezone, which poolers pass on (PgBouncer refuses the ones it does
// not know, such as jit: the database's own settings carry those, see
// migration 00041).
func ConnectMode(ctx context.Context, url string, maxConns int32, mode PoolMode) (*pgxpool.Pool, error) {
	cfg, err := PoolConfig(url, maxConns, mode)
	if err != nil {
		return nil, err
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("open database pool: %w", err)
	}
	return pool, nil
}

// PoolConfig is the configuration ConnectMode opens its pool with, for
// callers that add to it (a test that records the plans of its
// connections' statements).
func PoolConfig(url string, maxConns int32, mode PoolMode) (*pgxpool.Config, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("parse database URL: %w", err)
	}
	if maxConns > 0 {
		cfg.MaxConns = maxConns
	}
	cfg.ConnConfig.RuntimeParams["timezone"] = "UTC"
	cfg.ConnConfig.DefaultQueryExecMode = mode.queryExecMode()
	cfg.AfterConnect = func(_ context.Context, c *pgx.Conn) error {
		c.TypeMap().RegisterType(&pgtype.Type{
			Name: "timestamptz", OID: pgtype.TimestamptzOID,
			Codec: &pgtype.TimestamptzCodec{ScanLocation: time.UTC},
		})
		// google/uuid values (and slices of them) go over the wire as 16
		// binary bytes; without this pgx formats and parses them as text,
		// which dominated bulk statements of 10,000 ids.
		registerUUID(c.TypeMap())
		return nil
	}
	return cfg, nil
}

// Beginner starts transactions; *pgxpool.Pool satisfies it.
type Beginner interface {
	Begin(ctx context.Context) (pgx.Tx, error)
}

// InTx runs fn in a transaction, committing when fn returns nil. Work done
// in it can register callbacks to run once it has committed (the outbox
// wakes the webhook dispatcher that way); functions that must run inside
// a transaction take a *Tx, so the compiler refuses a plain connection or
// a transaction begun elsewhere.
func InTx(ctx context.Context, db Beginner, fn func(tx *Tx) error) error {
	begun, err := db.Begin(ctx)
	if err != nil {
		return Translate(err)
	}
	defer begun.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // no-op after commit
	tx := &Tx{Tx: begun}
	if err := fn(tx); err != nil {
		return err
	}
	if err := begun.Commit(ctx); err != nil {
		return Translate(err)
	}
	for _, f := range tx.afterCommit {
		f()
	}
	return nil
}

// Tx is a transaction that runs callbacks after it commits (never when it
// rolls back).
type Tx struct {
	pgx.Tx
	afterCommit []func()
}

// AfterCommit registers f to run once the transaction has committed.
func (t *Tx) AfterCommit(f func()) { t.afterCommit = append(t.afterCommit, f) }

// Migrate applies every pending migration: the service's goose files,
// then the schema of the job queue (River's own migrations, at the version
// of the River library the binary is built with). Advisory locks make it
// safe for several instances starting at once.
//
// url must reach PostgreSQL directly (DATABASE_DIRECT_URL), never through a
// pooler in transaction mode: the locks are held by the session.
func Migrate(ctx context.Context, url string) ([]string, error) {
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("parse database URL: %w", err)
	}
	db := stdlib.OpenDB(*cfg)
	defer db.Close()
	applied, err := migrate(ctx, db, migrations.FS)
	if err != nil {
		return nil, err
	}
	queue, err := migrateQueue(ctx, url)
	return append(applied, queue...), err
}

// queueMigrationLock is the advisory lock (7302, 2) that
// serialises instances migrating the job queue's schema.
const queueMigrationLockClass, queueMigrationLockID = 7302, 2

func migrateQueue(ctx context.Context, url string) ([]string, error) {
	pool, err := Connect(ctx, url, 3)
	if err != nil {
		return nil, err
	}
	defer pool.Close()
	migrator, err := rivermigrate.New(riverpgxv5.New(pool), nil)
	if err != nil {
		return nil, err
	}
	// Each River migration commits on its own (a later one uses enum values
	// an earlier one adds); a session lock held on a connection of its own
	// keeps other instances out meanwhile.
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1, $2)`, queueMigrationLockClass, queueMigrationLockID); err != nil {
		return nil, err
	}
	defer conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1, $2)`, queueMigrationLockClass, queueMigrationLockID) //nolint:errcheck // the session ends with the pool anyway
	res, err := migrator.Migrate(ctx, rivermigrate.DirectionUp, nil)
	if err != nil {
		return nil, fmt.Errorf("apply job queue migrations: %w", err)
	}
	var applied []string
	for _, v := range res.Versions {
		applied = append(applied, fmt.Sprintf("river %03d %s", v.Version, v.Name))
	}
	return applied, nil
}

// QueueMigrations is the SQL of every job queue migration in order, for a
// digest of the schema (test templates are named by it).
func QueueMigrations() []string {
	migrator, err := rivermigrate.New(riverpgxv5.New(nil), nil)
	if err != nil {
		panic(fmt.Sprintf("job queue migrations: %v", err)) // built into the binary: cannot fail at run time
	}
	var out []string
	for _, m := range migrator.AllVersions() {
		out = append(out, fmt.Sprintf("%d\n%s", m.Version, m.SQLUp))
	}
	return out
}

func migrate(ctx context.Context, db *sql.DB, fsys fs.FS) ([]string, error) {
	locker, err := lock.NewPostgresSessionLocker()
	if err != nil {
		return nil, err
	}
	p, err := goose.NewProvider(goose.DialectPostgres, db, fsys, goose.WithSessionLocker(locker))
	if err != nil {
		return nil, fmt.Errorf("load migrations: %w", err)
	}
	results, err := p.Up(ctx)
	if err != nil {
		return nil, fmt.Errorf("apply migrations: %w", err)
	}
	applied := make([]string, 0, len(results))
	for _, r := range results {
		applied = append(applied, r.Source.Path)
	}
	return applied, nil
}

// PostgreSQL error codes the stores react to.
const (
	codeUniqueViolation     = "23505"
	codeForeignKeyViolation = "23503"
	codeCheckViolation      = "23514"
	codeInvalidText         = "22P02"
	codeInsufficientPriv    = "42501"
)

// IsUniqueViolation reports whether err violates the named unique
// constraint (any unique constraint when name is empty).
func IsUniqueViolation(err error, name string) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == codeUniqueViolation &&
		(name == "" || pgErr.ConstraintName == name)
}

// IsForeignKeyViolation reports whether err violates a foreign key.
func IsForeignKeyViolation(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == codeForeignKeyViolation
}

// IsInsufficientPrivilege reports whether err is a refusal raised with
// SQLSTATE 42501 (insufficient_privilege), as the service's own checks in
// SQL raise it.
func IsInsufficientPrivilege(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == codeInsufficientPriv
}

// Translate classifies a database error. "No rows" becomes NOT_FOUND; an
// error that is already classified passes through; everything else is an
// internal error whose cause is logged and never shown.
func Translate(err error) error {
	if err == nil {
		return nil
	}
	var ae *apperr.Error
	if errors.As(err, &ae) {
		return err
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return apperr.Wrap(err, apperr.NotFound, "The resource was not found.")
	}
	if errors.Is(err, context.Canceled) {
		return err
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code {
		case codeInvalidText, codeCheckViolation:
			return apperr.Wrap(err, apperr.InvalidInput, "The request holds a value the service cannot store.")
		}
	}
	return apperr.Wrap(err, apperr.Internal, "database error")
}
