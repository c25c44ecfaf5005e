package transactional

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/contactbook/contactbook/internal/delivery"
	"github.com/contactbook/contactbook/internal/postgres"
)

// Feedback applies the provider's events of transactional emails for
// package delivery, which receives them (delivery.Transactional). It
// needs nothing but the database it is given.
type Feedback struct{}

// ApplyFeedback records the events that name a message of the book (by
// its id, or by the provider's message id) and were not recorded before,
// and stamps each message's first delivery, open, click, hard bounce and
// complaint. The caller holds the book's feedback lock, so "first" is
// decided once.
func (Feedback) ApplyFeedback(ctx context.Context, db postgres.DB, bookID uuid.UUID, evs []delivery.TransactionalEvent, now time.Time) (delivery.TransactionalApplied, error) {
	var (
		ids, kinds, details, pmids []string
		msgs                       []uuid.UUID
		ats                        []time.Time
	)
	for _, e := range evs {
		// An event without the message's id names the provider's id of
		// it, which the provider extends ("<X-Message-Id>.filter...") and
		// whose own form may hold dots: each dotted prefix is tried.
		cands := []string{""}
		if e.MessageID == uuid.Nil {
			cands = messageIDPrefixes(e.ProviderMessageID)
		}
		for _, c := range cands {
			ids, kinds, details, pmids = append(ids, e.ID), append(kinds, e.Kind), append(details, e.Detail), append(pmids, c)
			msgs, ats = append(msgs, e.MessageID), append(ats, e.At)
		}
	}
	var out delivery.TransactionalApplied
	err := db.QueryRow(ctx, `
		WITH ev AS (
			SELECT * FROM unnest($2::text[], $3::text[], $4::uuid[], $5::text[], $6::text[], $7::timestamptz[])
			       AS e(event_id, kind, message_id, provider_message_id, detail, occurred_at)
		),
		m AS (
			SELECT e.event_id, e.kind, e.detail, e.occurred_at, t.id AS message_id, t.contact_id
			FROM ev e JOIN transactional_messages t ON t.id = e.message_id AND t.book_id = $1
			UNION ALL
			SELECT e.event_id, e.kind, e.detail, e.occurred_at, t.id, t.contact_id
			FROM ev e JOIN transactional_messages t ON t.book_id = $1 AND t.provider_message_id = e.provider_message_id
			WHERE e.message_id = '00000000-0000-0000-0000-000000000000' AND e.provider_message_id <> ''
		),
		ins AS (
			INSERT INTO transactional_events (book_id, provider_event_id, message_id, kind, detail, occurred_at, received_at)
			SELECT DISTINCT ON (event_id) $1, event_id, message_id, kind, detail, occurred_at, $8 FROM m
			ORDER BY event_id
			ON CONFLICT (book_id, provider_event_id) DO NOTHING
			RETURNING provider_event_id, message_id, kind, occurred_at
		),
		agg AS (
			SELECT message_id,
			       min(occurred_at) FILTER (WHERE kind = 'delivered') AS delivered_at,
			       min(occurred_at) FILTER (WHERE kind = 'opened') AS opened_at,
			       min(occurred_at) FILTER (WHERE kind = 'clicked') AS clicked_at,
			       min(occurred_at) FILTER (WHERE kind = 'bounced') AS bounced_at,
			       min(occurred_at) FILTER (WHERE kind = 'complained') AS complained_at
			FROM ins GROUP BY message_id
		),
		up AS (
			UPDATE transactional_messages t SET
				delivered_at = LEAST(t.delivered_at, a.delivered_at), opened_at = LEAST(t.opened_at, a.opened_at),
				clicked_at = LEAST(t.clicked_at, a.clicked_at), bounced_at = LEAST(t.bounced_at, a.bounced_at),
				complained_at = LEAST(t.complained_at, a.complained_at)
			FROM agg a WHERE t.id = a.message_id
		)
		SELECT (SELECT count(DISTINCT event_id) FROM m),
		       ARRAY(SELECT i.provider_event_id FROM ins i ORDER BY i.provider_event_id),
		       ARRAY(SELECT COALESCE(t.contact_id, '00000000-0000-0000-0000-000000000000')
		             FROM ins i JOIN transactional_messages t ON t.id = i.message_id ORDER BY i.provider_event_id)`,
		bookID, ids, kinds, msgs, pmids, details, ats, now,
	).Scan(&out.Matched, &out.New, &out.Contacts)
	return out, err
}

// messageIDPrefixes are the dotted prefixes of a provider's message id,
// the whole id included ("a.b.c" gives a, a.b, a.b.c), at most 8.
func messageIDPrefixes(id string) []string {
	var out []string
	for i := 0; i < len(id) && len(out) < 7; i++ {
		if id[i] == '.' && i > 0 {
			out = append(out, id[:i])
		}
	}
	return append(out, id)
}
