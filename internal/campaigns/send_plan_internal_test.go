package campaigns

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/contactbook/contactbook/internal/postgres"
	"github.com/contactbook/contactbook/internal/postgres/pgtest"
)

// The send path's statements are held to plans that drive from their
// batch to the big tables by key whatever the statistics say: each is run
// for real, under its custom plan and under the generic plan a prepared
// statement switches to, after ANALYZE has seen the state that misleads
// the planner most, and the rows its plan read (pgtest.Plan.RowsRead)
// must stay within a multiple of its batch while the tables hold many
// times more. docs/send-path-plans.md says why each statement has the
// shape it has.

// planBatch is the claim size of the plan tests: small next to the
// tables, so that a plan reading in proportion to a table is far above
// any multiple of it a keyed plan reads.
const planBatch = 100

// perBatchRow bounds the rows a keyed plan reads per row of its batch:
// every node of the plan counts (lookups, joins, CTE scans, the rows
// returned), a dozen or so per row for the claim, which reads the
// participant, its completions, its contact and its suppression.
const perBatchRow = 40

// sendFixture is a book of contacts and what the tests put in it.
type sendFixture struct {
	t     *testing.T
	ctx   context.Context
	url   string
	pool  *pgxpool.Pool // plain: seeding and checks
	team  uuid.UUID
	book  uuid.UUID
	plans map[pgtest.PlanMode]planPool
}

type planPool struct {
	pool *pgxpool.Pool
	log  *pgtest.PlanLog
}

func newSendFixture(t *testing.T) *sendFixture {
	ctx := context.Background()
	url := pgtest.NewURL(t)
	pool, err := postgres.Connect(ctx, url, 4)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	f := &sendFixture{t: t, ctx: ctx, url: url, pool: pool, team: uuid.New(), book: uuid.New(), plans: map[pgtest.PlanMode]planPool{}}
	for _, m := range []pgtest.PlanMode{pgtest.CustomPlans, pgtest.GenericPlans} {
		p, log := pgtest.NewPlanPool(t, url, m)
		f.plans[m] = planPool{p, log}
	}
	// Statistics change only when a test says so.
	f.exec(`DO $$ DECLARE r record; BEGIN
	          FOR r IN SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
	                   WHERE n.nspname = 'public' AND c.relkind = 'r' LOOP
	            EXECUTE format('ALTER TABLE %I SET (autovacuum_enabled = false)', r.relname);
	          END LOOP; END $$`)
	f.exec(`INSERT INTO teams (id, name) VALUES ($1, 'Plan')`, f.team)
	f.exec(`INSERT INTO books (id, team_id, name, slug) VALUES ($1, $2, 'Plan', 'plan')`, f.book, f.team)
	return f
}

func (f *sendFixture) exec(sql string, args ...any) {
	f.t.Helper()
	if _, err := f.pool.Exec(f.ctx, sql, args...); err != nil {
		f.t.Fatalf("%v\n%s", err, sql)
	}
}

// addContacts adds n contacts to the book, set-based.
func (f *sendFixture) addContacts(n int) {
	f.t.Helper()
	f.exec(`INSERT INTO contacts (book_id, first_name, emails)
	        SELECT $1, 'c' || g, jsonb_build_array(jsonb_build_object('address', 'c' || g || '-' || gen_random_uuid() || '@example.com', 'label', 'work', 'primary', true))
	        FROM generate_series(1, $2::int) g`, f.book, n)
}

// campaign creates an active campaign with one active email step.
func (f *sendFixture) campaign(name string) (campaign, step uuid.UUID) {
	f.t.Helper()
	campaign, step = uuid.New(), uuid.New()
	f.exec(`INSERT INTO campaigns (id, book_id, name, status) VALUES ($1, $2, $3, 'active')`, campaign, f.book, name)
	f.exec(`INSERT INTO campaign_steps (id, campaign_id, step_type, name, sort_order, schedule_type)
	        VALUES ($1, $2, 'email', 'Step', 1, 'immediate')`, step, campaign)
	return campaign, step
}

// enrollAll makes every contact of the book a participant of campaign.
func (f *sendFixture) enrollAll(campaign uuid.UUID) {
	f.t.Helper()
	f.exec(`INSERT INTO campaign_participants (campaign_id, contact_id, enrolled_at)
	        SELECT $1, id, now() FROM contacts WHERE book_id = $2 ORDER BY id`, campaign, f.book)
}

// sendAll records step as sent to every participant of campaign and
// completes them, as a finished campaign leaves its rows.
func (f *sendFixture) sendAll(campaign, step uuid.UUID) {
	f.t.Helper()
	f.exec(`INSERT INTO campaign_step_completions (step_id, participant_id, campaign_id, result, completed_at, tries, token_hash)
	        SELECT $2, p.id, p.campaign_id, 'success', now(), 1, sha256(p.id::text::bytea)
	        FROM campaign_participants p WHERE p.campaign_id = $1`, campaign, step)
	f.exec(`UPDATE campaign_participants SET status = 'completed', completed_at = now() WHERE campaign_id = $1`, campaign)
}

func (f *sendFixture) analyze() { f.t.Helper(); f.exec(`VACUUM ANALYZE`) }

// claimAndRecord claims the next batch of step on the plan pool of mode
// and records every claimed row as sent, returning the two plans and the
// next cursor (uuid.Nil when nobody was due).
func (f *sendFixture) claimAndRecord(mode pgtest.PlanMode, campaign, step uuid.UUID, after uuid.UUID) (claim, record pgtest.Plan, last uuid.UUID) {
	f.t.Helper()
	pp := f.plans[mode]
	now := time.Now()
	var rows []claimedRow
	claimID := uuid.New()
	plans := pp.log.Record(f.t, func() {
		var err error
		rows, last, _, err = store{}.claimDue(f.ctx, pp.pool, claimParams{
			CampaignID: campaign, StepID: step, After: after, Limit: planBatch, ClaimID: claimID,
			MaxTries: 3, Now: now, LeaseUntil: now.Add(time.Minute), TokenHashes: tokenHashes(planBatch),
		})
		if err != nil {
			f.t.Fatalf("claim: %v", err)
		}
	})
	claim = plans.One(f.t, "INSERT INTO campaign_claims")
	if len(rows) == 0 {
		return claim, pgtest.Plan{}, last
	}
	outs := make([]outcome, len(rows))
	for i, r := range rows {
		outs[i] = outcome{ParticipantID: r.ParticipantID, Result: ResultSuccess, MessageID: "m", ContactID: r.ContactID,
			Address: r.Email, Subject: "News"}
	}
	plans = pp.log.Record(f.t, func() {
		_, err := store{}.recordOutcomes(f.ctx, pp.pool, recordParams{
			ClaimID: claimID, Outcomes: outs, Now: now, RetryAt: now.Add(time.Minute),
			ActiveSteps: []uuid.UUID{step}, StepID: step, CampaignID: campaign,
		})
		if err != nil {
			f.t.Fatalf("record: %v", err)
		}
	})
	return claim, plans.One(f.t, "UPDATE campaign_step_completions c"), last
}

func tokenHashes(n int) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		out[i] = []byte(fmt.Sprintf("%032d", i))
	}
	return out
}

func eachMode(t *testing.T, f func(t *testing.T, mode pgtest.PlanMode)) {
	for _, m := range []pgtest.PlanMode{pgtest.CustomPlans, pgtest.GenericPlans} {
		t.Run(strings.TrimPrefix(string(m), "force_"), func(t *testing.T) { f(t, m) })
	}
}

// After a campaign to every contact of the book, ANALYZE sees every
// participant completed and none active; a second campaign to the same
// contacts is then claimed and recorded in batches.
func TestSendPlansAfterACompletedCampaign(t *testing.T) {
	t.Parallel()
	f := newSendFixture(t)
	const contacts = 10_000
	f.addContacts(contacts)
	first, firstStep := f.campaign("first")
	f.enrollAll(first)
	f.sendAll(first, firstStep)
	f.analyze()
	eachMode(t, func(t *testing.T, mode pgtest.PlanMode) {
		f.t = t
		second, step := f.campaign("second " + string(mode))
		f.enrollAll(second)
		after := uuid.Nil
		for i := range 3 {
			claim, record, last := f.claimAndRecord(mode, second, step, after)
			claim.AssertReadsAtMost(t, fmt.Sprintf("claim %d", i+1), perBatchRow*planBatch)
			record.AssertReadsAtMost(t, fmt.Sprintf("record %d", i+1), perBatchRow*planBatch)
			t.Logf("claim %d read %.0f rows, record %.0f", i+1, claim.RowsRead(), record.RowsRead())
			after = last
		}
	})
}
