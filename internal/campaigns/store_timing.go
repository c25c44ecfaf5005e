package campaigns

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/contactbook/contactbook/internal/delivery"
	"github.com/contactbook/contactbook/internal/postgres"
)

// stepTimingColumns are a step's window, condition, variants and A/B
// state, read after its other columns (scanStep).
const stepTimingColumns = `delay_hours, send_window, condition_if, condition_step_id, variants, ab_test,
	winner_variant_id, test_started_at, test_quota, test_assigned`

// stepTimingSet writes them back in an update; replacing the variants by
// none forgets the test.
const stepTimingSet = `delay_hours = @delay_hours, send_window = @send_window, condition_if = @condition_if,
	condition_step_id = @condition_step_id, variants = @variants, ab_test = @ab_test,
	winner_variant_id = @winner_variant_id,
	test_started_at = CASE WHEN @variants::jsonb IS NULL THEN NULL ELSE test_started_at END,
	test_quota = CASE WHEN @variants::jsonb IS NULL THEN NULL ELSE test_quota END,
	test_assigned = CASE WHEN @variants::jsonb IS NULL THEN 0 ELSE test_assigned END,
	decided_at = CASE WHEN @winner_variant_id::uuid IS NULL THEN NULL ELSE decided_at END`

// stepTimingRow holds the columns that need a conversion.
type stepTimingRow struct {
	condIf   *string
	condStep *uuid.UUID
}

func (r *stepTimingRow) dest(st *Step) []any {
	return []any{&st.DelayHours, &st.SendWindow, &r.condIf, &r.condStep, &st.Variants, &st.ABTest,
		&st.WinnerVariantID, &st.test.startedAt, &st.test.quota, &st.test.assigned}
}

func (r *stepTimingRow) apply(st *Step) {
	if r.condIf != nil && r.condStep != nil {
		st.Condition = &Condition{If: ConditionIf(*r.condIf), StepID: *r.condStep}
	}
}

// jsonOrNull is v as jsonb, or NULL when nil.
func jsonOrNull[T any](v *T) []byte {
	if v == nil {
		return nil
	}
	b, _ := json.Marshal(v)
	return b
}

func timingArgs(st Step) pgx.StrictNamedArgs {
	var condIf *string
	var condStep *uuid.UUID
	if st.Condition != nil {
		s := string(st.Condition.If)
		condIf, condStep = &s, &st.Condition.StepID
	}
	var variants *[]Variant
	if st.Variants != nil {
		variants = &st.Variants
	}
	return pgx.StrictNamedArgs{
		"delay_hours": st.DelayHours, "send_window": jsonOrNull(st.SendWindow), "condition_if": condIf,
		"condition_step_id": condStep, "variants": jsonOrNull(variants), "ab_test": jsonOrNull(st.ABTest),
		"winner_variant_id": st.WinnerVariantID,
	}
}

// releaseBookHolds lets every participant of the book's campaigns who
// waits for a window go: the next pass reads their window again (the
// book's default zone changed).
func (store) releaseBookHolds(ctx context.Context, db postgres.DB, bookID uuid.UUID) error {
	_, err := db.Exec(ctx, `
		UPDATE campaign_participants p SET held_until = NULL, held_step_id = NULL
		FROM campaigns c WHERE c.book_id = $1 AND p.campaign_id = c.id AND p.held_until IS NOT NULL`, bookID)
	return err
}

// releaseCampaignHolds lets every held participant of a campaign go (a
// step's window, condition or place changed): the next pass reads them
// again.
func (store) releaseCampaignHolds(ctx context.Context, db postgres.DB, campaignID uuid.UUID) error {
	_, err := db.Exec(ctx, `
		UPDATE campaign_participants SET held_until = NULL, held_step_id = NULL
		WHERE campaign_id = $1 AND held_until IS NOT NULL`, campaignID)
	return err
}

// wakeHeld lets go the participants of a campaign whose wait is over.
func (store) wakeHeld(ctx context.Context, db postgres.DB, campaignID uuid.UUID, now time.Time) error {
	_, err := db.Exec(ctx, `
		UPDATE campaign_participants SET held_until = NULL, held_step_id = NULL
		WHERE campaign_id = $1 AND held_until IS NOT NULL AND held_until <= $2`, campaignID, now)
	return err
}

// withArgs adds more named arguments to args.
func withArgs(args, more pgx.StrictNamedArgs) pgx.StrictNamedArgs {
	maps.Copy(args, more)
	return args
}

// claimTimingArgs are the claim's window, condition and A/B arguments.
func claimTimingArgs(p claimParams) pgx.StrictNamedArgs {
	a := pgx.StrictNamedArgs{
		"default_tz": "UTC", "win_days": []int32{}, "win_start": 0, "win_end": 0,
		"cond_step": nil, "cond_kind": "", "cond_heard": true,
		"variant_ids": []uuid.UUID{}, "winner": nil, "ab_hold_until": nil,
	}
	if t := p.Test; t != nil {
		a["variant_ids"], a["winner"], a["ab_hold_until"] = t.variants, t.winner, t.holdUntil
	}
	if w := p.Window; w != nil {
		a["default_tz"], a["win_days"], a["win_start"], a["win_end"] = w.defaultTZ, w.days, w.start, w.end
	}
	if c := p.Condition; c != nil {
		kind, heard := c.If.feedback()
		a["cond_step"], a["cond_kind"], a["cond_heard"] = c.StepID, kind, heard
	}
	return a
}

// dueParticipant is the rule, in SQL for a participants row aliased p,
// that a participant is due for the step @step_id after the steps
// @earlier, enrolled by @cutoff: active, not held, every earlier step
// done and this one neither done, claimed nor waiting for its retry.
//
// The step's own completion check ends in OFFSET 0, which keeps it a
// subplan probed once per candidate through the primary key (step,
// participant) instead of an anti-join the planner may choose. Statistics
// taken before a step has rows (every new step, after autovacuum has
// analysed earlier campaigns) estimate one completion row for it, and the
// anti-join then rescans all of the step's completions for every candidate:
// a claim of 1,000 read 40 million rows once a 100,000-recipient step was
// half sent. The probe costs the same whatever the statistics say.
//
// p.held_until IS NULL matches the partial index the walk takes
// (campaign_participants_due_idx): participants held by a window or a
// test are not read at all until the pass that wakes them.
const dueParticipant = `p.campaign_id = @campaign_id AND p.held_until IS NULL AND p.status = 'active'
	AND (@cutoff::timestamptz IS NULL OR p.enrolled_at <= @cutoff)
	AND (cardinality(@earlier::uuid[]) = 0 OR NOT EXISTS (
	    SELECT 1 FROM unnest(@earlier::uuid[]) AS e(step_id)
	    WHERE NOT EXISTS (SELECT 1 FROM campaign_step_completions d
	                      WHERE d.step_id = e.step_id AND d.participant_id = p.id AND d.result IS NOT NULL)))
	AND NOT EXISTS (
	    SELECT 1 FROM campaign_step_completions d
	    WHERE d.step_id = @step_id AND d.participant_id = p.id
	      AND (d.result IS NOT NULL OR d.lease_until IS NOT NULL OR d.retry_at > @now)
	    OFFSET 0)`

// claimTimingCTEs follow the claim's candidates (cand, locked) and decide
// who of them is claimed (those not shut out, with kept or assigned
// variants) and who is held (held):
//   - zones: the send window read once per time zone among the candidates
//     (materialized: inlined, the function would run once per candidate)
//     (opens is NULL where it is open now, else when it opens next);
//     a candidate whose window is shut is held until it opens;
//   - kept: a candidate whose completion row has its variant already
//     (a test email's retry) keeps it;
//   - fresh, take, took, assigned: before the decision, the others take
//     what is left of the test's quota under the step row's lock and get
//     the variants in turn from the count assigned so far; those beyond
//     the quota are held until @ab_hold_until. After it, they get the
//     winner (also when another instance decided since this pass read
//     the step: the lock reads the row as it is now).
const claimTimingCTEs = `zones AS MATERIALIZED (
			SELECT z.tz, campaign_window_next(z.tz, @win_days::int[], @win_start::int, @win_end::int, @now) AS opens
			FROM (SELECT DISTINCT tz FROM cand) z
			WHERE cardinality(@win_days::int[]) > 0
		),
		shut AS (
			SELECT k.participant_id, z.opens FROM cand k JOIN zones z ON z.tz = k.tz WHERE z.opens IS NOT NULL
		),
		kept AS (
			SELECT c.participant_id, c.variant_id
			FROM cand k JOIN campaign_step_completions c ON c.step_id = @step_id AND c.participant_id = k.participant_id
			WHERE cardinality(@variant_ids::uuid[]) > 0 AND c.variant_id IS NOT NULL
			  AND NOT EXISTS (SELECT 1 FROM shut s WHERE s.participant_id = k.participant_id)
		),
		fresh AS (
			SELECT k.participant_id, row_number() OVER (ORDER BY k.n) AS r
			FROM cand k
			WHERE cardinality(@variant_ids::uuid[]) > 0 AND NOT EXISTS (SELECT 1 FROM kept WHERE kept.participant_id = k.participant_id)
			  AND NOT EXISTS (SELECT 1 FROM shut s WHERE s.participant_id = k.participant_id)
		),
		take AS (
			SELECT LEAST((SELECT count(*) FROM fresh), COALESCE(s.test_quota - s.test_assigned, 2147483647))::int AS n,
			       s.test_assigned AS start, s.winner_variant_id AS winner
			FROM campaign_steps s
			WHERE s.id = @step_id AND @winner::uuid IS NULL AND EXISTS (SELECT 1 FROM fresh)
			-- Not FOR UPDATE: that would wait for another claim's key share
			-- lock (stp) while that claim waits for this one.
			FOR NO KEY UPDATE
		),
		took AS (
			UPDATE campaign_steps s SET test_assigned = s.test_assigned + t.n FROM take t
			WHERE s.id = @step_id AND t.n > 0 AND t.winner IS NULL
			RETURNING 1
		),
		assigned AS (
			SELECT f.participant_id,
			       CASE WHEN @winner::uuid IS NOT NULL THEN @winner::uuid
			            WHEN t.winner IS NOT NULL THEN t.winner
			            WHEN f.r <= t.n THEN (@variant_ids::uuid[])[(t.start + f.r - 1) % cardinality(@variant_ids::uuid[]) + 1]
			       END AS variant_id
			FROM fresh f LEFT JOIN take t ON true
		),
		held AS (
			UPDATE campaign_participants p SET held_until = h.until, held_step_id = @step_id
			FROM (SELECT participant_id, opens AS until FROM shut
			      UNION ALL
			      SELECT participant_id, @ab_hold_until::timestamptz FROM assigned WHERE variant_id IS NULL) h
			WHERE p.id = h.participant_id
			  -- Reached through the primary key: a join the planner may
			  -- choose would read every participant of the campaign.
			  AND p.id = ANY (ARRAY(SELECT participant_id FROM shut UNION ALL
			                        SELECT participant_id FROM assigned WHERE variant_id IS NULL))
			RETURNING 1
		)`

// claimTest is an A/B step's state as its claims read it.
type claimTest struct {
	variants  []uuid.UUID // in the step's order
	winner    *uuid.UUID  // nil until decided
	holdUntil *time.Time  // before the decision: when those beyond the quota are read again
}

// releaseStepHolds lets the participants held by one step go.
func (store) releaseStepHolds(ctx context.Context, db postgres.DB, campaignID, stepID uuid.UUID) error {
	_, err := db.Exec(ctx, `
		UPDATE campaign_participants SET held_until = NULL, held_step_id = NULL
		WHERE campaign_id = $1 AND held_until IS NOT NULL AND held_step_id = $2`, campaignID, stepID)
	return err
}

// startTest starts an A/B step's test once, however many passes reach it
// at the same time (a conditional update of the step row): the slice is
// test_percent % of the participants due now inside the window (rounded
// up, at least one per variant, at most all of them), or everyone until
// the decision with test_percent 100. Nobody due: nothing starts.
func (store) startTest(ctx context.Context, db postgres.DB, p claimParams, st Step, variants int) (bool, error) {
	if p.Earlier == nil {
		p.Earlier = []uuid.UUID{}
	}
	args := withArgs(pgx.StrictNamedArgs{
		"campaign_id": p.CampaignID, "step_id": p.StepID, "cutoff": p.Cutoff, "earlier": p.Earlier, "now": p.Now,
		"percent": st.ABTest.TestPercent, "variants": variants,
	}, claimTimingArgs(claimParams{Window: p.Window}))
	delete(args, "cond_step")
	delete(args, "cond_kind")
	delete(args, "cond_heard")
	delete(args, "variant_ids")
	delete(args, "winner")
	delete(args, "ab_hold_until")
	var started bool
	err := db.QueryRow(ctx, `
		WITH n AS (
			SELECT count(*) AS due
			FROM campaign_participants p JOIN contact_records ct ON ct.id = p.contact_id
			WHERE `+dueParticipant+`
			  AND (cardinality(@win_days::int[]) = 0 OR campaign_window_next(COALESCE(ct.time_zone, @default_tz::text),
			       @win_days::int[], @win_start::int, @win_end::int, @now) IS NULL)
		), started AS (
			UPDATE campaign_steps s
			SET test_started_at = @now, test_assigned = 0,
			    test_quota = CASE WHEN @percent::int >= 100 THEN NULL
			                      ELSE LEAST(n.due, GREATEST(ceil(n.due * @percent::int / 100.0)::int, @variants::int)) END
			FROM n
			WHERE s.id = @step_id AND s.test_started_at IS NULL AND n.due > 0
			RETURNING 1
		)
		SELECT EXISTS (SELECT 1 FROM started) OR EXISTS (SELECT 1 FROM campaign_steps WHERE id = @step_id AND test_started_at IS NOT NULL)`,
		// Planned for this campaign, as the claims are.
		postgres.PlanEachTime, args).Scan(&started)
	return started, err
}

// decideTest decides an A/B test once it is due for its decision: the
// slice is given out, none of its emails is unanswered, and the last of
// them went out decide_after_minutes ago and before this pass began. The
// variant with the highest unique rate of the metric among its sent
// emails wins (ties: the earlier variant). The rates are read and the
// winner recorded in one statement, a conditional update of the step row:
// two passes deciding at once wait for each other on the row, and the
// second finds it decided. It returns the winner, or nil when the test
// is not due; decided says whether this call decided it.
func (store) decideTest(ctx context.Context, db postgres.DB, st Step, passStarted, now time.Time) (winner *uuid.UUID, decided bool, err error) {
	kind := "opened"
	if st.ABTest.Metric == MetricClicks {
		kind = "clicked"
	}
	err = db.QueryRow(ctx, `
		WITH v AS (
			SELECT (x.e->>'id')::uuid AS id, x.ord FROM campaign_steps s, jsonb_array_elements(s.variants) WITH ORDINALITY AS x(e, ord)
			WHERE s.id = @step_id
		), r AS (
			SELECT c.variant_id,
			       count(*) FILTER (WHERE c.result = 'success' AND c.token_hash IS NOT NULL) AS sent,
			       count(*) FILTER (WHERE c.result = 'success' AND c.token_hash IS NOT NULL
			                        AND `+delivery.FeedbackHeardSQL("fb", "@kind::text")+`) AS hits,
			       count(*) FILTER (WHERE c.result IS NULL) AS pending,
			       max(c.completed_at) AS last_at
			FROM campaign_step_completions c `+delivery.FeedbackJoinSQL("fb", "c.participant_id", "c.step_id")+`
			WHERE c.step_id = @step_id AND c.variant_id IS NOT NULL
			GROUP BY c.variant_id
		), total AS (
			SELECT COALESCE(sum(pending), 0) AS pending, max(last_at) AS last_at FROM r
		), best AS (
			SELECT v.id FROM v LEFT JOIN r ON r.variant_id = v.id
			ORDER BY COALESCE(r.hits::float8 / NULLIF(r.sent, 0), 0) DESC, v.ord
			LIMIT 1
		)
		UPDATE campaign_steps s SET winner_variant_id = (SELECT id FROM best), decided_at = @now
		FROM total
		WHERE s.id = @step_id AND s.winner_variant_id IS NULL AND s.test_started_at IS NOT NULL
		  AND (s.test_quota IS NULL OR s.test_assigned >= s.test_quota)
		  AND total.pending = 0 AND total.last_at IS NOT NULL
		  AND total.last_at + @decide_after::interval <= @now AND total.last_at < @pass_started
		RETURNING s.winner_variant_id`,
		pgx.StrictNamedArgs{
			"step_id": st.ID, "kind": kind, "now": now, "pass_started": passStarted,
			"decide_after": st.ABTest.decideAfter(),
		}).Scan(&winner)
	if errors.Is(err, pgx.ErrNoRows) {
		// Not due, or decided by another pass since this one read the
		// step (its update waited for that one's and found it decided):
		// read the winner as it is now.
		err = db.QueryRow(ctx, `SELECT winner_variant_id FROM campaign_steps WHERE id = $1`, st.ID).Scan(&winner)
		return winner, false, err
	}
	return winner, err == nil, err
}

// closeTestSlice ends the slice of a started test at what it has given
// out, once a pass went through every participant due (those it counted
// and did not find again left, were removed or were held).
func (store) closeTestSlice(ctx context.Context, db postgres.DB, stepID uuid.UUID) error {
	_, err := db.Exec(ctx, `
		UPDATE campaign_steps SET test_quota = test_assigned
		WHERE id = $1 AND winner_variant_id IS NULL AND test_quota > test_assigned`, stepID)
	return err
}

// variantStats counts the emails of every variant of the campaign's A/B
// steps, each step's variants in their order.
func (store) variantStats(ctx context.Context, db postgres.DB, campaignID uuid.UUID) (map[uuid.UUID][]VariantStats, error) {
	rows, err := db.Query(ctx, `
		WITH ab AS (
			SELECT id, variants, winner_variant_id FROM campaign_steps WHERE campaign_id = $1 AND variants IS NOT NULL
		), counts AS (
			SELECT c.step_id, c.variant_id, count(*) AS sent,
			       count(*) FILTER (WHERE `+delivery.FeedbackHeardSQL("fb", "'opened'")+`) AS opened,
			       count(*) FILTER (WHERE `+delivery.FeedbackHeardSQL("fb", "'clicked'")+`) AS clicked
			FROM ab JOIN campaign_step_completions c ON c.step_id = ab.id
			`+delivery.FeedbackJoinSQL("fb", "c.participant_id", "c.step_id")+`
			WHERE c.variant_id IS NOT NULL AND c.result = 'success' AND c.token_hash IS NOT NULL
			GROUP BY c.step_id, c.variant_id
		)
		SELECT ab.id, (x.e->>'id')::uuid, x.e->>'subject', COALESCE(k.sent, 0), COALESCE(k.opened, 0), COALESCE(k.clicked, 0),
		       ab.winner_variant_id IS NOT NULL AND ab.winner_variant_id = (x.e->>'id')::uuid
		FROM ab CROSS JOIN LATERAL jsonb_array_elements(ab.variants) WITH ORDINALITY AS x(e, ord)
		LEFT JOIN counts k ON k.step_id = ab.id AND k.variant_id = (x.e->>'id')::uuid
		ORDER BY ab.id, x.ord`, campaignID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[uuid.UUID][]VariantStats{}
	for rows.Next() {
		var step uuid.UUID
		var v VariantStats
		if err := rows.Scan(&step, &v.ID, &v.Subject, &v.SentCount, &v.OpenedCount, &v.ClickedCount, &v.Winner); err != nil {
			return nil, err
		}
		out[step] = append(out[step], v)
	}
	return out, rows.Err()
}
