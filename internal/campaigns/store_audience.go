package campaigns

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/contactbook/contactbook/internal/events"
	"github.com/contactbook/contactbook/internal/postgres"
	"github.com/contactbook/contactbook/internal/segments"
	"github.com/contactbook/contactbook/internal/suppression"
)

// campaignsInBook returns which of ids are campaigns of the book.
func (store) campaignsInBook(ctx context.Context, db postgres.DB, bookID uuid.UUID, ids []uuid.UUID) (map[uuid.UUID]bool, error) {
	rows, _ := db.Query(ctx, `SELECT id FROM campaigns WHERE book_id = $1 AND id = ANY($2)`, bookID, ids)
	found, err := pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
	if err != nil {
		return nil, err
	}
	out := make(map[uuid.UUID]bool, len(found))
	for _, id := range found {
		out[id] = true
	}
	return out, nil
}

// audienceUser names a campaign whose audience is the segment, the
// oldest first ("" when none).
func (store) audienceUser(ctx context.Context, db postgres.DB, segmentID uuid.UUID) (string, error) {
	var name string
	err := db.QueryRow(ctx, `SELECT name FROM campaigns WHERE audience_segment_id = $1 ORDER BY created_at, id LIMIT 1`, segmentID).Scan(&name)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", nil
	}
	return name, err
}

// newcomers returns the contacts of the book that satisfy the predicate,
// are not suppressed and were never participants of the campaign.
//
// Each contact probes the unique key (campaign, contact) once: the probe
// ends in OFFSET 0, which keeps it a subplan instead of an anti-join. With
// statistics of a book of one contact, the generic plan's anti-join
// scanned every participant of the campaign for each contact of the book
// (900 million rows for 30,000), and a hashed one reads every campaign's
// participants. Planned for each pass's values, as the rule may be anything.
func (store) newcomers(ctx context.Context, db postgres.DB, campaignID, bookID uuid.UUID, p *segments.Predicate) ([]uuid.UUID, error) {
	where, args := p.Where("ct", []any{bookID, campaignID})
	rows, _ := db.Query(ctx, `
		SELECT ct.id FROM contact_records ct
		WHERE ct.book_id = $1 AND NOT `+suppression.ContactSuppressed+`
		  AND NOT EXISTS (SELECT 1 FROM campaign_participants p WHERE p.campaign_id = $2 AND p.contact_id = ct.id OFFSET 0)
		  AND `+where, append([]any{postgres.PlanEachTime}, args...)...)
	ids, err := pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
	return ids, err
}

// removeLeavers removes the active participants a step is due for (as
// claimDue defines it: earlier steps done, the delay passed, no record or
// claim for this step) whose contact no longer satisfies the predicate,
// recording the step as failed with detail for each, in one statement.
// The step row is held (FOR KEY SHARE) as every writer of completions
// holds it; participants another pass has locked are skipped.
func (st store) removeLeavers(ctx context.Context, db postgres.DB, c claimParams, now time.Time, detail string, p *segments.Predicate) (int64, error) {
	team, bookID, want, err := st.campaignWanted(ctx, db, c.CampaignID, events.ParticipantRemoved)
	if err != nil {
		return 0, err
	}
	earlier := c.Earlier
	if earlier == nil {
		earlier = []uuid.UUID{}
	}
	where, args := p.Where("ct", []any{c.CampaignID, c.StepID, c.Cutoff, earlier, now, detail})
	n, refs, err := participantsChanged(ctx, db, want, `
		WITH stp AS (
			SELECT s.id FROM campaign_steps s JOIN campaigns cp ON cp.id = s.campaign_id
			WHERE s.id = $2 AND s.campaign_id = $1 AND s.active AND cp.status = 'active'
			FOR KEY SHARE OF s
		),
		leaving AS (
			SELECT p.id FROM campaign_participants p JOIN contact_records ct ON ct.id = p.contact_id
			WHERE p.campaign_id = $1 AND p.status = 'active' AND EXISTS (SELECT 1 FROM stp)
			  AND ($3::timestamptz IS NULL OR p.enrolled_at <= $3)
			  AND (cardinality($4::uuid[]) = 0 OR NOT EXISTS (
			      SELECT 1 FROM unnest($4::uuid[]) AS e(step_id)
			      WHERE NOT EXISTS (SELECT 1 FROM campaign_step_completions d
			                        WHERE d.step_id = e.step_id AND d.participant_id = p.id AND d.result IS NOT NULL)))
			  AND NOT EXISTS (SELECT 1 FROM campaign_step_completions d
			                  WHERE d.step_id = $2 AND d.participant_id = p.id AND (d.result IS NOT NULL OR d.lease_until IS NOT NULL))
			  AND NOT (`+where+`)
			FOR UPDATE OF p SKIP LOCKED
		),
		removed AS (
			UPDATE campaign_participants p SET status = 'removed', removed_at = $5
			FROM leaving l WHERE p.id = l.id RETURNING p.id, p.contact_id
		)
		INSERT INTO campaign_step_completions AS t (step_id, participant_id, campaign_id, result, result_detail, completed_at)
		SELECT $2, id, $1, 'failed', $6, $5 FROM removed
		ON CONFLICT (step_id, participant_id) DO UPDATE
			SET result = 'failed', result_detail = EXCLUDED.result_detail, completed_at = EXCLUDED.completed_at, retry_at = NULL
			WHERE t.result IS NULL AND t.lease_until IS NULL`,
		`RETURNING t.participant_id, t.campaign_id, (SELECT r.contact_id FROM removed r WHERE r.id = t.participant_id)`,
		// Planned for this campaign (docs/send-path-plans.md): a generic
		// plan cannot tell it from the others.
		append([]any{postgres.PlanEachTime}, args...)...)
	if err != nil {
		return 0, err
	}
	return n, st.emitParticipants(ctx, db, team, bookID, events.ParticipantRemoved, ParticipantRemoved, events.RemovedLeftSegment, refs, now)
}
