package contacts

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/contactbook/contactbook/internal/postgres"
)

// cardName is a contact's resource name (aliased c).
const cardName = `COALESCE(c.vcard_name, c.id::text || '` + CardSuffix + `')`

// lockSync waits for the book's contact writers in flight (migrations
// 00058 and 00063): after it, every version below the book's newest is committed.
// Only in a transaction that writes no contact.
func (store) lockSync(ctx context.Context, tx postgres.DB, bookID uuid.UUID) error {
	_, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(7303, hashtext($1::text))`, bookID)
	return err
}

// cardHorizon is the book's token now (the newest version of its
// contacts, its tombstones and what pruning forgot) and the oldest token
// it can answer.
//
// Each newest version is one backward probe of an index, bounded below
// by what is already known to be newer: max(sync_seq) alone would walk
// every dead entry at the top of contact_versions_sync_idx, and the contacts
// deleted last are exactly there until vacuum removes them (5,000 deleted
// made every probe fetch 5,000 heap rows). A deleted contact's tombstone
// is numbered after every version of it, and a pruned tombstone is at or
// below the horizon, so above the newest tombstone (and the horizon) the
// first entry of contact_versions is live but for writes that rolled back. The
// token is the same number the plain maxima give.
func (store) cardHorizon(ctx context.Context, db postgres.DB, bookID uuid.UUID) (now, horizon int64, err error) {
	err = db.QueryRow(ctx, `
		SELECT GREATEST(c.sync_seq, t.sync_seq, h.pruned_through, 0), COALESCE(h.pruned_through, 0)
		FROM (SELECT) AS one
		LEFT JOIN contact_sync_horizons h ON h.book_id = $1
		LEFT JOIN LATERAL (
		    SELECT sync_seq FROM contact_tombstones
		    WHERE book_id = $1 AND sync_seq > COALESCE(h.pruned_through, 0)
		    ORDER BY sync_seq DESC LIMIT 1) t ON true
		LEFT JOIN LATERAL (
		    SELECT sync_seq FROM contact_versions
		    WHERE book_id = $1 AND sync_seq > GREATEST(t.sync_seq, h.pruned_through, 0)
		    ORDER BY sync_seq DESC LIMIT 1) c ON true`, bookID).Scan(&now, &horizon)
	return now, horizon, err
}

// cardRefs lists the book's cards, or with after those changed after it.
func (store) cardRefs(ctx context.Context, db postgres.DB, bookID uuid.UUID, after *int64) ([]CardRef, error) {
	var since int64 = -1
	if after != nil {
		since = *after
	}
	rows, err := db.Query(ctx, `
		SELECT c.id, `+cardName+`, v.sync_seq FROM contact_versions v JOIN contacts c ON c.id = v.contact_id
		WHERE v.book_id = $1 AND v.sync_seq > $2 ORDER BY v.sync_seq`, bookID, since)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (CardRef, error) {
		var c CardRef
		return c, r.Scan(&c.ID, &c.Name, &c.Version)
	})
}

// tombstones lists the names of the book's contacts deleted after since.
func (store) tombstones(ctx context.Context, db postgres.DB, bookID uuid.UUID, since int64) ([]string, error) {
	rows, err := db.Query(ctx, `
		SELECT DISTINCT COALESCE(vcard_name, contact_id::text || '`+CardSuffix+`') FROM contact_tombstones
		WHERE book_id = $1 AND sync_seq > $2`, bookID, since)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// byNames splits resource names into chosen names and the ids of
// default names.
func byNames(names []string) (chosen []string, ids []uuid.UUID) {
	for _, n := range names {
		chosen = append(chosen, n)
		if id, ok := ContactIDOfCard(n); ok {
			ids = append(ids, id)
		}
	}
	return chosen, ids
}

// cards loads the book's cards of names (all when nil), with their labels
// and custom values.
func (store) cards(ctx context.Context, db postgres.DB, bookID uuid.UUID, names []string) ([]Card, error) {
	where, args := `c.book_id = $1`, []any{postgres.PlanEachTime, bookID}
	if names != nil {
		chosen, ids := byNames(names)
		where += ` AND (c.vcard_name = ANY($2) OR (c.vcard_name IS NULL AND c.id = ANY($3)))`
		args = append(args, chosen, ids)
	}
	rows, err := db.Query(ctx, `SELECT `+contactColumns+`, `+cardName+`, v.sync_seq, c.vcard_props
		FROM contacts c JOIN contact_versions v ON v.contact_id = c.id WHERE `+where, args...)
	if err != nil {
		return nil, err
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Card, error) {
		var card Card
		var props []byte
		c, err := scanContact(r, false, &card.Name, &card.Version, &props)
		card.Contact, card.Props = c, props
		return card, err
	})
	if err != nil || len(out) == 0 {
		return out, err
	}
	ids := make([]uuid.UUID, len(out))
	cs := make([]Contact, len(out))
	for i := range out {
		ids[i], cs[i] = out[i].Contact.ID, out[i].Contact
	}
	a, err := loadAttachments(ctx, db, bookID, ids)
	if err != nil {
		return nil, err
	}
	a.apply(cs)
	for i := range out {
		out[i].Contact = cs[i]
	}
	return out, nil
}

// cardByName finds the book's card of a resource name, locking it and its
// version for the transaction (a label change elsewhere waits).
func (store) cardByName(ctx context.Context, db postgres.DB, bookID uuid.UUID, name string) (CardRef, bool, error) {
	id, _ := ContactIDOfCard(name)
	var c CardRef
	err := db.QueryRow(ctx, `
		SELECT c.id, `+cardName+`, v.sync_seq FROM contacts c JOIN contact_versions v ON v.contact_id = c.id
		WHERE c.book_id = $1 AND (c.vcard_name = $2 OR (c.vcard_name IS NULL AND c.id = $3))
		FOR NO KEY UPDATE`, bookID, name, id).Scan(&c.ID, &c.Name, &c.Version)
	if errors.Is(err, pgx.ErrNoRows) {
		return CardRef{}, false, nil
	}
	return c, err == nil, err
}

// insertCard inserts a contact a client wrote, with its resource name
// ("" for the default one) and properties.
func (store) insertCard(ctx context.Context, tx *postgres.Tx, c Contact, name string, props json.RawMessage) error {
	b := &pgx.Batch{}
	store{}.insert(b, c)
	var n *string
	if name != "" {
		n = &name
	}
	b.Queue(`UPDATE contacts SET vcard_name = $2, vcard_props = $3 WHERE id = $1`, c.ID, n, nullJSON(props))
	return tx.SendBatch(ctx, b).Close()
}

func (store) setCardProps(ctx context.Context, db postgres.DB, id uuid.UUID, props json.RawMessage) error {
	_, err := db.Exec(ctx, `UPDATE contacts SET vcard_props = $2 WHERE id = $1`, id, nullJSON(props))
	return err
}

func nullJSON(b json.RawMessage) any {
	if len(b) == 0 {
		return nil
	}
	return []byte(b)
}

// replaceLabels makes the contact's labels exactly labelIDs.
func (store) replaceLabels(ctx context.Context, db postgres.DB, contactID uuid.UUID, labelIDs []uuid.UUID, now time.Time) error {
	if labelIDs == nil {
		labelIDs = []uuid.UUID{}
	}
	_, err := db.Exec(ctx, `
		WITH gone AS (DELETE FROM contact_labels WHERE contact_id = $1 AND label_id <> ALL($2::uuid[]))
		INSERT INTO contact_labels (contact_id, label_id, created_at)
		SELECT $1, l, $3 FROM unnest($2::uuid[]) AS l
		ON CONFLICT DO NOTHING`, contactID, labelIDs, now)
	return err
}

// replaceValues makes the contact's custom values exactly the given ones.
func (store) replaceValues(ctx context.Context, db postgres.DB, contactID uuid.UUID, fieldIDs []uuid.UUID, values []string, now time.Time) error {
	if fieldIDs == nil {
		fieldIDs, values = []uuid.UUID{}, []string{}
	}
	_, err := db.Exec(ctx, `
		WITH gone AS (DELETE FROM contact_field_values WHERE contact_id = $1 AND field_id <> ALL($2::uuid[]))
		INSERT INTO contact_field_values AS v (contact_id, field_id, value, updated_at)
		SELECT $1, f, x, $4 FROM unnest($2::uuid[], $3::text[]) AS u(f, x)
		ON CONFLICT (contact_id, field_id) DO UPDATE SET value = EXCLUDED.value, updated_at = EXCLUDED.updated_at
		WHERE v.value IS DISTINCT FROM EXCLUDED.value`, contactID, fieldIDs, values, now)
	return err
}
