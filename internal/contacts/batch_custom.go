package contacts

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/contactbook/contactbook/internal/postgres"
)

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
