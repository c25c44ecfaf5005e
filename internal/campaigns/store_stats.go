package campaigns

import (
	"context"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/contactbook/contactbook/internal/delivery"
	"github.com/contactbook/contactbook/internal/postgres"
)

// The campaign stats and the contacts behind each of their numbers.

func (store) stats(ctx context.Context, db postgres.DB, campaignID uuid.UUID) (Stats, error) {
	var out Stats
	sm := &out.Summary
	err := db.QueryRow(ctx, `
		SELECT count(*), count(*) FILTER (WHERE status = 'active'), count(*) FILTER (WHERE status = 'completed'),
		       (SELECT count(*) FROM campaign_steps WHERE campaign_id = $1)
		FROM campaign_participants WHERE campaign_id = $1`, campaignID).
		Scan(&sm.TotalParticipants, &sm.ActiveCount, &sm.CompletedCount, &sm.TotalSteps)
	if err != nil {
		return out, err
	}
	rows, err := db.Query(ctx, `
		SELECT s.id, s.name, s.sort_order,
		       (SELECT count(*) FROM campaign_step_completions c WHERE c.step_id = s.id AND c.result = 'success'),
		       (SELECT count(*) FROM campaign_step_completions c WHERE c.step_id = s.id AND c.result = 'failed'),
		       (SELECT count(*) FROM campaign_step_completions c WHERE c.step_id = s.id AND c.result = 'skipped'),
		       (SELECT count(*) FROM campaign_participants p
		        WHERE p.campaign_id = s.campaign_id AND p.held_until IS NOT NULL AND p.held_step_id = s.id AND p.status = 'active'),
		       COALESCE(e.delivered, 0), COALESCE(e.opened, 0), COALESCE(e.clicked, 0),
		       COALESCE(e.bounced, 0), COALESCE(e.complained, 0), COALESCE(e.unsubscribed, 0)
		FROM campaign_steps s `+delivery.StepCountsJoin("e", "s.id")+`
		WHERE s.campaign_id = $1 ORDER BY s.sort_order, s.created_at`, campaignID)
	out.Steps, err = collect(rows, err, func(r pgx.Row) (StepStats, error) {
		var st StepStats
		e := &st.Engagement
		err := r.Scan(&st.StepID, &st.StepName, &st.SortOrder, &st.SuccessCount, &st.FailedCount, &st.SkippedCount, &st.WaitingCount,
			&e.DeliveredCount, &e.OpenedCount, &e.ClickedCount, &e.BouncedCount, &e.ComplainedCount, &e.UnsubscribedCount)
		return st, err
	})
	if err != nil {
		return out, err
	}
	if out.Steps == nil {
		out.Steps = []StepStats{}
	}
	variants, err := store{}.variantStats(ctx, db, campaignID)
	if err != nil {
		return out, err
	}
	for i := range out.Steps {
		out.Steps[i].Variants = variants[out.Steps[i].StepID]
	}
	for _, st := range out.Steps {
		sm.TotalCompletions += st.SuccessCount + st.FailedCount + st.SkippedCount
		sm.FailedCount += st.FailedCount
		sm.SkippedCount += st.SkippedCount
		sm.WaitingCount += st.WaitingCount
		sm.Engagement.add(st.Engagement)
	}
	return out, nil
}

// stepResults are the results a step's contacts can be listed by: the
// outcome of the step (success, failed; "" for both) or what the provider
// reported of its email since (the email_deliveries column that holds
// it), as the campaign stats count them.
var stepResults = map[StepContactFilter]string{
	"": "", ResultSuccess: "", ResultFailed: "", ResultSkipped: "",
	"delivered": "delivered_at", "opened": "opened_at", "clicked": "clicked_at",
	"bounced": "bounced_at", "complained": "complained_at", "unsubscribed": "unsubscribed_at",
}

func (store) stepContacts(ctx context.Context, db postgres.DB, stepID uuid.UUID, result StepContactFilter, pg Page) (Paged[StepContact], error) {
	var out Paged[StepContact]
	where := `c.step_id = $1 AND c.result IS NOT NULL AND ($2 = '' OR c.result = $2)`
	if col := stepResults[result]; col != "" {
		where = `c.step_id = $1 AND c.result IS NOT NULL AND $2 <> '' AND ` + delivery.EmailReportedSQL("c.participant_id", "c.step_id", col)
	}
	if err := db.QueryRow(ctx, `SELECT count(*) FROM campaign_step_completions c WHERE `+where, stepID, result).Scan(&out.Total); err != nil {
		return out, err
	}
	rows, err := db.Query(ctx, `
		SELECT c.id, c.completed_at, c.result, c.result_detail, ct.id, `+contactNameSQL+`, `+contactEmailSQL+`
		FROM campaign_step_completions c
		JOIN campaign_participants p ON p.id = c.participant_id
		JOIN contact_records ct ON ct.id = p.contact_id
		WHERE `+where+` ORDER BY c.completed_at, c.id LIMIT $3 OFFSET $4`, stepID, result, pg.Limit, pg.Offset)
	out.Items, err = collect(rows, err, func(r pgx.Row) (StepContact, error) {
		var sc StepContact
		err := r.Scan(&sc.ID, &sc.CompletedAt, &sc.ResultType, &sc.ResultDetail, &sc.ContactID, &sc.ContactName, &sc.ContactEmail)
		return sc, err
	})
	return out, err
}
