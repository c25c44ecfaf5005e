package campaigns

import (
	"context"

	"github.com/google/uuid"

	"github.com/contactbook/contactbook/internal/apperr"
	"github.com/contactbook/contactbook/internal/events"
	"github.com/contactbook/contactbook/internal/postgres"
)

// processTrigger enrolls each due participant's contact into the target
// campaign. Claim, enrollment and completion commit together, so a crash
// leaves either nothing or everything and no claim is ever interrupted.
func (rn *Runner) processTrigger(ctx context.Context, p *pass, st Step, base claimParams) error {
	after := uuid.Nil
	for ctx.Err() == nil {
		var last uuid.UUID
		var outs []outcome
		var completed int
		limit := p.turn.take(base.Limit)
		if limit == 0 {
			return nil
		}
		var claimed int
		err := postgres.InTx(ctx, rn.db, func(tx *postgres.Tx) error {
			cp := base
			cp.Limit, cp.After, cp.ClaimID, cp.Now = limit, after, uuid.New(), rn.now()
			cp.LeaseUntil = cp.Now.Add(rn.opts.Lease)
			rows, l, _, err := rn.st.claimDue(ctx, tx, cp)
			last, claimed = l, len(rows)
			if err != nil || len(rows) == 0 {
				return err
			}
			failDetail := ""
			if st.TriggerCampaignID == nil {
				failDetail = DetailTriggerDeleted
			} else {
				status, err := rn.st.lockCampaignStatus(ctx, tx, *st.TriggerCampaignID)
				switch {
				case apperr.Is(err, apperr.NotFound):
					failDetail = DetailTriggerDeleted
				case err != nil:
					return err
				case status == StatusArchived:
					failDetail = DetailTriggerArchived
				}
			}
			var enroll []uuid.UUID
			outs = make([]outcome, 0, len(rows))
			for _, r := range rows {
				switch {
				case !r.ConditionMet:
					outs = append(outs, skippedOutcome(p, st, r))
				case failDetail != "":
					outs = append(outs, outcome{ParticipantID: r.ParticipantID, Result: ResultFailed, Detail: failDetail})
				case r.Suppressed:
					outs = append(outs, outcome{ParticipantID: r.ParticipantID, Result: ResultFailed, Detail: DetailUnsubscribed})
				default:
					enroll = append(enroll, r.ContactID)
					outs = append(outs, outcome{ParticipantID: r.ParticipantID, Result: ResultSuccess})
				}
			}
			if len(enroll) > 0 {
				if err := rn.st.enrollTriggered(ctx, tx, p.campaign.BookID, *st.TriggerCampaignID, enroll, cp.Now); err != nil {
					return err
				}
			}
			rp := recordParams{
				ClaimID: cp.ClaimID, Outcomes: outs, Now: cp.Now, RetryAt: cp.Now, ActiveSteps: p.activeSteps,
				StepID: st.ID, CampaignID: p.campaign.ID,
			}
			if completed, err = rn.st.recordOutcomes(ctx, tx, rp); err != nil {
				return err
			}
			// A trigger step sends no email: only completions are heard of.
			if _, want, err := rn.st.wanted(ctx, tx, p.campaign.BookID, events.ParticipantCompleted); err != nil || !want {
				return err
			}
			return rn.st.emitRecorded(ctx, tx, p.teamID, p.campaign.BookID, rp, rows, map[string]bool{events.ParticipantCompleted: true})
		})
		p.turn.giveBack(limit - claimed)
		if err != nil {
			return err
		}
		if last == uuid.Nil {
			return nil
		}
		after = last
		for _, o := range outs {
			switch o.Result {
			case ResultSuccess:
				p.n.triggered.Add(1)
			case ResultSkipped:
				p.n.skipped.Add(1)
			default:
				p.n.failed.Add(1)
			}
		}
		p.n.completed.Add(int64(completed))
	}
	return nil
}
