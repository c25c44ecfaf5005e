package campaigns

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/contactbook/contactbook/internal/postgres"
	"github.com/contactbook/contactbook/internal/postgres/pgtest"
	"github.com/contactbook/contactbook/internal/segments"
)

// The send path's statements are held to plans that drive from their
// batch to the big tables by key whatever the statistics say: each is run
// for real, under the plans it runs with (custom plans for the statements
// sent with postgres.PlanEachTime, custom and generic for prepared ones),
// after ANALYZE has seen the state that misleads the planner most, and
// the rows its plan read (pgtest.Plan.RowsRead)
// must stay within a multiple of its batch while the tables hold many
// times more. docs/send-path-plans.md says why each statement has the
// shape it has.

// planBatch is the claim size of the plan tests: small next to the
// tables, so that a plan reading in proportion to a table is far above
// any multiple of it a keyed plan reads.
const planBatch = 100

// perBatchRow bounds the rows a keyed plan reads per row of its batch:
// every node of the plan counts (lookups, joins, CTE scans, the rows
// returned), about 25 per row for the claim, which reads the participant,
// its completions, its contact and its suppression.
const perBatchRow = 40

// sendFixture is a book of contacts and what the tests put in it.
type sendFixture struct {
	t     *testing.T
	ctx   context.Context
	pool  *pgxpool.Pool // plain: seeding and checks
	team  uuid.UUID
	book  uuid.UUID
	plans map[pgtest.PlanMode]planPool
	steps map[uuid.UUID][]uuid.UUID // each campaign's steps, in order
}

type planPool struct {
	pool *pgxpool.Pool
	log  *pgtest.PlanLog
}

func newSendFixture(t *testing.T) *sendFixture {
	ctx := context.Background()
	db := pgtest.Setup(t, pgtest.MaxConns(4))
	pool := db.Pool
	f := &sendFixture{t: t, ctx: ctx, pool: pool, team: uuid.New(), book: uuid.New(), plans: map[pgtest.PlanMode]planPool{},
		steps: map[uuid.UUID][]uuid.UUID{}}
	for _, m := range []pgtest.PlanMode{pgtest.CustomPlans, pgtest.GenericPlans} {
		p := pgtest.Setup(t, pgtest.On(db.URL), pgtest.MaxConns(4), pgtest.RecordPlans(m))
		f.plans[m] = planPool{p.Pool, p.Plans}
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
	campaign = uuid.New()
	f.exec(`INSERT INTO campaigns (id, book_id, name, status) VALUES ($1, $2, $3, 'active')`, campaign, f.book, name)
	return campaign, f.addStep(campaign)
}

// addStep adds an active email step at the end of campaign.
func (f *sendFixture) addStep(campaign uuid.UUID) uuid.UUID {
	f.t.Helper()
	step := uuid.New()
	f.exec(`INSERT INTO campaign_steps (id, campaign_id, step_type, name, sort_order, schedule_type)
	        VALUES ($1, $2, 'email', 'Step', $3, 'immediate')`, step, campaign, len(f.steps[campaign])+1)
	f.steps[campaign] = append(f.steps[campaign], step)
	return step
}

// earlier is the steps of campaign before step.
func (f *sendFixture) earlier(campaign, step uuid.UUID) []uuid.UUID {
	steps := f.steps[campaign]
	for i, s := range steps {
		if s == step {
			return steps[:i]
		}
	}
	return nil
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

// run runs fn on the plan pool of mode and returns the plan of its
// statement containing fragment.
func (f *sendFixture) run(mode pgtest.PlanMode, fragment string, fn func(db postgres.DB) error) pgtest.Plan {
	f.t.Helper()
	pp := f.plans[mode]
	plans := pp.log.Record(f.t, func() {
		if err := fn(pp.pool); err != nil {
			f.t.Fatalf("%s: %v", fragment, err)
		}
	})
	return plans.One(f.t, fragment)
}

// contactIDs returns up to n of the book's contact ids.
func (f *sendFixture) contactIDs(n int) []uuid.UUID {
	f.t.Helper()
	rows, _ := f.pool.Query(f.ctx, `SELECT id FROM contacts WHERE book_id = $1 ORDER BY id LIMIT $2`, f.book, n)
	ids, err := pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
	if err != nil {
		f.t.Fatal(err)
	}
	return ids
}

// claim claims the next batch of step on the plan pool of mode, with the
// given lease, returning its plan, its rows and the next cursor (uuid.Nil
// when nobody was due).
func (f *sendFixture) claim(mode pgtest.PlanMode, campaign, step, claimID, after uuid.UUID, lease time.Time) (pgtest.Plan, []claimedRow, uuid.UUID) {
	f.t.Helper()
	var rows []claimedRow
	var last uuid.UUID
	plan := f.run(mode, "INSERT INTO campaign_claims", func(db postgres.DB) (err error) {
		rows, last, _, err = store{}.claimDue(f.ctx, db, claimParams{
			CampaignID: campaign, StepID: step, Earlier: f.earlier(campaign, step), After: after, Limit: planBatch, ClaimID: claimID,
			MaxTries: 3, Now: time.Now(), LeaseUntil: lease, TokenHashes: tokenHashes(planBatch),
		})
		return err
	})
	return plan, rows, last
}

// claimAndRecord claims the next batch of step (custom plans: both
// statements are planned per execution) and records every claimed row as
// sent, returning the two plans and the next cursor.
func (f *sendFixture) claimAndRecord(campaign, step, after uuid.UUID) (claim, record pgtest.Plan, last uuid.UUID) {
	f.t.Helper()
	now := time.Now()
	claimID := uuid.New()
	claim, rows, last := f.claim(pgtest.CustomPlans, campaign, step, claimID, after, now.Add(time.Minute))
	if len(rows) == 0 {
		f.t.Fatal("nobody claimed")
	}
	outs := make([]outcome, len(rows))
	for i, r := range rows {
		outs[i] = outcome{ParticipantID: r.ParticipantID, Result: ResultSuccess, MessageID: "m", ContactID: r.ContactID,
			Address: r.Email, Subject: "News"}
	}
	record = f.run(pgtest.CustomPlans, "UPDATE campaign_step_completions c", func(db postgres.DB) error {
		_, err := store{}.recordOutcomes(f.ctx, db, recordParams{
			ClaimID: claimID, Outcomes: outs, Now: now, RetryAt: now.Add(time.Minute),
			ActiveSteps: f.steps[campaign], StepID: step, CampaignID: campaign,
		})
		return err
	})
	return claim, record, last
}

func tokenHashes(n int) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		out[i] = []byte(fmt.Sprintf("%032d", i))
	}
	return out
}

// eachMode runs f as a subtest under custom plans, then generic plans.
func eachMode(t *testing.T, name string, f func(t *testing.T, mode pgtest.PlanMode)) {
	for _, m := range []pgtest.PlanMode{pgtest.CustomPlans, pgtest.GenericPlans} {
		t.Run(name+"/"+strings.TrimPrefix(string(m), "force_"), func(t *testing.T) { f(t, m) })
	}
}

// After a campaign to every contact of the book, ANALYZE sees every
// participant completed and none active (and one campaign: a book's
// first); then campaigns the statistics never saw are enrolled, claimed,
// recorded, reaped, released and swept.
func TestSendPlansAfterACompletedCampaign(t *testing.T) {
	t.Parallel()
	f := newSendFixture(t)
	const contacts = 10_000
	f.addContacts(contacts)
	first, firstStep := f.campaign("first")
	f.enrollAll(first)
	f.sendAll(first, firstStep)
	f.analyze()
	second, step := f.campaign("second")
	ids := f.contactIDs(contacts)

	// Enrollment, 1,000 contacts a statement (planned per execution).
	for i := 0; i < len(ids); i += 1000 {
		batch := ids[i:min(i+1000, len(ids))]
		plan := f.run(pgtest.CustomPlans, "INSERT INTO campaign_participants", func(db postgres.DB) error {
			_, err := store{}.enrollContacts(f.ctx, db, second, f.book, batch, time.Now(), nil)
			return err
		})
		plan.AssertReadsAtMost(t, "enrolling 1,000 contacts", perBatchRow*1000)
		plan.AssertTableReadsAtMost(t, "enrolling 1,000 contacts", "campaign_participants", 2*1000)
	}
	// A trigger step's enrollment (prepared: both plans).
	for _, mode := range []pgtest.PlanMode{pgtest.CustomPlans, pgtest.GenericPlans} {
		target, _ := f.campaign("target " + string(mode))
		plan := f.run(mode, "INSERT INTO campaign_participants", func(db postgres.DB) error {
			return store{}.enrollTriggered(f.ctx, db, f.book, target, ids[:planBatch], time.Now())
		})
		plan.AssertReadsAtMost(t, "a trigger's enrollment ("+string(mode)+")", perBatchRow*planBatch)
	}

	// Claims and records: the participants are read through their
	// campaign's index and the primary key, never every active one. Then
	// again once campaigns the statistics have not seen are in flight
	// too: the walk reads this campaign's participants, not every
	// campaign's of the contacts it passes.
	after := uuid.Nil
	for i := range 5 {
		if i == 3 {
			for j := range 3 {
				c, _ := f.campaign(fmt.Sprintf("other %d", j))
				f.enrollAll(c)
			}
		}
		claim, record, last := f.claimAndRecord(second, step, after)
		what := fmt.Sprintf("claim %d", i+1)
		claim.AssertReadsAtMost(t, what, perBatchRow*planBatch)
		claim.AssertTableReadsAtMost(t, what, "campaign_participants", 2*planBatch)
		what = fmt.Sprintf("record %d", i+1)
		record.AssertReadsAtMost(t, what, perBatchRow*planBatch)
		record.AssertTableReadsAtMost(t, what, "campaign_participants", 2*planBatch)
		after = last
	}

	// A campaign of two steps: the second step's claim probes the first's
	// completions, and each record probes the other step's before it
	// completes a participant.
	two, first2 := f.campaign("two steps")
	second2 := f.addStep(two)
	f.enrollAll(two)
	for _, st := range []uuid.UUID{first2, second2} {
		at := uuid.Nil
		for i := range 2 {
			claim, record, last := f.claimAndRecord(two, st, at)
			what := fmt.Sprintf("two steps: claim %d of step %d", i+1, len(f.earlier(two, st))+1)
			claim.AssertReadsAtMost(t, what, perBatchRow*planBatch)
			claim.AssertTableReadsAtMost(t, what, "campaign_participants", 2*planBatch)
			record.AssertReadsAtMost(t, what+"'s record", perBatchRow*planBatch)
			at = last
		}
	}
	var completed int
	if err := f.pool.QueryRow(f.ctx, `SELECT count(*) FROM campaign_participants WHERE campaign_id = $1 AND status = 'completed'`, two).Scan(&completed); err != nil {
		t.Fatal(err)
	}
	if completed != 2*planBatch {
		t.Fatalf("%d participants of the two-step campaign completed, want %d (both steps sent)", completed, 2*planBatch)
	}

	// A claim whose processor died: reaped (prepared: both plans), and
	// one given back before its send.
	eachMode(t, "reap", func(t *testing.T, mode pgtest.PlanMode) {
		f.t = t
		_, rows, last := f.claim(pgtest.CustomPlans, second, step, uuid.New(), after, time.Now().Add(-time.Second))
		after = last
		plan := f.run(mode, "DELETE FROM campaign_claims", func(db postgres.DB) error {
			failed, _, err := store{}.reapExpired(f.ctx, db, second, time.Now())
			if err == nil && failed != 0 {
				err = fmt.Errorf("reaped %d as failed, want none (not sent yet)", failed)
			}
			return err
		})
		plan.AssertReadsAtMost(t, "reaping a claim", float64(perBatchRow*len(rows)))
		plan.AssertTableReadsAtMost(t, "reaping a claim", "campaign_step_completions", 2*planBatch)
		claimID := uuid.New()
		_, rows, last = f.claim(pgtest.CustomPlans, second, step, claimID, after, time.Now().Add(time.Minute))
		after = last
		plan = f.run(mode, "DELETE FROM campaign_claims", func(db postgres.DB) error {
			return store{}.releaseClaim(f.ctx, db, claimID)
		})
		plan.AssertReadsAtMost(t, "giving back a claim", float64(perBatchRow*len(rows)))
		plan.AssertTableReadsAtMost(t, "giving back a claim", "campaign_step_completions", 2*planBatch)
	})
	f.t = t

	// The completion sweep at the end of a pass walks the campaign, not
	// the table (five campaigns' participants); planned per execution.
	plan := f.run(pgtest.CustomPlans, "UPDATE campaign_participants p SET status", func(db postgres.DB) error {
		_, err := store{}.completeParticipants(f.ctx, db, second, []uuid.UUID{step}, time.Now())
		return err
	})
	plan.AssertTableReadsAtMost(t, "the completion sweep", "campaign_participants", 2*contacts)
	// So does the removal of those who left the audience, before a step.
	plan = f.run(pgtest.CustomPlans, "SET status = 'removed'", func(db postgres.DB) error {
		_, err := store{}.removeLeavers(f.ctx, db, claimParams{CampaignID: second, StepID: step}, time.Now(), "left", &segments.Predicate{})
		return err
	})
	plan.AssertTableReadsAtMost(t, "removing the audience's leavers", "campaign_participants", 2*contacts)

	// Held by a window: ANALYZE saw nobody held; every participant of the
	// second campaign is held now, and the releases read those only.
	f.exec(`UPDATE campaign_participants SET held_until = now() + interval '1 hour', held_step_id = $2
	        WHERE campaign_id = $1 AND status = 'active'`, second, step)
	eachMode(t, "holds", func(t *testing.T, mode pgtest.PlanMode) {
		f.t = t
		releases := []struct {
			what string
			fn   func(db postgres.DB) error
		}{
			{"waking the held whose time came", func(db postgres.DB) error { return store{}.wakeHeld(f.ctx, db, second, time.Now()) }},
			{"releasing a step's holds", func(db postgres.DB) error { return store{}.releaseStepHolds(f.ctx, db, second, step) }},
			{"releasing a campaign's holds", func(db postgres.DB) error { return store{}.releaseCampaignHolds(f.ctx, db, second) }},
			{"releasing a book's holds", func(db postgres.DB) error { return store{}.releaseBookHolds(f.ctx, db, f.book) }},
		}
		for _, r := range releases {
			tx, err := f.plans[mode].pool.Begin(f.ctx)
			if err != nil {
				t.Fatal(err)
			}
			plan := f.run(mode, "SET held_until = NULL", func(postgres.DB) error { return r.fn(tx) })
			_ = tx.Rollback(f.ctx)
			plan.AssertTableReadsAtMost(t, r.what, "campaign_participants", 2*contacts)
		}
	})
}

// ANALYZE saw a book of one contact, in one finished campaign; then the
// book grows to 30,000 contacts (30,000 times what the statistics say, as
// telling as 100,000 and faster to build). Its audience is enrolled into a new
// campaign (the newcomers read once, then enrolled in one statement),
// into a second one beside it, and claims and records follow.
func TestSendPlansAfterABookGrew(t *testing.T) {
	t.Parallel()
	f := newSendFixture(t)
	f.addContacts(1)
	first, firstStep := f.campaign("first")
	f.enrollAll(first)
	f.sendAll(first, firstStep)
	f.analyze()
	const contacts = 30_000
	f.addContacts(contacts - 1)

	everyone := &segments.Predicate{} // the rule that matches every contact
	var campaign, step uuid.UUID
	for i := range 2 {
		campaign, step = f.campaign(fmt.Sprintf("audience %d", i))
		var ids []uuid.UUID
		// Under either plan: the probe holds whatever the statistics.
		for _, mode := range []pgtest.PlanMode{pgtest.GenericPlans, pgtest.CustomPlans} {
			read := f.run(mode, "SELECT ct.id FROM contact_records ct", func(db postgres.DB) (err error) {
				ids, err = store{}.newcomers(f.ctx, db, campaign, f.book, everyone)
				return err
			})
			if len(ids) != contacts {
				t.Fatalf("%d newcomers, want %d", len(ids), contacts)
			}
			// Per contact of the book: its row and one probe of the
			// campaign's participants, however many other campaigns have.
			what := "reading the audience's newcomers (" + string(mode) + ")"
			read.AssertReadsAtMost(t, what, 4*contacts)
			read.AssertTableReadsAtMost(t, what, "campaign_participants", contacts)
		}
		enroll := f.run(pgtest.CustomPlans, "INSERT INTO campaign_participants", func(db postgres.DB) error {
			_, err := store{}.enrollContacts(f.ctx, db, campaign, f.book, ids, time.Now(), nil)
			return err
		})
		enroll.AssertReadsAtMost(t, "enrolling the audience", 8*contacts)
	}
	after := uuid.Nil
	for i := range 3 {
		claim, record, last := f.claimAndRecord(campaign, step, after)
		// The claim's probe of a step's completions may scan them while
		// statistics of a one-row table make them look like a page or
		// two (a bounded cost, gone once the table has a few pages); the
		// contacts and participants it reads stay with the batch.
		what := fmt.Sprintf("claim %d", i+1)
		claim.AssertTableReadsAtMost(t, what, "contacts", 2*planBatch)
		claim.AssertTableReadsAtMost(t, what, "campaign_participants", 2*planBatch)
		what = fmt.Sprintf("record %d", i+1)
		record.AssertTableReadsAtMost(t, what, "campaign_participants", 2*planBatch)
		record.AssertTableReadsAtMost(t, what, "contacts", 0)
		after = last
	}
}
