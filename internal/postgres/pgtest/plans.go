package pgtest

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/contactbook/contactbook/internal/postgres"
)

// PlanMode is which plan the server runs a statement with: the custom
// plan of each execution's values (what a statement sent with
// postgres.PlanEachTime always gets), or the generic plan a prepared
// statement may switch to after its fifth execution.
type PlanMode string

const (
	CustomPlans  PlanMode = "force_custom_plan"
	GenericPlans PlanMode = "force_generic_plan"
)

// PlanLog holds the plans, as executed, of every statement run on the
// connections of a pool made with RecordPlans.
type PlanLog struct {
	mu    sync.Mutex
	plans []Plan
	bad   []string
}

// planPool opens a pool, configured as the service's, on the database at
// url whose connections report the plan of every top-level statement they
// execute, analysed, with buffers, in the given mode: auto_explain, loaded
// per session, logs each plan as a notice the pool collects into the
// returned PlanLog. Statements are the ones the stores send, with the
// arguments they pass: nothing is re-typed.
func planPool(url string, maxConns int32, mode PlanMode) (*pgxpool.Pool, *PlanLog, error) {
	cfg, err := postgres.PoolConfig(url, maxConns, postgres.PoolSession)
	if err != nil {
		return nil, nil, err
	}
	log := &PlanLog{}
	cfg.ConnConfig.OnNotice = func(_ *pgconn.PgConn, n *pgconn.Notice) { log.notice(n) }
	service := cfg.AfterConnect
	cfg.AfterConnect = func(ctx context.Context, c *pgx.Conn) error {
		if err := service(ctx, c); err != nil {
			return err
		}
		for _, q := range []string{
			`LOAD 'auto_explain'`,
			`SET auto_explain.log_min_duration = 0`,
			`SET auto_explain.log_analyze = on`,
			`SET auto_explain.log_buffers = on`,
			`SET auto_explain.log_timing = off`,
			`SET auto_explain.log_format = json`,
			`SET auto_explain.log_level = notice`,
			`SET client_min_messages = notice`,
			`SET plan_cache_mode = ` + string(mode),
		} {
			if _, err := c.Exec(ctx, q); err != nil {
				return fmt.Errorf("%s: %w", q, err)
			}
		}
		return nil
	}
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("open plan pool: %w", err)
	}
	return pool, log, nil
}

// planNotice starts the message auto_explain logs a plan with.
const planNotice = "plan:\n"

func (l *PlanLog) notice(n *pgconn.Notice) {
	_, body, ok := strings.Cut(n.Message, planNotice)
	if !ok {
		return
	}
	var p Plan
	err := json.Unmarshal([]byte(body), &p)
	l.mu.Lock()
	defer l.mu.Unlock()
	if err != nil {
		l.bad = append(l.bad, err.Error())
		return
	}
	p.JSON = []byte(body)
	l.plans = append(l.plans, p)
}

// Record runs fn and returns the plans of the statements executed on the
// pool meanwhile, in the order they ended.
func (l *PlanLog) Record(t testing.TB, fn func()) Plans {
	t.Helper()
	l.mu.Lock()
	from := len(l.plans)
	l.mu.Unlock()
	fn()
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.bad) > 0 {
		t.Fatalf("pgtest: unreadable plan: %s", l.bad[0])
	}
	return slices.Clone(l.plans[from:])
}

// Plans are executed statements' plans.
type Plans []Plan

// One is the only plan among ps whose statement contains fragment; the
// test fails when there is none or more than one.
func (ps Plans) One(t testing.TB, fragment string) Plan {
	t.Helper()
	var found []Plan
	for _, p := range ps {
		if strings.Contains(p.Query, fragment) {
			found = append(found, p)
		}
	}
	if len(found) != 1 {
		t.Fatalf("pgtest: %d of %d plans run a statement containing %q, want 1", len(found), len(ps), fragment)
	}
	return found[0]
}

// Plan is one executed statement's plan.
type Plan struct {
	Query string   `json:"Query Text"`
	Root  PlanNode `json:"Plan"`
	JSON  []byte   `json:"-"`
}

// PlanNode is the part of a plan node a test reads.
type PlanNode struct {
	Type            string     `json:"Node Type"`
	Relation        string     `json:"Relation Name"`
	Index           string     `json:"Index Name"`
	Parent          string     `json:"Parent Relationship"`
	Subplan         string     `json:"Subplan Name"`
	Rows            float64    `json:"Actual Rows"`
	Loops           float64    `json:"Actual Loops"`
	RemovedByFilter float64    `json:"Rows Removed by Filter"`
	RemovedByJoin   float64    `json:"Rows Removed by Join Filter"`
	RemovedByCheck  float64    `json:"Rows Removed by Index Recheck"`
	HeapFetches     float64    `json:"Heap Fetches"`
	HitBlocks       float64    `json:"Shared Hit Blocks"`
	ReadBlocks      float64    `json:"Shared Read Blocks"`
	Plans           []PlanNode `json:"Plans"`
}

// read is the rows the node produced and discarded in all its loops
// (EXPLAIN gives each per loop).
func (n PlanNode) read() float64 {
	return (n.Rows + n.RemovedByFilter + n.RemovedByJoin + n.RemovedByCheck) * n.Loops
}

// RowsRead is the work the statement did in rows: over every node of the
// plan (subplans and CTEs included), the rows it returned and the rows
// its filters, join filters and index rechecks threw away, times its
// loops. A plan that drives from its batch to the tables by key reads a
// small multiple of the batch; one that scans a table, or rescans a set
// for every row of another, reads in proportion to the table.
func (p Plan) RowsRead() float64 { return p.Root.sum(func(n PlanNode) float64 { return n.read() }) }

// RowsOf is RowsRead counted over the nodes that scan table.
func (p Plan) RowsOf(table string) float64 {
	return p.Root.sum(func(n PlanNode) float64 {
		if n.Relation == table {
			return n.read()
		}
		return 0
	})
}

// HeapFetches is the heap rows the plan's index-only scans visited, over
// all their loops (EXPLAIN gives the total): the live rows whose page was
// not all-visible and every dead row the index still names. RowsRead does
// not see the dead ones, which an index-only scan skips after fetching
// them; a probe for the newest entry that walks the entries of rows
// deleted since the last vacuum reads in proportion to them here.
func (p Plan) HeapFetches() float64 {
	return p.Root.sum(func(n PlanNode) float64 { return n.HeapFetches })
}

func (n PlanNode) sum(f func(PlanNode) float64) float64 {
	total := f(n)
	for _, c := range n.Plans {
		total += c.sum(f)
	}
	return total
}

// AssertReadsAtMost fails the test when the plan read more than max rows
// (RowsRead), showing every node's share.
func (p Plan) AssertReadsAtMost(t testing.TB, what string, max float64) {
	t.Helper()
	if read := p.RowsRead(); read > max {
		t.Errorf("%s read %.0f rows, want at most %.0f: its plan does not stay with its batch\n%s", what, read, max, p.Summary())
	}
}

// AssertTableReadsAtMost fails the test when the plan read more than max
// rows of table (RowsOf).
func (p Plan) AssertTableReadsAtMost(t testing.TB, what, table string, max float64) {
	t.Helper()
	if read := p.RowsOf(table); read > max {
		t.Errorf("%s read %.0f rows of %s, want at most %.0f: its plan does not stay with its batch\n%s", what, read, table, max, p.Summary())
	}
}

// Summary is the plan as an indented list of nodes with the rows each
// read, for a failure message.
func (p Plan) Summary() string {
	var b strings.Builder
	var walk func(n PlanNode, depth int)
	walk = func(n PlanNode, depth int) {
		fmt.Fprintf(&b, "%s%s", strings.Repeat("  ", depth), n.Type)
		if n.Subplan != "" {
			fmt.Fprintf(&b, " (%s)", n.Subplan)
		}
		if n.Relation != "" {
			fmt.Fprintf(&b, " on %s", n.Relation)
		}
		if n.Index != "" {
			fmt.Fprintf(&b, " using %s", n.Index)
		}
		fmt.Fprintf(&b, ": %.0f rows x %.0f loops", n.Rows, n.Loops)
		if removed := n.RemovedByFilter + n.RemovedByJoin + n.RemovedByCheck; removed > 0 {
			fmt.Fprintf(&b, ", %.0f removed per loop", removed)
		}
		if n.HeapFetches > 0 {
			fmt.Fprintf(&b, ", %.0f heap fetches", n.HeapFetches)
		}
		fmt.Fprintf(&b, ", %.0f blocks\n", n.HitBlocks+n.ReadBlocks)
		for _, c := range n.Plans {
			walk(c, depth+1)
		}
	}
	walk(p.Root, 0)
	return b.String()
}
