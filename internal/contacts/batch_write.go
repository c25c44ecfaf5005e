package contacts

import (
	"context"
	"encoding/json"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/contactbook/contactbook/internal/postgres"
)

// copyContacts inserts new contacts with COPY.
func (store) copyContacts(ctx context.Context, db postgres.DB, cs []*Contact) error {
	if len(cs) == 0 {
		return nil
	}
	// COPY encodes each row before it asks for the next: one slice serves
	// every row.
	row := make([]any, 20)
	_, err := db.CopyFrom(ctx, pgx.Identifier{"contacts"},
		[]string{"id", "book_id", "first_name", "last_name", "company", "job_title", "notes", "website",
			"time_zone", "emails", "phones", "addresses", "dates", "socials", "relationships", "starred", "birthday", "created_by", "created_at", "updated_at"},
		pgx.CopyFromSlice(len(cs), func(i int) ([]any, error) {
			c := cs[i]
			row = append(row[:0], c.ID, c.BookID, c.FirstName, c.LastName, c.Company, c.JobTitle, c.Notes, c.Website,
				c.TimeZone, c.Emails, c.Phones, c.Addresses, c.Dates, c.Socials, c.Relationships, c.Starred, dateParam(c.Birthday),
				c.CreatedBy, c.CreatedAt, c.UpdatedAt)
			return row, nil
		}))
	return err
}

// updateImported writes patched contacts in one statement.
func (store) updateImported(ctx context.Context, db postgres.DB, cs []*Contact) error {
	if len(cs) == 0 {
		return nil
	}
	n := len(cs)
	var (
		ids                                         = make([]uuid.UUID, n)
		first, last, company, title, notes, website = make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		emails, phones, addrs, dates, socials       = make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		starred                                     = make([]bool, n)
		zones                                       = make([]*string, n)
		birthdays                                   = make([]pgtype.Date, n)
	)
	js := func(v any) string { b, _ := json.Marshal(v); return string(b) }
	for i, c := range cs {
		ids[i], first[i], last[i], company[i], title[i], notes[i], website[i] = c.ID, c.FirstName, c.LastName, c.Company, c.JobTitle, c.Notes, c.Website
		emails[i], phones[i], addrs[i], dates[i], socials[i] = js(c.Emails), js(c.Phones), js(c.Addresses), js(c.Dates), js(c.Socials)
		starred[i], birthdays[i], zones[i] = c.Starred, dateParam(c.Birthday), c.TimeZone
	}
	_, err := db.Exec(ctx, `
		UPDATE contacts c SET first_name = u.first_name, last_name = u.last_name, company = u.company,
			job_title = u.job_title, notes = u.notes, website = u.website, emails = u.emails, phones = u.phones,
			addresses = u.addresses, dates = u.dates, socials = u.socials, starred = u.starred,
			birthday = u.birthday, time_zone = u.time_zone, updated_at = $14
		FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[],
		            $8::jsonb[], $9::jsonb[], $10::jsonb[], $11::jsonb[], $12::jsonb[], $13::bool[], $15::date[], $16::text[])
		     AS u(id, first_name, last_name, company, job_title, notes, website, emails, phones, addresses, dates, socials, starred, birthday, time_zone)
		WHERE c.id = u.id`, postgres.PlanEachTime,
		ids, first, last, company, title, notes, website, emails, phones, addrs, dates, socials, starred, cs[0].UpdatedAt, birthdays, zones)
	return err
}
