package transfer

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/contactbook/contactbook/internal/apperr"
	"github.com/contactbook/contactbook/internal/contacts"
	"github.com/contactbook/contactbook/internal/enum"
	"github.com/contactbook/contactbook/internal/validate"
)

// target is where a column's values go.
type target struct {
	kind  string // a scalar field, or emails, phones, addresses, socials, dates, labels, custom, ignore, full_name
	label string // the entry's label (emails.work), the custom key, the date label
	part  string // the address part: street, city, state, zip, country; of a numbered entry, one of entryParts
	// num is the number of a numbered entry (emails.2.address: the
	// second email), whose label is a column of its own; 0 for others.
	num int
	// labelColumn, for the numbered columns of Google Contacts ("E-mail 1
	// - Value"), is the column holding the entry's label ("E-mail 1 -
	// Label"), or -1.
	labelColumn int
}

// scalarTargets are the contact's own text fields, and starred.
var scalarTargets = map[string]bool{
	"first_name": true, "last_name": true, "company": true, "job_title": true, "notes": true,
	"website": true, "time_zone": true, "birthday": true, "starred": true, "labels": true, "ignore": true,
	// full_name is split into first and last name (a "Name" column).
	"full_name": true,
}

// String writes t as a mapping target, as a mapping sends it back.
func (t target) String() string {
	switch {
	case t.num > 0:
		return t.kind + "." + strconv.Itoa(t.num) + "." + t.part
	case t.kind == "addresses":
		return t.kind + "." + t.label + "." + t.part
	case t.label != "":
		return t.kind + "." + t.label
	default:
		return t.kind
	}
}

var (
	emailLabels   = enum.Strings(contacts.EmailLabels)
	phoneLabels   = enum.Strings(contacts.PhoneLabels)
	addressLabels = enum.Strings(contacts.AddressLabels)
	addressParts  = []string{"street", "city", "state", "zip", "country"}
	socialLabels  = enum.Strings(contacts.SocialLabels)
	entryNumber   = regexp.MustCompile(`^[1-9][0-9]?$`)
)

// entryParts are the columns of a numbered entry of each kind, as this
// service's export writes them: emails.1.address, emails.1.label,
// emails.1.primary, addresses.2.city, dates.1.value.
var entryParts = map[string][]string{
	"emails":    {"address", "label", "primary"},
	"phones":    {"number", "label", "primary"},
	"addresses": {"label", "street", "city", "state", "zip", "country"},
	"socials":   {"label", "value"},
	"dates":     {"label", "value"},
}

// fieldKeys are the custom field keys a file's columns may name: the
// book's, or any key when the import creates the fields the book lacks.
type fieldKeys struct {
	book map[string]bool
	any  bool
}

func (k fieldKeys) allow(key string) bool {
	return k.any || k.book[key]
}

func oneOf(v string, set []string) bool {
	for _, s := range set {
		if s == v {
			return true
		}
	}
	return false
}

// parseTarget reads a mapping target; ok is false when it names nothing
// the import knows.
func parseTarget(s string) (target, bool) {
	t := target{labelColumn: -1}
	if scalarTargets[s] {
		t.kind = s
		return t, true
	}
	kind, rest, _ := strings.Cut(s, ".")
	t.kind = kind
	// A numbered entry: its number, then the part. A date label that is a
	// number followed by a part ("1.value") reads as such an entry.
	if num, part, ok := strings.Cut(rest, "."); ok && entryNumber.MatchString(num) && oneOf(part, entryParts[kind]) {
		t.num, _ = strconv.Atoi(num)
		t.part = part
		return t, true
	}
	switch kind {
	case "emails":
		t.label = rest
		return t, oneOf(rest, emailLabels)
	case "phones":
		t.label = rest
		return t, oneOf(rest, phoneLabels)
	case "addresses":
		t.label, t.part, _ = strings.Cut(rest, ".")
		return t, oneOf(t.label, addressLabels) && oneOf(t.part, addressParts)
	case "socials":
		t.label = rest
		return t, oneOf(rest, socialLabels)
	case "dates":
		t.label = strings.TrimSpace(rest)
		return t, t.label != "" && len(t.label) <= 100
	case "custom":
		t.label = rest
		return t, validate.FieldKey(rest)
	}
	return t, false
}

// knownColumns maps the column names of common exports (normalised by
// normalizeHeader) to targets: Google Contacts, Outlook, Mailchimp.
var knownColumns = map[string]string{
	// Names.
	"first name": "first_name", "given name": "first_name", "firstname": "first_name", "fname": "first_name",
	"last name": "last_name", "family name": "last_name", "surname": "last_name", "lastname": "last_name", "lname": "last_name",
	"name": "full_name", "full name": "full_name", "display name": "full_name",
	// Work.
	"company": "company", "organization": "company", "organization name": "company", "organization 1 name": "company",
	"job title": "job_title", "title": "job_title", "organization title": "job_title", "organization 1 title": "job_title",
	// Emails.
	"email": "emails.other", "email address": "emails.other", "e mail": "emails.other", "e mail address": "emails.other",
	"e mail 2 address": "emails.other", "e mail 3 address": "emails.other",
	"work email": "emails.work", "business email": "emails.work", "personal email": "emails.personal", "home email": "emails.personal",
	// Phones.
	"phone": "phones.other", "phone number": "phones.other", "mobile phone": "phones.mobile", "mobile": "phones.mobile",
	"cell phone": "phones.mobile", "business phone": "phones.work", "work phone": "phones.work", "home phone": "phones.other",
	"primary phone": "phones.other", "other phone": "phones.other", "business phone 2": "phones.work",
	// Addresses (Outlook).
	"business street": "addresses.work.street", "business city": "addresses.work.city", "business state": "addresses.work.state",
	"business postal code": "addresses.work.zip", "business country/region": "addresses.work.country", "business country": "addresses.work.country",
	"home street": "addresses.home.street", "home city": "addresses.home.city", "home state": "addresses.home.state",
	"home postal code": "addresses.home.zip", "home country/region": "addresses.home.country", "home country": "addresses.home.country",
	"other street": "addresses.other.street", "other city": "addresses.other.city", "other state": "addresses.other.state",
	"other postal code": "addresses.other.zip", "other country/region": "addresses.other.country",
	// Mailchimp's address is one text.
	"address": "addresses.other.street", "street": "addresses.other.street", "city": "addresses.other.city",
	"state": "addresses.other.state", "zip": "addresses.other.zip", "postal code": "addresses.other.zip", "country": "addresses.other.country",
	// The rest.
	"time_zone": "time_zone", "time zone": "time_zone", "timezone": "time_zone",
	"web page": "website", "website": "website", "url": "website", "website 1 value": "website",
	"birthday": "birthday", "notes": "notes", "note": "notes",
	"labels": "labels", "categories": "labels", "tags": "labels", "group membership": "labels",
	"starred":  "starred",
	"linkedin": "socials.linkedin", "twitter": "socials.x", "x": "socials.x", "instagram": "socials.instagram",
	"facebook": "socials.facebook", "github": "socials.github", "youtube": "socials.youtube",
	"anniversary": "dates.anniversary",
}

// googleNumbered is a numbered column of Google Contacts: "E-mail 1 -
// Value", "Phone 2 - Value", "Address 1 - Street".
var googleNumbered = regexp.MustCompile(`^(e mail|phone|address) (\d+) (value|label|type|street|city|region|postal code|country|formatted)$`)

// normalizeHeader folds a column name for lookup: lower case, dashes,
// underscores and runs of spaces as one space.
func normalizeHeader(h string) string {
	h = strings.ToLower(strings.TrimSpace(h))
	h = strings.NewReplacer("-", " ", "_", " ").Replace(h)
	return strings.Join(strings.Fields(h), " ")
}

// mapColumns resolves every column of the header: by the explicit mapping
// (header -> target) when one is given, else by name. It answers 400 for
// a mapping naming a column the file lacks or a target that does not
// exist, a custom key keys does not allow, or a file none of whose
// columns names a contact field.
func mapColumns(header []string, mapping map[string]string, keys fieldKeys) ([]target, error) {
	out := make([]target, len(header))
	if len(mapping) > 0 {
		index := map[string]int{}
		for i, h := range header {
			if _, dup := index[strings.TrimSpace(h)]; !dup {
				index[strings.TrimSpace(h)] = i
			}
			out[i] = target{kind: "ignore", labelColumn: -1}
		}
		for col, to := range mapping {
			i, ok := index[strings.TrimSpace(col)]
			if !ok {
				return nil, apperr.Invalidf("The mapping names the column %q, which the file's header does not have.", col)
			}
			t, ok := parseTarget(strings.TrimSpace(to))
			if !ok {
				return nil, apperr.Invalidf("The mapping sends %q to %q, which is not a field; use one of first_name, last_name, company, job_title, notes, website, time_zone, birthday, starred, emails.<work|personal|other>, phones.<mobile|work|other>, addresses.<home|work|other>.<street|city|state|zip|country>, socials.<label>, dates.<label>, a numbered entry (emails.<n>.<address|label|primary>, phones.<n>.<number|label|primary>, addresses.<n>.<label|street|city|state|zip|country>, socials.<n>.<label|value>, dates.<n>.<label|value>), labels, custom.<key>, ignore.", col, to)
			}
			if t.kind == "custom" && !keys.allow(t.label) {
				return nil, apperr.Invalidf("The mapping sends %q to custom.%s, but the book has no custom field with the key %q; create it first or import with create_labels=true.", col, t.label, t.label)
			}
			out[i] = t
		}
	} else {
		norm := make(map[string]int, len(header))
		for i, h := range header {
			norm[normalizeHeader(h)] = i
		}
		for i, h := range header {
			out[i] = autoTarget(h, norm)
			if out[i].kind == "custom" && !keys.allow(out[i].label) {
				return nil, apperr.Invalidf("The column %q names the custom field %q, which the book does not have; create it first, import with create_labels=true, or map the column to ignore.", h, out[i].label)
			}
		}
	}
	for _, t := range out {
		switch {
		case t.kind == "first_name", t.kind == "last_name", t.kind == "company", t.kind == "full_name",
			t.kind == "emails" && (t.num == 0 || t.part == "address"):
			return out, nil
		}
	}
	return nil, apperr.Invalidf("No column of the file maps to a name, company or email; check the header row or send a mapping.")
}

// autoTarget maps a column by its name; norm indexes the header by
// normalised name (to find a Google entry's label column).
func autoTarget(h string, norm map[string]int) target {
	raw := strings.ToLower(strings.TrimSpace(h))
	if t, ok := parseTarget(raw); ok {
		return t // this service's own export, or a header named as a target
	}
	n := normalizeHeader(h)
	if m := googleNumbered.FindStringSubmatch(n); m != nil {
		kind, num, part := m[1], m[2], m[3]
		t := target{labelColumn: -1}
		if i, ok := norm[kind+" "+num+" label"]; ok {
			t.labelColumn = i
		} else if i, ok := norm[kind+" "+num+" type"]; ok {
			t.labelColumn = i
		}
		switch {
		case kind == "e mail" && part == "value":
			t.kind, t.label = "emails", "other"
		case kind == "phone" && part == "value":
			t.kind, t.label = "phones", "other"
		case kind == "address":
			parts := map[string]string{"street": "street", "city": "city", "region": "state", "postal code": "zip", "country": "country"}
			if p, ok := parts[part]; ok {
				t.kind, t.label, t.part = "addresses", "other", p
			} else {
				t.kind = "ignore"
			}
		default:
			t.kind = "ignore"
		}
		return t
	}
	if to, ok := knownColumns[n]; ok {
		if to == "full_name" {
			return target{kind: "full_name", labelColumn: -1}
		}
		t, _ := parseTarget(to)
		return t
	}
	return target{kind: "ignore", labelColumn: -1}
}

// entryLabel turns the label of an entry written in a column of its own
// (by this service's export, or another tool's: "* Work", "Mobile",
// "Home") into one the kind allows. A date's label is free text, kept as
// written.
func entryLabel(kind, written string) string {
	if kind == "dates" {
		return strings.TrimSpace(written)
	}
	w := strings.ToLower(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(written), "*")))
	switch kind {
	case "socials":
		if w == "twitter" {
			return "x"
		}
		if oneOf(w, socialLabels) {
			return w
		}
	case "emails":
		switch {
		case strings.Contains(w, "work"):
			return "work"
		case strings.Contains(w, "home"), strings.Contains(w, "personal"):
			return "personal"
		}
	case "phones":
		switch {
		case strings.Contains(w, "mobile"), strings.Contains(w, "cell"):
			return "mobile"
		case strings.Contains(w, "work"):
			return "work"
		}
	case "addresses":
		switch {
		case strings.Contains(w, "work"):
			return "work"
		case strings.Contains(w, "home"):
			return "home"
		}
	}
	return "other"
}

// columnName names a column in row errors: its header.
func columnName(header []string, i int) string {
	if i < len(header) {
		return header[i]
	}
	return fmt.Sprintf("column %d", i+1)
}
