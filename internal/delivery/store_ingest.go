package delivery

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/contactbook/contactbook/internal/postgres"
)

// lockBook serialises the batches of one book until the transaction ends:
// a batch then reads every earlier batch's effect, so "first open of this
// email" is decided once, and two instances given the same batch apply it
// once (the second finds every event recorded).
func lockBook(ctx context.Context, db postgres.DB, bookID uuid.UUID) error {
	_, err := db.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended('delivery_events:' || $1::text, 0))`, bookID)
	return err
}

// applied is what applyEvents did: how many events named an email of the
// book, how many of those were new, and the suppressions they ask for.
type applied struct {
	matched    int
	applied    int
	fresh      []string // sg_event_id of each event recorded now, when asked for
	suppress   []suppressWish
	contactIDs []uuid.UUID // contacts to remove from the book's campaigns
}

type suppressWish struct {
	email  string
	reason string
}

// applyEvents records the batch's events that name a sent email of the
// book (its completion row holds the email's token: written before the
// provider is called, so no event can come before it) and that were not
// recorded before, then in the same statement moves each email's delivery
// state, stamps its first engagement of each kind and adds those firsts
// to the step's and the book's daily counters.
func applyEvents(ctx context.Context, db postgres.DB, bookID uuid.UUID, evs []event, now time.Time, wantFresh bool) (applied, error) {
	n := len(evs)
	ids, kinds, details := make([]string, n), make([]string, n), make([]string, n)
	campaigns, steps, participants := make([]uuid.UUID, n), make([]uuid.UUID, n), make([]uuid.UUID, n)
	ats := make([]time.Time, n)
	for i, e := range evs {
		ids[i], kinds[i], details[i] = e.id, e.kind, e.detail
		campaigns[i], steps[i], participants[i], ats[i] = e.campaignID, e.stepID, e.participantID, e.at
	}
	var out applied
	var wishIDs []string
	var wishContacts []uuid.UUID
	err := db.QueryRow(ctx, `
		WITH ev AS (
			SELECT * FROM unnest($2::text[], $3::text[], $4::uuid[], $5::uuid[], $6::uuid[], $7::text[], $8::timestamptz[])
			       AS e(sg_event_id, kind, campaign_id, step_id, participant_id, detail, occurred_at)
		),
		m AS (
			SELECT e.*, r.contact_id
			FROM ev e
			JOIN campaign_email_recipients r ON r.step_id = e.step_id AND r.participant_id = e.participant_id
			     AND r.campaign_id = e.campaign_id AND r.book_id = $1
		),
		ins AS (
			INSERT INTO delivery_events (book_id, sg_event_id, contact_id, campaign_id, step_id, participant_id, kind, detail, occurred_at, received_at)
			SELECT $1, sg_event_id, contact_id, campaign_id, step_id, participant_id, kind, detail, occurred_at, $9 FROM m
			ON CONFLICT (book_id, sg_event_id) DO NOTHING
			RETURNING sg_event_id, participant_id, step_id, kind, occurred_at, contact_id
		),
		agg AS (
			SELECT participant_id, step_id,
			       (array_agg(kind ORDER BY occurred_at DESC) FILTER (WHERE kind IN ('processed', 'delivered', 'deferred', 'bounced', 'blocked', 'dropped')))[1] AS state,
			       max(occurred_at) FILTER (WHERE kind IN ('processed', 'delivered', 'deferred', 'bounced', 'blocked', 'dropped')) AS state_at,
			       min(occurred_at) FILTER (WHERE kind = 'delivered') AS delivered_at,
			       min(occurred_at) FILTER (WHERE kind = 'opened') AS opened_at,
			       min(occurred_at) FILTER (WHERE kind = 'clicked') AS clicked_at,
			       min(occurred_at) FILTER (WHERE kind = 'bounced') AS bounced_at,
			       min(occurred_at) FILTER (WHERE kind = 'complained') AS complained_at,
			       min(occurred_at) FILTER (WHERE kind = 'unsubscribed') AS unsubscribed_at
			FROM ins GROUP BY participant_id, step_id
		),
		-- The book lock makes this read see every earlier batch.
		firsts AS (
			SELECT a.step_id,
			       CASE WHEN d.delivered_at IS NULL THEN a.delivered_at END AS delivered_at,
			       CASE WHEN d.opened_at IS NULL THEN a.opened_at END AS opened_at,
			       CASE WHEN d.clicked_at IS NULL THEN a.clicked_at END AS clicked_at,
			       CASE WHEN d.bounced_at IS NULL THEN a.bounced_at END AS bounced_at,
			       CASE WHEN d.complained_at IS NULL THEN a.complained_at END AS complained_at,
			       CASE WHEN d.unsubscribed_at IS NULL THEN a.unsubscribed_at END AS unsubscribed_at
			FROM agg a LEFT JOIN email_deliveries d ON d.participant_id = a.participant_id AND d.step_id = a.step_id
		),
		up AS (
			INSERT INTO email_deliveries AS d (participant_id, step_id, state, state_at, delivered_at, opened_at, clicked_at,
			                                   bounced_at, complained_at, unsubscribed_at)
			SELECT participant_id, step_id, state, state_at, delivered_at, opened_at, clicked_at, bounced_at, complained_at, unsubscribed_at
			FROM agg
			ON CONFLICT (participant_id, step_id) DO UPDATE SET
				state = CASE WHEN EXCLUDED.state IS NOT NULL AND (d.state_at IS NULL OR EXCLUDED.state_at >= d.state_at)
				             THEN EXCLUDED.state ELSE d.state END,
				state_at = GREATEST(d.state_at, EXCLUDED.state_at),
				delivered_at = LEAST(d.delivered_at, EXCLUDED.delivered_at),
				opened_at = LEAST(d.opened_at, EXCLUDED.opened_at),
				clicked_at = LEAST(d.clicked_at, EXCLUDED.clicked_at),
				bounced_at = LEAST(d.bounced_at, EXCLUDED.bounced_at),
				complained_at = LEAST(d.complained_at, EXCLUDED.complained_at),
				unsubscribed_at = LEAST(d.unsubscribed_at, EXCLUDED.unsubscribed_at)
		),
		trans AS (
			SELECT f.step_id, t.kind, t.at
			FROM firsts f, LATERAL (VALUES ('delivered', f.delivered_at), ('opened', f.opened_at), ('clicked', f.clicked_at),
			                               ('bounced', f.bounced_at), ('complained', f.complained_at),
			                               ('unsubscribed', f.unsubscribed_at)) AS t(kind, at)
			WHERE t.at IS NOT NULL
		),
		step_counts AS (
			INSERT INTO delivery_step_counts AS s (step_id, delivered, opened, clicked, bounced, complained, unsubscribed)
			SELECT step_id, count(*) FILTER (WHERE kind = 'delivered'), count(*) FILTER (WHERE kind = 'opened'),
			       count(*) FILTER (WHERE kind = 'clicked'), count(*) FILTER (WHERE kind = 'bounced'),
			       count(*) FILTER (WHERE kind = 'complained'), count(*) FILTER (WHERE kind = 'unsubscribed')
			FROM trans GROUP BY step_id ORDER BY step_id
			ON CONFLICT (step_id) DO UPDATE SET
				delivered = s.delivered + EXCLUDED.delivered, opened = s.opened + EXCLUDED.opened,
				clicked = s.clicked + EXCLUDED.clicked, bounced = s.bounced + EXCLUDED.bounced,
				complained = s.complained + EXCLUDED.complained, unsubscribed = s.unsubscribed + EXCLUDED.unsubscribed
		),
		daily_counts AS (
			INSERT INTO delivery_daily_counts AS c (book_id, day, delivered, opened, clicked, bounced, complained, unsubscribed)
			SELECT $1, (at AT TIME ZONE 'UTC')::date AS day, count(*) FILTER (WHERE kind = 'delivered'), count(*) FILTER (WHERE kind = 'opened'),
			       count(*) FILTER (WHERE kind = 'clicked'), count(*) FILTER (WHERE kind = 'bounced'),
			       count(*) FILTER (WHERE kind = 'complained'), count(*) FILTER (WHERE kind = 'unsubscribed')
			FROM trans GROUP BY day ORDER BY day
			ON CONFLICT (book_id, day) DO UPDATE SET
				delivered = c.delivered + EXCLUDED.delivered, opened = c.opened + EXCLUDED.opened,
				clicked = c.clicked + EXCLUDED.clicked, bounced = c.bounced + EXCLUDED.bounced,
				complained = c.complained + EXCLUDED.complained, unsubscribed = c.unsubscribed + EXCLUDED.unsubscribed
		),
		-- The new events that may suppress, by id: the caller knows each
		-- one's address and reason.
		wishes AS (
			SELECT sg_event_id, contact_id FROM ins WHERE kind IN ('bounced', 'dropped', 'complained', 'unsubscribed')
		)
		SELECT (SELECT count(*) FROM m), (SELECT count(*) FROM ins),
		       ARRAY(SELECT sg_event_id FROM wishes), ARRAY(SELECT contact_id FROM wishes),
		       CASE WHEN $10 THEN ARRAY(SELECT sg_event_id FROM ins) END`,
		bookID, ids, kinds, campaigns, steps, participants, details, ats, now, wantFresh,
	).Scan(&out.matched, &out.applied, &wishIDs, &wishContacts, &out.fresh)
	if err != nil {
		return applied{}, err
	}
	byID := make(map[string]*event, len(evs))
	for i := range evs {
		byID[evs[i].id] = &evs[i]
	}
	seen := map[uuid.UUID]bool{}
	for i, id := range wishIDs {
		e := byID[id]
		if e == nil || e.suppress == "" {
			continue
		}
		out.suppress = append(out.suppress, suppressWish{email: e.email, reason: string(e.suppress)})
		if !seen[wishContacts[i]] {
			seen[wishContacts[i]] = true
			out.contactIDs = append(out.contactIDs, wishContacts[i])
		}
	}
	return out, nil
}

// emailRef is the campaign email a provider message id names.
type emailRef struct {
	campaignID, stepID, participantID uuid.UUID
}

// emailsByMessageID looks the message ids up among the book's campaign
// emails sent one message per recipient (campaigns' read model).
func emailsByMessageID(ctx context.Context, db postgres.DB, bookID uuid.UUID, ids []string) (map[string]emailRef, error) {
	rows, err := db.Query(ctx, `
		SELECT m.message_id, m.campaign_id, m.step_id, m.participant_id
		FROM campaign_email_message_ids m
		WHERE m.message_id = ANY($2::text[]) AND m.book_id = $1`, bookID, ids)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]emailRef{}
	for rows.Next() {
		var id string
		var r emailRef
		if err := rows.Scan(&id, &r.campaignID, &r.stepID, &r.participantID); err != nil {
			return nil, err
		}
		out[id] = r
	}
	return out, rows.Err()
}
