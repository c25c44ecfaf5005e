package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/contactbook/contactbook/internal/enum"
)

// PoolMode says how the service's connections reach PostgreSQL, which
// decides what a connection may rely on between transactions.
type PoolMode string

const (
	// PoolSession: each connection is one PostgreSQL session for its whole
	// life (a direct connection, or a pooler in session mode). Statements
	// are prepared once per connection and cached (pgx's default), and the
	// job queue is woken by LISTEN/NOTIFY.
	PoolSession PoolMode = "session"
	// PoolTransaction: a pooler (PgBouncer with pool_mode = transaction)
	// lends a server connection for one transaction at a time, so nothing
	// may outlive a transaction on it: no named prepared statements, no
	// LISTEN, no session settings or session advisory locks. Statements go
	// as unnamed ones (pgx's cache_describe mode), the job queue polls, and
	// what needs a session (migrations, the retention lock, the webhook
	// listener) uses DATABASE_DIRECT_URL.
	PoolTransaction PoolMode = "transaction"
)

// ParsePoolMode reads DATABASE_POOL_MODE.
func ParsePoolMode(s string) (PoolMode, error) {
	return enum.Parse(PoolModes, "The pool mode", s)
}

// PoolModes is every pool mode.
var PoolModes = []PoolMode{PoolSession, PoolTransaction}

// queryExecMode is how pgx sends statements in this mode. Through a
// transaction pooler it is cache_describe: the first execution of a
// statement on a connection asks for its parameter and result types (an
// unnamed statement, parse and describe then sync), later ones send parse,
// bind and execute of the unnamed statement in one round trip, so no
// message depends on a server connection used before. The cost against
// named prepared statements is that PostgreSQL parses and plans every
// execution (measured in docs/deploy.md); the values keep their binary
// formats, which the text-only exec and simple_protocol modes would give up
// (a 10,000-id array would travel as text).
func (m PoolMode) queryExecMode() pgx.QueryExecMode {
	if m == PoolTransaction {
		return pgx.QueryExecModeCacheDescribe
	}
	return pgx.QueryExecModeCacheStatement
}

// poolerProbes is how many times TransactionPooled looks for a sign of a
// transaction pooler before it concludes there is none.
const poolerProbes = 3

// TransactionPooled reports whether connections made with cfg reach
// PostgreSQL through a pooler that lends server sessions per transaction
// (PgBouncer with pool_mode = transaction), where session mode's named
// prepared statements fail at random. It opens two connections of its
// own and looks, a few times over, for what only such a pooler does:
// while the first connection keeps a transaction open, the session that
// answered the second connection's last statement serves the first, or
// the second's next statement is answered by another session. On its own
// session (PostgreSQL itself, or a pooler in session mode) every
// connection keeps one backend. Statements go by the simple protocol, so
// the probe itself works through any pooler.
func TransactionPooled(ctx context.Context, cfg *pgx.ConnConfig) (bool, error) {
	open := func() (*pgx.Conn, error) {
		c, err := pgx.ConnectConfig(ctx, cfg.Copy())
		if err != nil {
			return nil, fmt.Errorf("connect to check for a transaction pooler: %w", err)
		}
		return c, nil
	}
	holder, err := open()
	if err != nil {
		return false, err
	}
	defer holder.Close(context.WithoutCancel(ctx))
	probe, err := open()
	if err != nil {
		return false, err
	}
	defer probe.Close(context.WithoutCancel(ctx))
	pid := func(q interface {
		QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	}) (uint32, error) {
		var p uint32
		if err := q.QueryRow(ctx, `SELECT pg_backend_pid()`, pgx.QueryExecModeSimpleProtocol).Scan(&p); err != nil {
			return 0, fmt.Errorf("check for a transaction pooler: %w", err)
		}
		return p, nil
	}
	for range poolerProbes {
		before, err := pid(probe)
		if err != nil {
			return false, err
		}
		tx, err := holder.Begin(ctx)
		if err != nil {
			return false, fmt.Errorf("check for a transaction pooler: %w", err)
		}
		// First sign: the open transaction was given the session that
		// had just answered the other connection.
		held, err := pid(tx)
		pooled := err == nil && held == before
		if err == nil && !pooled {
			// Second sign: the other connection is now answered by
			// another session than before.
			var after uint32
			after, err = pid(probe)
			pooled = err == nil && after != before
		}
		if rerr := tx.Rollback(ctx); err == nil && rerr != nil {
			err = fmt.Errorf("check for a transaction pooler: %w", rerr)
		}
		if err != nil || pooled {
			return pooled, err
		}
	}
	return false, nil
}
