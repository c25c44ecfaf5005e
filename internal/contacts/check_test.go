package contacts

import (
	"strings"
	"testing"

	"github.com/contactbook/contactbook/internal/validate"
)

// TestPassesTagsAgreesWithValidator: the plain check never passes a
// contact the validator refuses, and passes the common ones.
func TestPassesTagsAgreesWithValidator(t *testing.T) {
	str := func(s string) *string { return &s }
	base := func() Contact {
		c := Contact{FirstName: "Ada", Emails: []Email{{Address: "ada@example.com"}}, Phones: []Phone{{Number: "+44 20 1234"}}}
		c.normalize()
		return c
	}
	cases := []struct {
		name string
		edit func(*Contact)
		pass bool // the plain check must pass it
	}{
		{"plain", func(*Contact) {}, true},
		{"atext local part", func(c *Contact) { c.Emails[0].Address = "a.b+c_d/e=f@mail.example.co.uk" }, true},
		{"website", func(c *Contact) { c.Website = "https://example.com/x" }, true},
		{"birthday", func(c *Contact) { c.Birthday = str("1990-02-28") }, true},
		{"time zone", func(c *Contact) { c.TimeZone = str("Europe/Berlin") }, true},
		{"address", func(c *Contact) { c.Addresses = []Address{{Label: "home", City: "Berlin"}} }, true},
		{"long name", func(c *Contact) { c.FirstName = strings.Repeat("é", 200) }, true},
		{"too long name", func(c *Contact) { c.FirstName = strings.Repeat("é", 201) }, false},
		{"no at", func(c *Contact) { c.Emails[0].Address = "ada.example.com" }, false},
		{"single label", func(c *Contact) { c.Emails[0].Address = "ada@localhost" }, false},
		{"double dot", func(c *Contact) { c.Emails[0].Address = "ada..b@example.com" }, false},
		{"numeric tld", func(c *Contact) { c.Emails[0].Address = "ada@example.123" }, false},
		{"hyphen label", func(c *Contact) { c.Emails[0].Address = "ada@-example.com" }, false},
		{"quoted", func(c *Contact) { c.Emails[0].Address = `"a b"@example.com` }, false},
		{"bad label", func(c *Contact) { c.Emails[0].Label = "home" }, false},
		{"bad website", func(c *Contact) { c.Website = "ftp://example.com" }, false},
		{"bad birthday", func(c *Contact) { c.Birthday = str("1990-02-30") }, false},
		{"bad zone", func(c *Contact) { c.TimeZone = str("Mars/Base") }, false},
		{"empty phone", func(c *Contact) { c.Phones[0].Number = "" }, false},
		{"bad social", func(c *Contact) { c.Socials = []Social{{Label: "myspace", Value: "x"}} }, false},
		{"empty date", func(c *Contact) { c.Dates = []Date{{Label: "x"}} }, false},
		{"too many emails", func(c *Contact) { c.Emails = make([]Email, 21) }, false},
	}
	for _, tc := range cases {
		c := base()
		tc.edit(&c)
		got := c.passesTags()
		if got != tc.pass {
			t.Errorf("%s: passesTags %v, want %v", tc.name, got, tc.pass)
		}
		if got && validate.Struct(&c) != nil {
			t.Errorf("%s: passed, but the validator refuses it: %v", tc.name, validate.Struct(&c))
		}
	}
}
