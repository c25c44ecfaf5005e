package contacts

import (
	"context"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/contactbook/contactbook/internal/books"
	"github.com/contactbook/contactbook/internal/postgres"
)

// createLabels creates the labels the rows named that the book lacks;
// after it every label of the batch is known.
func (b *batch) createLabels(ctx context.Context, st store, db postgres.DB) error {
	if len(b.labelNames) == 0 {
		return nil
	}
	made, err := st.createLabels(ctx, db, b.bookID, b.labelNames, b.now)
	if err != nil {
		return err
	}
	for _, l := range made {
		b.facts.labels[strings.ToLower(l.Name)] = l
	}
	return nil
}

// tag adds the batch's contacts to their labels in one statement, and
// keeps the pairs that are new (for their topic events).
func (b *batch) tag(ctx context.Context, st store, db postgres.DB) error {
	var pairs [2][]uuid.UUID
	for _, pl := range b.toLabel {
		for _, k := range pl.keys {
			l := b.facts.labels[k]
			pairs[0], pairs[1] = append(pairs[0], pl.contact.ID), append(pairs[1], l.ID)
			if !hasLabel(pl.contact.Labels, l.ID) {
				pl.contact.Labels = append(pl.contact.Labels, l)
				b.tagged = append(b.tagged, labelPair{pl.contact.ID, l.ID})
			}
		}
	}
	return st.tagPairs(ctx, db, pairs[0], pairs[1], b.now)
}

func hasLabel(ls []LabelRef, id uuid.UUID) bool {
	for _, l := range ls {
		if l.ID == id {
			return true
		}
	}
	return false
}

// createLabels adds the named labels to the book, after its others, in
// the order given.
func (store) createLabels(ctx context.Context, db postgres.DB, bookID uuid.UUID, names []string, now time.Time) ([]LabelRef, error) {
	made, err := books.CreateLabels(ctx, db, bookID, names, now)
	out := make([]LabelRef, len(made))
	for i, l := range made {
		out[i] = LabelRef{ID: l.ID, Name: l.Name, Color: l.Color}
	}
	return out, err
}

// tagPairs adds the (contact, label) pairs.
func (store) tagPairs(ctx context.Context, db postgres.DB, contactIDs, labelIDs []uuid.UUID, now time.Time) error {
	if len(contactIDs) == 0 {
		return nil
	}
	_, err := db.Exec(ctx, `
		INSERT INTO contact_labels (contact_id, label_id, created_at)
		SELECT * , $3::timestamptz FROM unnest($1::uuid[], $2::uuid[])
		ON CONFLICT DO NOTHING`, postgres.PlanEachTime, contactIDs, labelIDs, now)
	return err
}
