package campaigns

import (
	"context"
	"strings"

	"github.com/google/uuid"

	"github.com/contactbook/contactbook/internal/access"
	"github.com/contactbook/contactbook/internal/apperr"
	"github.com/contactbook/contactbook/internal/auth"
	"github.com/contactbook/contactbook/internal/postgres"
)

// checkStepRefs verifies the templates (the step's and its subjects') and
// the trigger campaign of a step are in the campaign's book.
func (s *Service) checkStepRefs(ctx context.Context, db postgres.DB, bookID uuid.UUID, st Step) error {
	if st.EmailTemplateID != nil {
		ok, err := s.st.templateInBook(ctx, db, bookID, *st.EmailTemplateID)
		if err != nil {
			return err
		}
		if !ok {
			return apperr.Invalidf("`email_template_id` must name an email template of the campaign's book.")
		}
	}
	for i, v := range st.Variants {
		if v.EmailTemplateID == nil {
			continue
		}
		ok, err := s.st.templateInBook(ctx, db, bookID, *v.EmailTemplateID)
		if err != nil {
			return err
		}
		if !ok {
			return apperr.Invalidf("`variants[%d].email_template_id` must name an email template of the campaign's book.", i)
		}
	}
	if st.TriggerCampaignID != nil {
		ok, err := s.st.campaignInBook(ctx, db, bookID, *st.TriggerCampaignID)
		if err != nil {
			return err
		}
		if !ok {
			return apperr.Invalidf("`trigger_campaign_id` must name another campaign of the same book.")
		}
	}
	return nil
}

// checkStepSender lets only an owner, who sets the book's sender, send a
// step from an address outside the domain of the book's sender_email: a
// member could otherwise send the book's campaigns as anyone (the CEO, a
// bank) through the team's verified provider account. Checked when the
// step's sender_email changes from was.
func (s *Service) checkStepSender(ctx context.Context, db postgres.DB, sc access.Scope, bookID uuid.UUID, st Step, was string) error {
	if st.SenderEmail == "" || strings.EqualFold(st.SenderEmail, was) {
		return nil
	}
	role, err := sc.Actor.RoleIn(ctx, sc.Book.TeamID)
	if err != nil {
		return err
	}
	if role >= auth.RoleOwner {
		return nil
	}
	settings, ok, err := s.loadSettings(ctx, db, bookID)
	if err != nil {
		return err
	}
	if !ok || settings.SenderEmail == "" {
		return apperr.Invalidf("`sender_email` needs the book's sender email first (an owner sets it in the campaign settings); leave it empty to send as the book.")
	}
	if !strings.EqualFold(emailDomain(st.SenderEmail), emailDomain(settings.SenderEmail)) {
		return apperr.Invalidf("`sender_email` must be on %s, the domain of the book's sender; only an owner may send from another domain.", emailDomain(settings.SenderEmail))
	}
	return nil
}

// emailDomain is the part of an address after its last @.
func emailDomain(address string) string {
	return address[strings.LastIndexByte(address, '@')+1:]
}

// CreateStep appends a step to the campaign (member).
func (s *Service) CreateStep(ctx context.Context, sc access.Scope, campaignID uuid.UUID, in StepInput) (Step, error) {
	ref, err := s.campaignFor(ctx, sc, campaignID, auth.RoleMember)
	if err != nil {
		return Step{}, err
	}
	st, err := stepFromInput(campaignID, in)
	if err != nil {
		return Step{}, err
	}
	var out Step
	err = postgres.InTx(ctx, s.db, func(tx *postgres.Tx) error {
		if err := s.checkStepRefs(ctx, tx, ref.campaign.BookID, st); err != nil {
			return err
		}
		if err := s.checkStepSender(ctx, tx, sc, ref.campaign.BookID, st, ""); err != nil {
			return err
		}
		if out, err = s.st.insertStep(ctx, tx, st, s.now()); err != nil {
			return err
		}
		return s.checkConditionOf(ctx, tx, out)
	})
	return out, err
}

// UpdateStep changes the supplied fields of a step and validates the whole
// step again (member).
func (s *Service) UpdateStep(ctx context.Context, sc access.Scope, campaignID, stepID uuid.UUID, p StepPatch) (Step, error) {
	ref, err := s.campaignFor(ctx, sc, campaignID, auth.RoleMember)
	if err != nil {
		return Step{}, err
	}
	var out Step
	err = postgres.InTx(ctx, s.db, func(tx *postgres.Tx) error {
		st, err := s.st.step(ctx, tx, campaignID, stepID, true)
		if err != nil {
			return err
		}
		was := st.SenderEmail
		if err := applyStepPatch(&st, p); err != nil {
			return err
		}
		if err := s.checkStepRefs(ctx, tx, ref.campaign.BookID, st); err != nil {
			return err
		}
		if err := s.checkStepSender(ctx, tx, sc, ref.campaign.BookID, st, was); err != nil {
			return err
		}
		if out, err = s.st.updateStep(ctx, tx, st, s.now()); err != nil {
			return err
		}
		return s.afterStepChange(ctx, tx, out, p.changesTiming())
	})
	return out, err
}

// DeleteStep removes a step and its completion records; the later steps
// move up so sort_order stays 0, 1, 2, ... (member).
func (s *Service) DeleteStep(ctx context.Context, sc access.Scope, campaignID, stepID uuid.UUID) error {
	if _, err := s.campaignFor(ctx, sc, campaignID, auth.RoleMember); err != nil {
		return err
	}
	return postgres.InTx(ctx, s.db, func(tx *postgres.Tx) error {
		if err := s.st.deleteStep(ctx, tx, campaignID, stepID); err != nil {
			return err
		}
		return s.afterStepsMoved(ctx, tx, campaignID)
	})
}

// ReorderSteps sets the order of all steps (member). step_ids must name
// every step of the campaign exactly once.
func (s *Service) ReorderSteps(ctx context.Context, sc access.Scope, campaignID uuid.UUID, in ReorderInput) error {
	if _, err := s.campaignFor(ctx, sc, campaignID, auth.RoleMember); err != nil {
		return err
	}
	if len(in.StepIDs) == 0 {
		return apperr.Invalidf("`step_ids` is required: list every step of the campaign in the new order.")
	}
	return postgres.InTx(ctx, s.db, func(tx *postgres.Tx) error {
		current, err := s.st.stepIDs(ctx, tx, campaignID)
		if err != nil {
			return err
		}
		if !sameSet(current, in.StepIDs) {
			return apperr.Invalidf("`step_ids` must list every step of the campaign exactly once (%d steps).", len(current))
		}
		if err := s.st.reorderSteps(ctx, tx, campaignID, in.StepIDs, s.now()); err != nil {
			return err
		}
		return s.afterStepsMoved(ctx, tx, campaignID)
	})
}

func sameSet(have, want []uuid.UUID) bool {
	if len(have) != len(want) {
		return false
	}
	seen := make(map[uuid.UUID]bool, len(have))
	for _, id := range have {
		seen[id] = true
	}
	for _, id := range want {
		if !seen[id] {
			return false
		}
		delete(seen, id) // a duplicate is then "not seen"
	}
	return true
}
