package campaigns

import (
	"context"
	"encoding/json"
	"maps"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/contactbook/contactbook/internal/postgres"
)

// stepTimingColumns are a step's window, condition, variants and A/B
// state, read after its other columns (scanStep).
const stepTimingColumns = `delay_hours, send_window, condition_if, condition_step_id, variants, ab_test,
	winner_variant_id, test_started_at, test_sent_at`

// stepTimingSet writes them back in an update; replacing the variants by
// none forgets the test.
const stepTimingSet = `delay_hours = @delay_hours, send_window = @send_window, condition_if = @condition_if,
	condition_step_id = @condition_step_id, variants = @variants, ab_test = @ab_test,
	winner_variant_id = @winner_variant_id,
	test_started_at = CASE WHEN @variants::jsonb IS NULL THEN NULL ELSE test_started_at END,
	test_sent_at = CASE WHEN @variants::jsonb IS NULL THEN NULL ELSE test_sent_at END,
	decided_at = CASE WHEN @winner_variant_id::uuid IS NULL THEN NULL ELSE decided_at END`

// stepTimingRow holds the columns that need a conversion.
type stepTimingRow struct {
	condIf   *string
	condStep *uuid.UUID
}

func (r *stepTimingRow) dest(st *Step) []any {
	return []any{&st.DelayHours, &st.SendWindow, &r.condIf, &r.condStep, &st.Variants, &st.ABTest,
		&st.WinnerVariantID, &st.testStartedAt, &st.testSentAt}
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
	return postgres.Translate(err)
}

// releaseCampaignHolds lets every held participant of a campaign go (a
// step's window, condition or place changed): the next pass reads them
// again.
func (store) releaseCampaignHolds(ctx context.Context, db postgres.DB, campaignID uuid.UUID) error {
	_, err := db.Exec(ctx, `
		UPDATE campaign_participants SET held_until = NULL, held_step_id = NULL
		WHERE campaign_id = $1 AND held_until IS NOT NULL`, campaignID)
	return postgres.Translate(err)
}

// wakeHeld lets go the participants of a campaign whose wait is over.
func (store) wakeHeld(ctx context.Context, db postgres.DB, campaignID uuid.UUID, now time.Time) error {
	_, err := db.Exec(ctx, `
		UPDATE campaign_participants SET held_until = NULL, held_step_id = NULL
		WHERE campaign_id = $1 AND held_until IS NOT NULL AND held_until <= $2`, campaignID, now)
	return postgres.Translate(err)
}

// withArgs adds more named arguments to args.
func withArgs(args, more pgx.StrictNamedArgs) pgx.StrictNamedArgs {
	maps.Copy(args, more)
	return args
}

// claimTimingArgs are the claim's window and condition arguments.
func claimTimingArgs(p claimParams) pgx.StrictNamedArgs {
	a := pgx.StrictNamedArgs{
		"default_tz": "UTC", "win_days": []int32{}, "win_start": 0, "win_end": 0,
		"cond_step": nil, "cond_kind": "", "cond_heard": true,
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
