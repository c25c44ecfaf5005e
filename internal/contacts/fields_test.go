package contacts_test

import (
	"context"
	"testing"

	"github.com/google/uuid"

	"github.com/contactbook/contactbook/internal/apperr"
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
	sc := b.scope(t, b.tm.Book)
	fieldsPath := "/api/books/" + b.tm.Book + "/fields"
	field := b.tm.Owner.Post(fieldsPath, map[string]any{"key": "tier", "name": "Tier", "type": "text"}).Expect(201).String("data.id")
	dateField := b.tm.Owner.Post(fieldsPath, map[string]any{"key": "since", "name": "Since", "type": "date"}).Expect(201).String("data.id")
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
	b.tm.Owner.Delete(fieldsPath + "/" + field).Expect(204)
	if n := b.tm.Env.QueryInt(`SELECT count(*)::int FROM contact_field_values WHERE field_id = $1`, field); n != 0 {
		t.Fatalf("%d values of a deleted field", n)
	}
}
