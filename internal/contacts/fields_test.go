package contacts_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/uuid"

	"github.com/contactbook/contactbook/internal/apperr"
	"github.com/contactbook/contactbook/internal/books"
	"github.com/contactbook/contactbook/internal/contacts"
)

// TestBulkUpdateField: a custom field's value is set on the named
// contacts, counting only those it changes; it is checked against the
// field's type; an empty value removes it; each changed contact gets one
// contact.updated event; deleting the definition removes its values.
func TestBulkUpdateField(t *testing.T) {
	t.Parallel()
	b := newBookEnv(t)
	ctx := context.Background()
	sc := b.scope(t, b.book)
	fieldID := b.field(b.book, "tier", books.FieldText)
	field, dateField := fieldID.String(), b.field(b.book, "since", books.FieldDate).String()
	ids := make([]string, 6)
	for i := range ids {
		c, err := b.svc.Create(ctx, sc, decode[contacts.CreateInput](t, map[string]any{"first_name": "Person", "last_name": string(rune('A' + i))}))
		if err != nil {
			t.Fatal(err)
		}
		ids[i] = c.ID.String()
	}
	before := b.events()
	set := func(ids []string, field, value string) (int, error) {
		t.Helper()
		return b.svc.BulkUpdateField(ctx, sc, contacts.BulkInput{ContactIDs: ids, FieldDefinitionID: &field, Value: &value})
	}
	mustSet := func(ids []string, field, value string, want int) {
		t.Helper()
		if n, err := set(ids, field, value); err != nil || n != want {
			t.Fatalf("set %s = %q on %d contacts: %d changed, %v; want %d", field, value, len(ids), n, err, want)
		}
	}
	values := func(id string) map[string]string {
		t.Helper()
		c, err := b.svc.Get(ctx, b.owner, uuid.MustParse(id))
		if err != nil {
			t.Fatal(err)
		}
		return c.CustomFields
	}
	mustSet(ids[:4], field, "gold", 4)
	if v := values(ids[0]); v["tier"] != "gold" {
		t.Fatalf("custom fields: %v", v)
	}
	mustSet(ids, field, "gold", 2)       // unchanged values are not counted
	mustSet(ids[:3], field, "silver", 3) // overwritten
	if values(ids[2])["tier"] != "silver" || values(ids[5])["tier"] != "gold" {
		t.Fatal("values after overwrite")
	}
	mustSet(ids[:1], dateField, "2024-02-29", 1)
	for _, bad := range []string{"2023-02-29", "tomorrow"} {
		if _, err := set(ids, dateField, bad); !apperr.Is(err, apperr.InvalidInput) {
			t.Errorf("date %q: %v", bad, err)
		}
	}
	mustSet(ids, field, "", 6) // cleared
	if v := values(ids[0]); len(v) != 1 || v["since"] != "2024-02-29" {
		t.Fatalf("after clear: %v", v)
	}
	if n := b.events() - before; n != 4+2+3+1+6 {
		t.Fatalf("%d events, want one per changed contact", n)
	}
	if _, err := b.svc.BulkUpdateField(ctx, sc, contacts.BulkInput{ContactIDs: ids, FieldDefinitionID: &field}); !apperr.Is(err, apperr.InvalidInput) {
		t.Fatalf("no value: %v", err)
	}
	// Deleting the definition removes the values.
	mustSet(ids, field, "bronze", 6)
	if err := b.books.DeleteField(ctx, b.owner, b.scope(t, b.book).Book, fieldID); err != nil {
		t.Fatal(err)
	}
	if n := b.count(`SELECT count(*)::int FROM contact_field_values WHERE field_id = $1`, field); n != 0 {
		t.Fatalf("%d values of a deleted field", n)
	}
}

// TestBulkDelete: a bulk delete removes the book's contacts among the ids
// (once each, skipping ids of other books and unknown ones) with their
// labels, field values, interactions, emails and campaign enrolments,
// keeps the book's count, and writes one contact.deleted per contact.
func TestBulkDelete(t *testing.T) {
	t.Parallel()
	b := newBookEnv(t)
	ctx := context.Background()
	sc := b.scope(t, b.book)
	book := b.book
	label, field := b.label(book, books.LabelInput{Name: "VIP"}).String(), b.field(book, "tier", books.FieldText).String()
	ids := make([]string, 30)
	for i := range ids {
		c, err := b.svc.Create(ctx, sc, withEmails(t, "Person", fmt.Sprintf("p%d@example.com", i)))
		if err != nil {
			t.Fatal(err)
		}
		ids[i] = c.ID.String()
	}
	outside := b.newContacts(b.newBook("Other", false), "Outside", 2)
	gold := "gold"
	if n, err := b.svc.BulkAddLabel(ctx, sc, contacts.BulkInput{ContactIDs: ids, LabelID: &label}); err != nil || n != len(ids) {
		t.Fatalf("label %d contacts: %v", n, err)
	}
	if n, err := b.svc.BulkUpdateField(ctx, sc, contacts.BulkInput{ContactIDs: ids, FieldDefinitionID: &field, Value: &gold}); err != nil || n != len(ids) {
		t.Fatalf("set the field on %d contacts: %v", n, err)
	}
	// Interactions and enrolments belong to other packages (campaign
	// sends and enrolments write them), so the rows that must go with
	// their contacts are written directly.
	b.exec(`INSERT INTO interactions (contact_id, kind) SELECT unnest($1::uuid[]), 'note'`, ids)
	b.exec(`WITH c AS (INSERT INTO campaigns (book_id, name) VALUES ($1, 'Drip') RETURNING id)
		INSERT INTO campaign_participants (campaign_id, contact_id, enrolled_at) SELECT c.id, unnest($2::uuid[]), now() FROM c`, book, ids)
	const bookCount = `SELECT COALESCE(sum(n), 0)::int FROM book_contact_counts WHERE book_id = $1`
	countBefore := b.count(bookCount, book)
	before := b.events()

	target := append(append([]string{}, ids[:20]...), ids[0], ids[1], outside[0], uuid.NewString())
	if n, err := b.svc.BulkDelete(ctx, sc, contacts.BulkInput{ContactIDs: target}); err != nil || n != 20 {
		t.Fatalf("deleted %d, %v; want 20", n, err)
	}
	q := b.count
	if n := q(`SELECT count(*)::int FROM contacts WHERE id = ANY($1::uuid[])`, ids[:20]); n != 0 {
		t.Fatalf("%d contacts left", n)
	}
	if n := q(`SELECT count(*)::int FROM contacts WHERE id = ANY($1::uuid[])`, outside); n != 2 {
		t.Fatal("a contact outside the book was deleted")
	}
	for _, table := range []string{"contact_labels", "contact_field_values", "interactions", "contact_emails", "campaign_participants"} {
		if n := q(`SELECT count(*)::int FROM `+table+` WHERE contact_id = ANY($1::uuid[])`, ids[:20]); n != 0 {
			t.Fatalf("%d %s rows of deleted contacts left", n, table)
		}
		if n := q(`SELECT count(*)::int FROM `+table+` WHERE contact_id = ANY($1::uuid[])`, ids[20:]); n != 10 {
			t.Fatalf("%s rows of kept contacts: %d, want 10", table, n)
		}
	}
	if n := q(bookCount, book); n != countBefore-20 {
		t.Fatalf("contact_count %d, want %d", n, countBefore-20)
	}
	if n := q(`SELECT count(DISTINCT b->'data'->>'id')::int FROM (SELECT convert_from(body, 'UTF8')::jsonb AS b FROM events WHERE team_id = $1 AND type = 'contact.deleted') e
		WHERE b->>'book_id' = $2 AND b->'data'->>'id' = ANY($3::text[])`,
		b.team, book.String(), ids[:20]); n != 20 || b.events()-before != 20 {
		t.Fatalf("%d contacts of %d contact.deleted events, want 20 of 20", n, b.events()-before)
	}
	if n, err := b.svc.BulkDelete(ctx, sc, contacts.BulkInput{ContactIDs: ids[:20]}); err != nil || n != 0 {
		t.Fatalf("second delete counted %d, %v", n, err)
	}
}
