package campaigns

import (
	"context"
	"time"
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
