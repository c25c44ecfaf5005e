package contacts

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/contactbook/contactbook/internal/apperr"
)

func TestContactValidate(t *testing.T) {
	t.Parallel()
	ok := func() Contact { return Contact{FirstName: "Ada"} }
	cases := []struct {
		name   string
		edit   func(c *Contact)
		code   apperr.Code // "" for valid
		naming string
	}{
		{"minimal", func(*Contact) {}, "", ""},
		{"company only", func(c *Contact) { c.FirstName, c.Company = "", "Acme" }, "", ""},
		{"no name", func(c *Contact) { c.FirstName = " " }, apperr.Validation, "first_name"},
		{"default labels", func(c *Contact) {
			c.Emails = []Email{{Address: "a@b.co"}}
			c.Phones = []Phone{{Number: "+1 (555) 010-0000 x12"}}
			c.Socials = []Social{{Value: "ada"}}
		}, "", ""},
		{"email", func(c *Contact) { c.Emails = []Email{{Address: "a@"}} }, apperr.InvalidInput, "emails[0].address"},
		{"email case duplicate", func(c *Contact) { c.Emails = []Email{{Address: "a@b.co"}, {Address: " A@B.co"}} }, apperr.InvalidInput, "emails[1].address"},
		{"primary", func(c *Contact) { c.Phones = []Phone{{Number: "1", Primary: true}, {Number: "2", Primary: true}} }, apperr.InvalidInput, "phones[1].primary"},
		{"phone", func(c *Contact) { c.Phones = []Phone{{Number: "--"}} }, apperr.InvalidInput, "phones[0].number"},
		{"birthday", func(c *Contact) { b := "2023-02-29"; c.Birthday = &b }, apperr.InvalidInput, "birthday"},
		{"birthday leap", func(c *Contact) { b := "2024-02-29"; c.Birthday = &b }, "", ""},
		{"empty birthday is none", func(c *Contact) { b := " "; c.Birthday = &b }, "", ""},
		{"year zero", func(c *Contact) { c.Dates = []Date{{Label: "x", Value: "0000-12-31"}} }, apperr.InvalidInput, "dates[0].value"},
		{"website", func(c *Contact) { c.Website = "ftp://x.example" }, apperr.InvalidInput, "website"},
		{"address empty", func(c *Contact) { c.Addresses = []Address{{Label: "home"}} }, apperr.InvalidInput, "addresses[0]"},
		{"too many socials", func(c *Contact) {
			for range 21 {
				c.Socials = append(c.Socials, Social{Label: "x", Value: "v"})
			}
		}, apperr.InvalidInput, "socials"},
		{"long notes", func(c *Contact) { c.Notes = strings.Repeat("n", 20001) }, apperr.InvalidInput, "notes"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := ok()
			tc.edit(&c)
			c.normalize()
			err := c.validate()
			if tc.code == "" {
				if err != nil {
					t.Fatalf("unexpected %v", err)
				}
				return
			}
			if apperr.CodeOf(err) != tc.code || !strings.Contains(apperr.MessageOf(err), tc.naming) {
				t.Fatalf("got %v, want %s naming %q", err, tc.code, tc.naming)
			}
		})
	}
}

func TestContactNormalize(t *testing.T) {
	t.Parallel()
	b := ""
	c := Contact{FirstName: "  Ada ", Birthday: &b, Emails: []Email{{Address: " a@b.co "}}}
	c.normalize()
	if c.FirstName != "Ada" || c.Birthday != nil || c.Emails[0].Address != "a@b.co" || c.Emails[0].Label != "other" {
		t.Fatalf("%+v", c)
	}
	if c.Phones == nil || c.Labels == nil || c.CustomFields == nil || c.Relationships == nil {
		t.Fatal("absent arrays must become empty, not null")
	}
}

func TestContactFieldValue(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		typ, v string
		ok     bool
	}{
		{"text", "anything", true}, {"text", "", true}, {"text", strings.Repeat("x", 10001), false},
		{"number", "42", true}, {"number", "-1.5e3", true}, {"number", "NaN", false}, {"number", "1e999", false}, {"number", "one", false},
		{"date", "2024-02-29", true}, {"date", "2023-02-29", false}, {"date", "0000-01-01", false},
		{"url", "https://example.com/x", true}, {"url", "example.com", false}, {"url", "javascript:x", false},
	} {
		if err := checkFieldValue(tc.typ, tc.v); (err == nil) != tc.ok {
			t.Errorf("%s %q: %v", tc.typ, tc.v, err)
		}
	}
}

func TestContactParseIDs(t *testing.T) {
	t.Parallel()
	a, b := uuid.NewString(), uuid.NewString()
	ids, err := parseIDs([]string{a, b, a})
	if err != nil || len(ids) != 2 {
		t.Fatalf("%v %v", ids, err)
	}
	for _, raw := range [][]string{nil, {}, {a, "x"}, make([]string, MaxBulkIDs+1)} {
		if _, err := parseIDs(raw); !apperr.Is(err, apperr.InvalidInput) {
			t.Errorf("%d ids: %v", len(raw), err)
		}
	}
}

func TestContactEscapeLike(t *testing.T) {
	t.Parallel()
	if got := escapeLike(`50%_a\b`); got != `50\%\_a\\b` {
		t.Fatalf("%q", got)
	}
}

// TestWriteErrBookGone: a create whose book is deleted between the access
// check and the insert fails as the foreign key would (migration 00008);
// the caller gets the missing-book answer, not a 500.
func TestWriteErrBookGone(t *testing.T) {
	t.Parallel()
	err := (&Service{}).writeErr(context.Background(), &pgconn.PgError{Code: "23503", ConstraintName: "contacts_book_id_fkey"}, Contact{})
	var ae *apperr.Error
	if !errors.As(err, &ae) || ae.Code != apperr.Forbidden {
		t.Fatalf("writeErr = %v, want FORBIDDEN", err)
	}
}
