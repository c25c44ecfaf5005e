package transactional

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

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
// complaint. A message settled as failed with its outcome unknown (its
// instance stopped mid-send) that the provider reports on did go out: it
// becomes sent. For the kinds in firsts it returns each message's first
// event of the kind ever heard. The caller holds the book's feedback
// lock, so "first" is decided once.
func (Feedback) ApplyFeedback(ctx context.Context, db postgres.DB, bookID uuid.UUID, evs []delivery.TransactionalEvent, firsts []string, now time.Time) (delivery.TransactionalApplied, error) {
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
			       min(occurred_at) FILTER (WHERE kind = 'complained') AS complained_at,
			       min(occurred_at) AS first_at
			FROM ins GROUP BY message_id
		),
		up AS (
			UPDATE transactional_messages t SET
				delivered_at = LEAST(t.delivered_at, a.delivered_at), opened_at = LEAST(t.opened_at, a.opened_at),
				clicked_at = LEAST(t.clicked_at, a.clicked_at), bounced_at = LEAST(t.bounced_at, a.bounced_at),
				complained_at = LEAST(t.complained_at, a.complained_at),
				status = CASE WHEN t.status = 'failed' AND t.detail = $9 THEN 'sent' ELSE t.status END,
				detail = CASE WHEN t.status = 'failed' AND t.detail = $9 THEN '' ELSE t.detail END,
				sent_at = CASE WHEN t.status = 'failed' AND t.detail = $9 THEN COALESCE(t.sent_at, a.first_at) ELSE t.sent_at END
			FROM agg a WHERE t.id = a.message_id
		)
		SELECT ARRAY(SELECT DISTINCT event_id FROM m),
		       ARRAY(SELECT i.provider_event_id FROM ins i ORDER BY i.provider_event_id),
		       ARRAY(SELECT COALESCE(t.contact_id, '00000000-0000-0000-0000-000000000000')
		             FROM ins i JOIN transactional_messages t ON t.id = i.message_id ORDER BY i.provider_event_id)`,
		bookID, ids, kinds, msgs, pmids, details, ats, now, DetailOutcomeUnknown,
	).Scan(&out.Named, &out.New, &out.Contacts)
	if err != nil || len(firsts) == 0 || len(out.New) == 0 {
		return out, err
	}
	out.Firsts, err = firstsOf(ctx, db, bookID, out.New, firsts)
	return out, err
}

// firstsOf returns, of the events just recorded (fresh) of the kinds
// asked for, each message's first of its kind: none when an earlier batch
// brought one, the earliest when several came now.
func firstsOf(ctx context.Context, db postgres.DB, bookID uuid.UUID, fresh, kinds []string) ([]delivery.TransactionalFirst, error) {
	rows, _ := db.Query(ctx, `
		SELECT DISTINCT ON (e.message_id, e.kind) e.kind, e.detail, e.occurred_at, t.id, t.contact_id, t.email, t.provider_message_id
		FROM transactional_events e
		JOIN transactional_messages t ON t.id = e.message_id
		WHERE e.book_id = $1 AND e.provider_event_id = ANY($2::text[]) AND e.kind = ANY($3::text[])
		  AND NOT EXISTS (
		      SELECT 1 FROM transactional_events o
		      WHERE o.message_id = e.message_id AND o.kind = e.kind AND o.provider_event_id <> ALL ($2::text[]))
		ORDER BY e.message_id, e.kind, e.occurred_at`, bookID, fresh, kinds)
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (delivery.TransactionalFirst, error) {
		var f delivery.TransactionalFirst
		err := r.Scan(&f.Kind, &f.Detail, &f.At, &f.MessageID, &f.ContactID, &f.Address, &f.ProviderMessageID)
		return f, err
	})
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
