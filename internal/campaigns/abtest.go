package campaigns

import (
	"context"
	"slices"
	"time"

	"github.com/google/uuid"
)

// minTestHold is the least time a participant due before the test is
// decided is held for: it is read again after that, or when the decision
// lets every held participant of the step go.
const minTestHold = 5 * time.Minute

// prepareTest readies an A/B step for this pass's claims: it decides a
// test that is due for its decision, or starts one the step never ran,
// and says how the claims assign variants. ok is false when nobody can
// be sent to yet (the test has not started: nobody is due inside the
// window).
func (rn *Runner) prepareTest(ctx context.Context, p *pass, st Step, base claimParams) (*claimTest, bool, error) {
	t := &claimTest{winner: st.WinnerVariantID}
	for _, v := range st.Variants {
		t.variants = append(t.variants, v.ID)
	}
	if t.winner != nil {
		return t, true, nil
	}
	now := rn.now()
	if st.test.startedAt != nil {
		winner, decided, err := rn.st.decideTest(ctx, rn.db, st, p.started, now)
		if err != nil {
			return nil, false, err
		}
		if winner != nil && !decided {
			t.winner = winner // another pass decided it
			return t, true, nil
		}
		if winner != nil {
			rn.log.Info("a/b test decided", "campaign_id", p.campaign.ID, "step_id", st.ID, "winner_variant_id", *winner)
			// Who waited for the decision may go now, not at the end of
			// their hold.
			if err := rn.st.releaseStepHolds(ctx, rn.db, p.campaign.ID, st.ID); err != nil {
				return nil, false, err
			}
			t.winner = winner
			return t, true, nil
		}
	} else {
		started, err := rn.st.startTest(ctx, rn.db, base, st, len(st.Variants))
		if err != nil || !started {
			return nil, false, err
		}
	}
	hold := now.Add(max(st.ABTest.decideAfter(), minTestHold))
	t.holdUntil = &hold
	return t, true, nil
}

// planVariants plans each variant of an A/B step (its subject, its
// template) beside the step's plan: a claim takes no more participants
// than the smallest of them allows, and reads every custom field any of
// them merges.
func (rn *Runner) planVariants(ctx context.Context, p *pass, st Step, plan *emailPlan) error {
	plan.variants = make(map[uuid.UUID]*emailPlan, len(st.Variants))
	for _, v := range st.Variants {
		tplID := st.EmailTemplateID
		if v.EmailTemplateID != nil {
			tplID = v.EmailTemplateID
		}
		vp, err := rn.planTemplate(ctx, p, st, tplID, &v.Subject)
		if err != nil {
			return err
		}
		plan.variants[v.ID] = vp
		if vp.claimSize > 0 && (plan.claimSize == 0 || vp.claimSize < plan.claimSize) {
			plan.claimSize = vp.claimSize
		}
		for _, k := range vp.customKeys {
			if !slices.Contains(plan.customKeys, k) {
				plan.customKeys = append(plan.customKeys, k)
			}
		}
	}
	return nil
}

// forRow is the plan a claimed row is sent with: its variant's, if any.
func (plan *emailPlan) forRow(r claimedRow) *emailPlan {
	if r.VariantID != nil {
		if vp := plan.variants[*r.VariantID]; vp != nil {
			return vp
		}
	}
	return plan
}
