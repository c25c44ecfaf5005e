package contacts

import (
	"net/url"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/contactbook/contactbook/internal/validate"
)

// passesTags reports whether c certainly satisfies its `validate` tags,
// checked in plain Go. The reflective validator costs about 900 bytes and
// a microsecond a contact, most of an import's validation; this check
// answers for the contacts people send. It is conservative: false means
// "not certain" (an address outside the common ASCII form, a value that
// fails), and the validator then decides and words the failure, so the
// messages and field paths are the validator's in every case.
func (c *Contact) passesTags() bool {
	if !maxRunes(c.FirstName, 200) || !maxRunes(c.LastName, 200) || !maxRunes(c.Company, 200) ||
		!maxRunes(c.JobTitle, 200) || !maxRunes(c.Notes, 20000) {
		return false
	}
	if len(c.Emails) > 20 || len(c.Phones) > 20 || len(c.Addresses) > 10 || len(c.Dates) > 20 ||
		len(c.Socials) > 20 || len(c.Relationships) > 50 {
		return false
	}
	for _, e := range c.Emails {
		if !plainEmail(e.Address) || !slices.Contains(EmailLabels, e.Label) {
			return false
		}
	}
	for _, p := range c.Phones {
		if p.Number == "" || !maxRunes(p.Number, 50) || !slices.Contains(PhoneLabels, p.Label) {
			return false
		}
	}
	if c.Birthday != nil && *c.Birthday != "" && !validate.Date(*c.Birthday) {
		return false
	}
	if c.Website != "" && (!maxRunes(c.Website, 2048) || !httpURL(c.Website)) {
		return false
	}
	if c.TimeZone != nil && *c.TimeZone != "" && !validate.TimeZone(*c.TimeZone) {
		return false
	}
	for _, a := range c.Addresses {
		if !slices.Contains(AddressLabels, a.Label) || !maxRunes(a.Street, 500) || !maxRunes(a.City, 200) ||
			!maxRunes(a.State, 200) || !maxRunes(a.Zip, 32) || !maxRunes(a.Country, 100) {
			return false
		}
	}
	for _, d := range c.Dates {
		if d.Label == "" || !maxRunes(d.Label, 100) || d.Value == "" || !validate.Date(d.Value) {
			return false
		}
	}
	for _, s := range c.Socials {
		if !slices.Contains(SocialLabels, s.Label) ||
			s.Value == "" || !maxRunes(s.Value, 500) {
			return false
		}
	}
	for _, r := range c.Relationships {
		if r.Label == "" || !maxRunes(r.Label, 100) || r.Name == "" || !maxRunes(r.Name, 200) {
			return false
		}
	}
	return true
}

// maxRunes is the validator's max for a string: a count of characters.
func maxRunes(s string, n int) bool {
	return len(s) <= n || utf8.RuneCountInString(s) <= n
}

// httpURL is the validator's http_url: parsed lower-cased, with a host,
// and the scheme http or https.
func httpURL(s string) bool {
	u, err := url.Parse(strings.ToLower(s))
	return err == nil && u.Host != "" && (u.Scheme == "http" || u.Scheme == "https")
}

// plainEmail reports whether s is an address of the common ASCII form
// local@domain, which both halves of the validator's email check accept
// (net/mail's dot-atom and its regular expression): a local part of
// RFC 5322 atext characters in dot-separated runs, a domain of two or more
// labels of letters, digits and inner hyphens, the last starting and
// ending with a letter; at most 254 characters. Anything else (quoted
// local parts, non-ASCII) is left to the validator.
func plainEmail(s string) bool {
	if s == "" || len(s) > 254 {
		return false
	}
	at := strings.IndexByte(s, '@')
	if at <= 0 || at == len(s)-1 {
		return false
	}
	local, domain := s[:at], s[at+1:]
	if !dotRuns(local, isAtext) || !dotRuns(domain, isLabelByte) || !strings.Contains(domain, ".") {
		return false
	}
	for label := range strings.SplitSeq(domain, ".") {
		if label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
	}
	tld := domain[strings.LastIndexByte(domain, '.')+1:]
	return isLetter(tld[0]) && isLetter(tld[len(tld)-1])
}

// dotRuns reports whether s is one or more non-empty runs of ok bytes
// separated by single dots.
func dotRuns(s string, ok func(byte) bool) bool {
	run := 0
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '.':
			if run == 0 {
				return false
			}
			run = 0
		case ok(s[i]):
			run++
		default:
			return false
		}
	}
	return run > 0
}

func isLetter(b byte) bool { return (b|0x20) >= 'a' && (b|0x20) <= 'z' }

func isDigit(b byte) bool { return b >= '0' && b <= '9' }

func isLabelByte(b byte) bool { return isLetter(b) || isDigit(b) || b == '-' }

// isAtext is an RFC 5322 atext byte of ASCII.
func isAtext(b byte) bool {
	return isLetter(b) || isDigit(b) || strings.IndexByte("!#$%&'*+-/=?^_`{|}~", b) >= 0
}
