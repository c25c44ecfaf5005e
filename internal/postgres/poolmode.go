package postgres

import (
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
