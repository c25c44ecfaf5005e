package campaigns

import (
	"context"

	"github.com/google/uuid"

	"github.com/contactbook/contactbook/internal/apperr"
	"github.com/contactbook/contactbook/internal/postgres"
)

// conditionProblem says what is wrong with st's condition among the
// campaign's steps in their order ("" when it names an earlier email step
// of the campaign).
func conditionProblem(st Step, steps []Step) string {
	if st.Condition == nil {
		return ""
	}
	for _, o := range steps {
		switch {
		case o.ID == st.ID:
			return "names a step that does not come before it"
		case o.ID == st.Condition.StepID && o.StepType != StepEmail:
			return "names a step that sends no email"
		case o.ID == st.Condition.StepID:
			return ""
		}
	}
	return "names no step of the campaign"
}

// checkConditionOf checks a created or changed step's own condition: a
// bad one is the request's input at fault (400).
func (s *Service) checkConditionOf(ctx context.Context, db postgres.DB, st Step) error {
	if st.Condition == nil {
		return nil
	}
	steps, err := s.st.steps(ctx, db, st.CampaignID)
	if err != nil {
		return err
	}
	if p := conditionProblem(st, steps); p != "" {
		return apperr.Invalidf("`condition.step_id` %s: it must name an earlier email step of the campaign.", p)
	}
	return nil
}

// afterStepChange checks the changed step's condition and, when the
// change can move who is due when, lets the campaign's held participants
// go: the window or test that held them may have changed, and the next
// pass reads them again. A change that leaves the condition naming a
// later step, itself or no step is a conflict with the campaign's steps
// (409 naming the step), as a reorder or delete that would do so is.
func (s *Service) afterStepChange(ctx context.Context, db postgres.DB, st Step, timing bool) error {
	if st.Condition != nil {
		steps, err := s.st.steps(ctx, db, st.CampaignID)
		if err != nil {
			return err
		}
		if err := conditionConflict(st, steps); err != nil {
			return err
		}
	}
	if !timing {
		return nil
	}
	return s.st.releaseCampaignHolds(ctx, db, st.CampaignID)
}

// changesTiming reports whether the patch touches when or to whom the
// step sends (not only its name, sender or template).
func (p StepPatch) changesTiming() bool {
	return p.Active.Set || p.ScheduleType.Set || p.DelayDays.Set || p.DelayHours.Set || p.FixedDate.Set ||
		p.SendWindow.Set || p.Condition.Set || p.Variants.Set || p.ABTest.Set
}

// afterStepsMoved refuses a reorder or delete that leaves a condition
// naming a later step or none (409 naming the conditional step), and
// lets the held participants go.
func (s *Service) afterStepsMoved(ctx context.Context, db postgres.DB, campaignID uuid.UUID) error {
	steps, err := s.st.steps(ctx, db, campaignID)
	if err != nil {
		return err
	}
	for _, st := range steps {
		if err := conditionConflict(st, steps); err != nil {
			return err
		}
	}
	return s.st.releaseCampaignHolds(ctx, db, campaignID)
}

// conditionConflict is the 409 of a step whose condition, after a change
// to the campaign's steps, no longer names an earlier email step.
func conditionConflict(st Step, steps []Step) error {
	if p := conditionProblem(st, steps); p != "" {
		return apperr.New(apperr.Conflict, "The condition of step %q %s: it must name an earlier email step; change or remove that condition.", st.Name, p)
	}
	return nil
}
