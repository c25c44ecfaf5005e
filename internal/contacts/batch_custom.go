package contacts

import (
	"context"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/contactbook/contactbook/internal/books"
	"github.com/contactbook/contactbook/internal/postgres"
	"github.com/contactbook/contactbook/internal/validate"
)

// createFields gives the book the custom fields the rows name that it
// lacks, when the batch creates fields, before the rows are checked: the
// values are then checked against the fields as the book has them (one
// that another import defined meanwhile keeps its type). A dry run
// creates nothing and checks the rows as if the fields existed.
func (b *batch) createFields(ctx context.Context, db postgres.DB, rows []BatchRow) error {
	if !b.opt.CreateFields {
		return nil
	}
	var keys []string
	types := map[string]string{}
	for i := range rows {
		r := &rows[i]
		if r.Refused {
			continue
		}
		for k, v := range r.Custom {
			if _, ok := b.facts.fields[k]; ok || v == "" || !validate.FieldKey(k) {
				continue
			}
			if _, ok := types[k]; !ok {
				keys = append(keys, k)
				types[k] = fieldType(r.FieldTypes[k])
			}
		}
	}
	if len(keys) == 0 {
		return nil
	}
	slices.Sort(keys)
	typeList := make([]string, len(keys))
	for i, k := range keys {
		typeList[i] = types[k]
	}
	if b.opt.DryRun {
		for i, k := range keys {
			b.facts.fields[k] = fieldDef{typ: typeList[i]}
		}
		return nil
	}
	made, err := books.CreateFields(ctx, db, b.bookID, keys, typeList)
	if err != nil {
		return err
	}
	for _, f := range made {
		b.facts.fields[f.Key] = fieldDef{id: f.ID, typ: string(f.Type)}
	}
	return nil
}

// fieldType is the type a field is created with: the one asked for when
// it is a field type, else text.
func fieldType(t string) string {
	if v, err := books.ParseFieldType(t); err == nil {
		return string(v)
	}
	return string(books.FieldText)
}

// setCustom writes the batch's custom values in one statement.
func (b *batch) setCustom(ctx context.Context, st store, db postgres.DB) error {
	var vals struct {
		contacts, fields []uuid.UUID
		values           []string
	}
	for cp, m := range b.custom {
		if cp.CustomFields == nil {
			cp.CustomFields = map[string]string{}
		}
		for k, v := range m {
			if v == "" {
				continue
			}
			vals.contacts, vals.fields, vals.values = append(vals.contacts, cp.ID), append(vals.fields, b.facts.fields[k].id), append(vals.values, v)
			cp.CustomFields[k] = v
		}
	}
	return st.setValues(ctx, db, vals.contacts, vals.fields, vals.values, b.now)
}

// setValues writes custom field values, creating or overwriting.
func (store) setValues(ctx context.Context, db postgres.DB, contactIDs, fieldIDs []uuid.UUID, values []string, now time.Time) error {
	if len(contactIDs) == 0 {
		return nil
	}
	_, err := db.Exec(ctx, `
		INSERT INTO contact_field_values AS v (contact_id, field_id, value, updated_at)
		SELECT *, $4::timestamptz FROM unnest($1::uuid[], $2::uuid[], $3::text[])
		ON CONFLICT (contact_id, field_id) DO UPDATE SET value = EXCLUDED.value, updated_at = EXCLUDED.updated_at`,
		postgres.PlanEachTime, contactIDs, fieldIDs, values, now)
	return err
}
