package contacts

import (
	"context"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/contactbook/contactbook/internal/books"
	"github.com/contactbook/contactbook/internal/events"
	"github.com/contactbook/contactbook/internal/postgres"
)

// labelPair is one contact given or relieved of one label.
type labelPair struct {
	contact, label uuid.UUID
}

// pairsOf pairs each contact of ids with label.
func pairsOf(ids []uuid.UUID, label uuid.UUID) []labelPair {
	out := make([]labelPair, len(ids))
	for i, id := range ids {
		out[i] = labelPair{id, label}
	}
	return out
}

// emitTopicChanges writes, when wanted, contact.subscribed (one per
// contact, naming its topics turned on) for the public labels (topics) in
// added and contact.unsubscribed of scope topic for each public label in
// removed (whose source is api: an import only adds). A change of
// private labels writes nothing. It costs one statement without a
// subscriber, whatever the number of pairs.
func (s *Service) emitTopicChanges(ctx context.Context, tx *postgres.Tx, teamID, bookID uuid.UUID, added, removed []labelPair, source string, now time.Time) error {
	if len(added)+len(removed) == 0 {
		return nil
	}
	wanted, err := s.outbox.WantedOf(ctx, tx, teamID, events.ContactSubscribed, events.ContactUnsubscribed)
	if err != nil || len(wanted) == 0 {
		return err
	}
	if !wanted[events.ContactSubscribed] {
		added = nil
	}
	if !wanted[events.ContactUnsubscribed] {
		removed = nil
	}
	var labels []uuid.UUID
	for _, p := range slices.Concat(added, removed) {
		if !slices.Contains(labels, p.label) {
			labels = append(labels, p.label)
		}
	}
	public, err := books.PublicLabelsAmong(ctx, tx, bookID, labels)
	if err != nil || len(public) == 0 {
		return err
	}
	topics := func(ps []labelPair) []labelPair {
		return slices.DeleteFunc(slices.Clone(ps), func(p labelPair) bool { return !slices.Contains(public, p.label) })
	}
	added, removed = topics(added), topics(removed)
	var ids []uuid.UUID
	for _, p := range slices.Concat(added, removed) {
		ids = append(ids, p.contact)
	}
	address, err := s.st.primaryAddresses(ctx, tx, ids)
	if err != nil {
		return err
	}
	book := bookID
	var evs []events.Event
	byContact := map[uuid.UUID][]uuid.UUID{}
	var order []uuid.UUID
	for _, p := range added {
		if _, ok := byContact[p.contact]; !ok {
			order = append(order, p.contact)
		}
		byContact[p.contact] = append(byContact[p.contact], p.label)
	}
	for _, c := range order {
		evs = append(evs, events.Event{Type: events.ContactSubscribed, TeamID: teamID, BookID: &book, Data: events.SubscribedData{
			ContactID: c, Address: address[c], LabelIDs: byContact[c], Source: source, OccurredAt: now,
		}})
	}
	for _, p := range removed {
		label := p.label
		evs = append(evs, events.Event{Type: events.ContactUnsubscribed, TeamID: teamID, BookID: &book, Data: events.UnsubscribedData{
			ContactID: p.contact, Address: address[p.contact], Scope: events.ScopeTopic, LabelID: &label,
			Source: events.UnsubscribedAPI, OccurredAt: now,
		}})
	}
	return s.outbox.Append(ctx, tx, now, evs...)
}

// primaryAddresses returns the primary address of each contact of ids
// that has one.
func (store) primaryAddresses(ctx context.Context, db postgres.DB, ids []uuid.UUID) (map[uuid.UUID]string, error) {
	rows, _ := db.Query(ctx, `
		SELECT ct.id, COALESCE(CASE WHEN jsonb_array_length(ct.emails) < 2 THEN ct.emails -> 0 ->> 'address'
		       ELSE COALESCE(jsonb_path_query_first(ct.emails, '$[*] ? (@.primary == true).address') #>> '{}', ct.emails -> 0 ->> 'address') END, '')
		FROM contacts ct WHERE ct.id = ANY($1::uuid[])`, ids)
	out := make(map[uuid.UUID]string, len(ids))
	var id uuid.UUID
	var a string
	_, err := pgx.ForEachRow(rows, []any{&id, &a}, func() error {
		out[id] = a
		return nil
	})
	return out, err
}
