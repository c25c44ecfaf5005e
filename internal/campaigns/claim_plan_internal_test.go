package campaigns

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/contactbook/contactbook/internal/postgres"
	"github.com/contactbook/contactbook/internal/postgres/pgtest"
)

// statementCapture is a postgres.DB that records the first query it is
// given instead of running it, so a test can run that statement under
// EXPLAIN ANALYZE with the arguments the store passed.
type statementCapture struct {
	postgres.DB
	sql  string
	args []any
}

var errCaptured = errors.New("captured")

func (c *statementCapture) Query(_ context.Context, sql string, args ...any) (pgx.Rows, error) {
	c.sql, c.args = sql, args
	return nil, errCaptured
}

func (c *statementCapture) Exec(_ context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	c.sql, c.args = sql, args
	return pgconn.CommandTag{}, errCaptured
}

// A step's claim reads a bounded number of completion rows whatever the
// statistics say. The table is analysed while it holds only earlier
// campaigns' completions (as autovacuum leaves it before a new campaign),
// so the planner believes the new step has no completions; then half of
// the new step is sent and the next claim is explained. An anti-join plan
// rescans every completion of the step for every candidate (millions of
// rows here); the per-candidate probe reads at most one row each.
func TestClaimPlanStaysBoundedAfterAnalyze(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.Setup(t).Pool
	const contacts = 3000
	team, book, campaign, step := uuid.New(), uuid.New(), uuid.New(), uuid.New()
	seed := []string{
		`INSERT INTO teams (id, name) VALUES ('` + team.String() + `', 'Plan')`,
		`INSERT INTO books (id, team_id, name, slug) VALUES ('` + book.String() + `', '` + team.String() + `', 'Plan', 'plan')`,
		`INSERT INTO contacts (book_id, first_name, emails)
		 SELECT '` + book.String() + `', 'c' || g, jsonb_build_array(jsonb_build_object('address', 'c' || g || '@example.com', 'label', 'work', 'primary', true))
		 FROM generate_series(1, 3000) g`,
		// Three earlier campaigns, every participant done.
		`DO $$
		 DECLARE c uuid; s uuid;
		 BEGIN
		   FOR i IN 1..3 LOOP
		     INSERT INTO campaigns (book_id, name, status) VALUES ('` + book.String() + `', 'old' || i, 'active') RETURNING id INTO c;
		     INSERT INTO campaign_steps (campaign_id, step_type, name, sort_order, schedule_type)
		       VALUES (c, 'trigger', 'Step', 1, 'immediate') RETURNING id INTO s;
		     INSERT INTO campaign_participants (campaign_id, contact_id, enrolled_at) SELECT c, id, now() FROM contacts;
		     INSERT INTO campaign_step_completions (step_id, participant_id, campaign_id, result, completed_at, tries)
		       SELECT s, p.id, c, 'success', now(), 1 FROM campaign_participants p WHERE p.campaign_id = c;
		   END LOOP;
		 END $$`,
		`ANALYZE campaign_participants, campaign_step_completions, campaign_steps, campaigns, contacts`,
		`INSERT INTO campaigns (id, book_id, name, status) VALUES ('` + campaign.String() + `', '` + book.String() + `', 'new', 'active')`,
		`INSERT INTO campaign_steps (id, campaign_id, step_type, name, sort_order, schedule_type)
		 VALUES ('` + step.String() + `', '` + campaign.String() + `', 'trigger', 'Step', 1, 'immediate')`,
		`INSERT INTO campaign_participants (campaign_id, contact_id, enrolled_at)
		 SELECT '` + campaign.String() + `', id, now() FROM contacts`,
		// The first half of the new step is sent.
		`INSERT INTO campaign_step_completions (step_id, participant_id, campaign_id, result, completed_at, tries)
		 SELECT '` + step.String() + `', p.id, p.campaign_id, 'success', now(), 1
		 FROM campaign_participants p WHERE p.campaign_id = '` + campaign.String() + `' ORDER BY p.contact_id LIMIT 1500`,
	}
	for _, q := range seed {
		if _, err := pool.Exec(ctx, q); err != nil {
			t.Fatalf("seed: %v\n%s", err, q)
		}
	}

	capture := &statementCapture{}
	now := time.Now()
	_, _, _, err := store{}.claimDue(ctx, capture, claimParams{
		CampaignID: campaign, StepID: step, Limit: 500, ClaimID: uuid.New(),
		MaxTries: 3, Now: now, LeaseUntil: now.Add(time.Minute),
	})
	if !errors.Is(err, errCaptured) {
		t.Fatalf("claimDue: %v", err)
	}
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	var plan []byte
	if err := tx.QueryRow(ctx, "EXPLAIN (ANALYZE, FORMAT JSON) "+capture.sql, capture.args...).Scan(&plan); err != nil {
		t.Fatalf("explain: %v", err)
	}
	var doc []struct {
		Plan planNode `json:"Plan"`
	}
	if err := json.Unmarshal(plan, &doc); err != nil || len(doc) != 1 {
		t.Fatalf("plan: %v\n%s", err, plan)
	}
	read := doc[0].Plan.rowsOf("campaign_step_completions")
	// 2,000 candidates (1,500 done, then 500 due), at most one row each.
	if read > contacts {
		t.Fatalf("one claim of 500 read %.0f completion rows (want at most %d): the plan is not safe under these statistics\n%s", read, contacts, plan)
	}
}

// planNode is the part of EXPLAIN's JSON the test reads.
type planNode struct {
	Relation string     `json:"Relation Name"`
	Rows     float64    `json:"Actual Rows"`
	Loops    float64    `json:"Actual Loops"`
	Plans    []planNode `json:"Plans"`
}

// rowsOf is how many rows the plan's scans of table returned in all.
func (n planNode) rowsOf(table string) float64 {
	var total float64
	if n.Relation == table {
		total += n.Rows * n.Loops
	}
	for _, c := range n.Plans {
		total += c.rowsOf(table)
	}
	return total
}
