// Package pgbouncertest runs a PgBouncer in transaction pooling mode in
// front of the test PostgreSQL server, for tests that prove the service
// works through one. It uses the pgbouncer binary the machine has (Debian's
// package, which scripts/pooler-tools.sh installs; PGBOUNCER_BIN names
// another) and skips the test, saying so, when there is none.
package pgbouncertest

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/contactbook/contactbook/internal/apptest/logbuf"
)

// Options shape the pooler.
type Options struct {
	// PoolSize is how many server connections it keeps per database and
	// user (default_pool_size; default 20). A small one makes client
	// connections share server connections, which is what breaks session
	// state.
	PoolSize int
	// MaxClients bounds client connections (max_client_conn; default 500).
	MaxClients int
	// Addr is the address to listen on (default a free loopback port).
	Addr string
}

// Bouncer is one running PgBouncer.
type Bouncer struct {
	Addr     string
	adminURL string
	cmd      *exec.Cmd
	logs     *logbuf.Buffer
	done     chan struct{}
}

// Binary finds the pgbouncer executable: PGBOUNCER_BIN, the PATH, then
// Debian's /usr/sbin (not on every user's PATH).
func Binary() (string, error) {
	if p := os.Getenv("PGBOUNCER_BIN"); p != "" {
		return p, nil
	}
	if p, err := exec.LookPath("pgbouncer"); err == nil {
		return p, nil
	}
	if _, err := os.Stat("/usr/sbin/pgbouncer"); err == nil {
		return "/usr/sbin/pgbouncer", nil
	}
	return "", fmt.Errorf("pgbouncer is not installed (scripts/pooler-tools.sh installs Debian's package; PGBOUNCER_BIN names another binary)")
}

// Start runs PgBouncer in transaction mode in front of the server that
// serverURL (any database on it) points at, with trust authentication for
// serverURL's user; it stops when t ends. Every database of the server is
// reachable through it under its own name (URL).
func Start(t testing.TB, serverURL string, opts Options) *Bouncer {
	t.Helper()
	bin, err := Binary()
	if err != nil {
		t.Skipf("pgbouncertest: %v", err)
	}
	u, err := url.Parse(serverURL)
	if err != nil {
		t.Fatalf("pgbouncertest: %v", err)
	}
	if opts.PoolSize <= 0 {
		opts.PoolSize = 20
	}
	if opts.MaxClients <= 0 {
		opts.MaxClients = 500
	}
	if opts.Addr == "" {
		opts.Addr = freeAddr(t)
	}
	host, port, err := net.SplitHostPort(opts.Addr)
	if err != nil {
		t.Fatalf("pgbouncertest: %v", err)
	}
	dir, err := os.MkdirTemp("", "pgbouncertest-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	userName := u.User.Username()
	ini := Config(ConfigParams{
		ServerHost: u.Hostname(), ServerPort: portOf(u), ListenHost: host, ListenPort: port,
		AuthFile: filepath.Join(dir, "userlist.txt"), PoolSize: opts.PoolSize, MaxClients: opts.MaxClients,
		StatsUser: userName,
	})
	// PgBouncer refuses to run as root; started as root it changes to the
	// user the server runs as.
	if os.Geteuid() == 0 {
		if _, err := user.Lookup("postgres"); err != nil {
			t.Skipf("pgbouncertest: running as root, and there is no postgres user for PgBouncer to change to")
		}
		ini += "user = postgres\n"
	}
	files := map[string]string{
		"pgbouncer.ini": ini,
		"userlist.txt":  fmt.Sprintf("%q \"\"\n", userName),
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	b := &Bouncer{Addr: opts.Addr, adminURL: adminURL(u, opts.Addr), logs: &logbuf.Buffer{}, done: make(chan struct{})}
	b.cmd = exec.Command(bin, filepath.Join(dir, "pgbouncer.ini"))
	b.cmd.Stdout, b.cmd.Stderr = b.logs, b.logs
	if err := b.cmd.Start(); err != nil {
		t.Fatalf("pgbouncertest: start %s: %v", bin, err)
	}
	go func() { _ = b.cmd.Wait(); close(b.done) }()
	t.Cleanup(func() {
		b.Stop()
		if t.Failed() {
			t.Logf("pgbouncer's log:\n%s", b.logs.String())
		}
	})
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", b.Addr, time.Second)
		if err == nil {
			c.Close()
			return b
		}
		select {
		case <-b.done:
			t.Fatalf("pgbouncertest: pgbouncer exited during start:\n%s", b.logs.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("pgbouncertest: pgbouncer not listening after 10 s:\n%s", b.logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// URL is dbURL (a database on the server) reached through the pooler.
func (b *Bouncer) URL(dbURL string) string {
	u, err := url.Parse(dbURL)
	if err != nil {
		panic(fmt.Sprintf("pgbouncertest: %v", err)) // the caller's own test URL
	}
	u.Host = b.Addr
	return u.String()
}

// Stop ends PgBouncer (SIGINT: a fast shutdown) and waits for it.
func (b *Bouncer) Stop() {
	_ = b.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-b.done:
	case <-time.After(5 * time.Second):
		_ = b.cmd.Process.Kill()
		<-b.done
	}
}

// Stats are PgBouncer's counters for one database since it started
// (SHOW STATS): transactions and statements it passed to PostgreSQL, and
// the time they spent there.
type Stats struct {
	Transactions, Queries int64
	// TransactionTime and QueryTime are the time server connections spent
	// in transactions and in statements; WaitTime is the time clients
	// waited for a server connection.
	TransactionTime, QueryTime, WaitTime time.Duration
}

// Stats reads the counters of database dbName (zero before anything
// connected to it).
func (b *Bouncer) Stats(ctx context.Context, dbName string) (Stats, error) {
	cfg, err := pgx.ParseConfig(b.adminURL)
	if err != nil {
		return Stats{}, err
	}
	// The admin console speaks the simple query protocol only.
	cfg.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return Stats{}, err
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, "SHOW STATS")
	if err != nil {
		return Stats{}, err
	}
	defer rows.Close()
	for rows.Next() {
		// The simple protocol answers in text; the counters' types vary
		// between PgBouncer versions, their text does not.
		row := map[string]string{}
		for i, f := range rows.FieldDescriptions() {
			row[f.Name] = string(rows.RawValues()[i])
		}
		if row["database"] != dbName {
			continue
		}
		num := func(name string) int64 {
			n, _ := strconv.ParseInt(row[name], 10, 64)
			return n
		}
		return Stats{
			Transactions: num("total_xact_count"), Queries: num("total_query_count"),
			TransactionTime: time.Duration(num("total_xact_time")) * time.Microsecond,
			QueryTime:       time.Duration(num("total_query_time")) * time.Microsecond,
			WaitTime:        time.Duration(num("total_wait_time")) * time.Microsecond,
		}, nil
	}
	// No row yet: nobody has connected to the database through it.
	return Stats{}, rows.Err()
}

// Sub is the counters' growth from before to s.
func (s Stats) Sub(before Stats) Stats {
	return Stats{
		Transactions: s.Transactions - before.Transactions, Queries: s.Queries - before.Queries,
		TransactionTime: s.TransactionTime - before.TransactionTime, QueryTime: s.QueryTime - before.QueryTime,
		WaitTime: s.WaitTime - before.WaitTime,
	}
}

func adminURL(server *url.URL, addr string) string {
	u := *server
	u.Host = addr
	u.Path = "/pgbouncer"
	return u.String()
}

// Logs returns what PgBouncer has logged.
func (b *Bouncer) Logs() string { return b.logs.String() }

// ConfigParams are the values of a pgbouncer.ini.
type ConfigParams struct {
	ServerHost, ServerPort string
	ListenHost, ListenPort string
	AuthFile               string
	PoolSize, MaxClients   int
	// StatsUser may read the admin console's SHOW commands.
	StatsUser string
}

// Config is the pgbouncer.ini the tests and the scale-out scenario run:
// docs/running.md's PgBouncer example with trust authentication (the test
// server trusts local connections) and without a Unix socket.
func Config(p ConfigParams) string {
	return fmt.Sprintf(`[databases]
* = host=%s port=%s

[pgbouncer]
listen_addr = %s
listen_port = %s
unix_socket_dir =
auth_type = trust
auth_file = %s
pool_mode = transaction
default_pool_size = %d
max_client_conn = %d
log_connections = 0
log_disconnections = 0
stats_users = %s
`, p.ServerHost, p.ServerPort, p.ListenHost, p.ListenPort, p.AuthFile, p.PoolSize, p.MaxClients, p.StatsUser)
}

func portOf(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	return "5432"
}

func freeAddr(t testing.TB) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return "127.0.0.1:" + strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
}
