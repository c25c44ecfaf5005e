// Package vcards is the one mapping between contacts and vCards, shared by
// the vCard import and export and by the CardDAV server: which property
// fills which field (Decode), how a contact is written (Encode), how a
// card a client sent keeps what the service has no field for (Merge), and
// the vCard 3.0 and 4.0 forms of a card (ForVersion).
package vcards

import (
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/emersion/go-vcard"

	"github.com/contactbook/contactbook/internal/contacts"
)

// Properties of this service's own vCards beyond the standard ones, so an
// export imports back whole.
const (
	PropStarred = "X-CONTACTBOOK-STARRED"
	PropCustom  = "X-CONTACTBOOK-CUSTOM" // ;KEY=<key>
	PropDate    = "X-CONTACTBOOK-DATE"   // ;LABEL=<label>
	PropSocial  = "X-SOCIALPROFILE"      // ;TYPE=<network>, as Apple and others write it
	paramKey    = "KEY"
	paramLabel  = "LABEL"
)

// customValueTypes are the vCard value types (VALUE) a custom field's
// value is written with, by field type; text, the default, is not
// written. An import creating the field gives it the type back.
var customValueTypes = map[string]string{"url": "uri", "number": "float", "date": "date"}

// fieldTypeOf is the custom field type a vCard value type stands for.
func fieldTypeOf(valueType string) string {
	switch strings.ToLower(valueType) {
	case "uri":
		return "url"
	case "float", "integer":
		return "number"
	case "date":
		return "date"
	}
	return "text"
}

// utcOffset is a TZ value of vCard 3.0's default type, an offset from
// UTC ("-05:00"), which names no zone.
var utcOffset = regexp.MustCompile(`^[+-]\d{2}(:?\d{2})?$`)

// Problem is a value of a card the mapping could not take, named by its
// property.
type Problem struct {
	Property string
	Message  string
}

// Decoded is what a card says: the contact (only the fields it fills),
// its label names and custom values, the type a custom value's VALUE
// names, which property each field came from (to name it in an error),
// and the first value that could not be read.
type Decoded struct {
	Contact    contacts.Contact
	Labels     []string
	Custom     map[string]string
	FieldTypes map[string]string
	// Columns maps a contact field ("emails", "first_name", "custom.tier",
	// "labels") to the vCard property it was read from.
	Columns map[string]string
	Problem *Problem
}

// Decode reads a card. validZone tells an IANA time zone name (TZ); a
// name it refuses is a problem.
func Decode(card vcard.Card, validZone func(string) bool) Decoded {
	out := Decoded{Columns: map[string]string{}, Custom: map[string]string{}}
	c := &out.Contact
	problem := func(prop, msg string) {
		if out.Problem == nil {
			out.Problem = &Problem{Property: prop, Message: msg}
		}
	}
	for field, prop := range map[string]string{"first_name": "N", "last_name": "N", "company": "ORG", "job_title": "TITLE",
		"notes": "NOTE", "website": "URL", "time_zone": "TZ", "birthday": "BDAY", "emails": "EMAIL", "phones": "TEL", "addresses": "ADR",
		"socials": PropSocial, "dates": PropDate, "labels": "CATEGORIES"} {
		out.Columns[field] = prop
	}
	var fnUsed bool
	c.FirstName, c.LastName, fnUsed = names(card)
	if fnUsed {
		out.Columns["first_name"], out.Columns["last_name"] = "FN", "FN"
	}
	c.Company = company(card)
	c.JobTitle = strings.TrimSpace(card.Value(vcard.FieldTitle))
	c.Notes = note(card)
	c.Website = strings.TrimSpace(card.Value(vcard.FieldURL))
	if b := strings.TrimSpace(card.Value(vcard.FieldBirthday)); b != "" {
		if d, ok := ParseDate(b); ok && d != "" {
			c.Birthday = &d
		} else {
			problem("BDAY", "The birthday "+b+" is not a full date (YYYY-MM-DD).")
		}
	}
	// TZ as text, the IANA name this service writes; an offset from UTC
	// (vCard 3.0's default type) or a URI names no zone and is left out.
	if tz := card.Get(vcard.FieldTimezone); tz != nil {
		v := strings.TrimSpace(tz.Value)
		vt := strings.ToLower(tz.Params.Get(vcard.ParamValue))
		switch {
		case v == "" || (vt != "" && vt != "text") || utcOffset.MatchString(v):
		case validZone(v):
			c.TimeZone = &v
		default:
			problem("TZ", "\""+v+"\" is not an IANA time zone name such as Europe/Berlin.")
		}
	}
	for _, e := range card[vcard.FieldEmail] {
		c.Emails = append(c.Emails, email(e))
	}
	onePrimaryEmail(c.Emails)
	for _, t := range card[vcard.FieldTelephone] {
		c.Phones = append(c.Phones, phone(t))
	}
	onePrimaryPhone(c.Phones)
	for _, f := range card[vcard.FieldAddress] {
		c.Addresses = append(c.Addresses, address(f))
	}
	for _, s := range card[PropSocial] {
		c.Socials = append(c.Socials, social(s))
	}
	for _, name := range []string{vcard.FieldAnniversary, PropDate} {
		for _, f := range card[name] {
			if d, ok := date(name, f); ok {
				c.Dates = append(c.Dates, d)
			} else {
				problem(PropDate, "The date "+f.Value+" is not a full date (YYYY-MM-DD).")
			}
		}
	}
	if v := card.Value(PropStarred); v != "" {
		c.Starred, _ = ParseBool(v)
	}
	for _, x := range card[PropCustom] {
		if k := x.Params.Get(paramKey); k != "" {
			out.Custom[k] = x.Value
			out.Columns["custom."+k] = PropCustom
			if vt := x.Params.Get(vcard.ParamValue); vt != "" {
				if out.FieldTypes == nil {
					out.FieldTypes = map[string]string{}
				}
				out.FieldTypes[k] = fieldTypeOf(vt)
			}
		}
	}
	out.Labels = categories(card)
	return out
}

// names reads the person's first and last name: N, else FN split at its
// last space. FN names a person unless it is the organisation's name (a
// company card: KIND:org, or FN equal to ORG). fromFN tells the names
// came from FN.
func names(card vcard.Card) (first, last string, fromFN bool) {
	if n := card.Name(); n != nil {
		first, last = strings.TrimSpace(n.GivenName), strings.TrimSpace(n.FamilyName)
	}
	org := strings.TrimSpace(strings.TrimRight(card.Value(vcard.FieldOrganization), ";"))
	isOrg := strings.EqualFold(card.Value(vcard.FieldKind), "org")
	if fn := strings.TrimSpace(card.Value(vcard.FieldFormattedName)); first == "" && last == "" && !isOrg && fn != org && fn != "" {
		if i := strings.LastIndexByte(fn, ' '); i > 0 {
			return strings.TrimSpace(fn[:i]), strings.TrimSpace(fn[i+1:]), true
		}
		return fn, "", true
	}
	return first, last, false
}

// company reads ORG whole ("Company;Department" stays so): this service
// writes a company holding ";" as it is, and cutting at the first
// component would lose it. Empty trailing components (Apple's "Acme;")
// go.
func company(card vcard.Card) string {
	return strings.TrimSpace(strings.ReplaceAll(strings.TrimRight(card.Value(vcard.FieldOrganization), ";"), `\;`, ";"))
}

// note is kept as written: its spaces and line breaks are the note's. A
// blank one is none.
func note(card vcard.Card) string {
	if n := card.Value(vcard.FieldNote); strings.TrimSpace(n) != "" {
		return n
	}
	return ""
}

func email(f *vcard.Field) contacts.Email {
	return contacts.Email{Address: strings.TrimSpace(f.Value), Label: contacts.EmailLabel(typeLabel(f, "emails")), Primary: preferred(f)}
}

func phone(f *vcard.Field) contacts.Phone {
	return contacts.Phone{Number: strings.TrimPrefix(strings.TrimSpace(f.Value), "tel:"), Label: contacts.PhoneLabel(typeLabel(f, "phones")), Primary: preferred(f)}
}

func address(f *vcard.Field) contacts.Address {
	a := vcard.Card{vcard.FieldAddress: {f}}.Address()
	return contacts.Address{Label: contacts.AddressLabel(typeLabel(f, "addresses")),
		Street: strings.TrimSpace(a.StreetAddress), City: strings.TrimSpace(a.Locality), State: strings.TrimSpace(a.Region),
		Zip: strings.TrimSpace(a.PostalCode), Country: strings.TrimSpace(a.Country)}
}

func social(f *vcard.Field) contacts.Social {
	label := strings.ToLower(f.Params.Get(vcard.ParamType))
	if label == "twitter" {
		label = "x"
	}
	l, err := contacts.ParseSocialLabel(label)
	if err != nil {
		l = "other"
	}
	return contacts.Social{Label: l, Value: strings.TrimSpace(f.Value)}
}

// date reads an ANNIVERSARY or this service's labelled date.
func date(prop string, f *vcard.Field) (contacts.Date, bool) {
	label := "anniversary"
	if prop == PropDate {
		label = f.Params.Get(paramLabel)
	}
	d, ok := ParseDate(strings.TrimSpace(f.Value))
	return contacts.Date{Label: label, Value: d}, ok && d != ""
}

func categories(card vcard.Card) []string {
	var out []string
	if card.Value(vcard.FieldCategories) == "" {
		return nil
	}
	for _, l := range card.Categories() {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// preferred tells a PREF entry (vCard 4.0 PREF=1, vCard 3.0 TYPE=pref).
func preferred(f *vcard.Field) bool {
	return f.Params.Get(vcard.ParamPreferred) != "" || f.Params.HasType("pref")
}

func onePrimaryEmail(es []contacts.Email) {
	seen := false
	for i := range es {
		es[i].Primary, seen = es[i].Primary && !seen, seen || es[i].Primary
	}
}

func onePrimaryPhone(ps []contacts.Phone) {
	seen := false
	for i := range ps {
		ps[i].Primary, seen = ps[i].Primary && !seen, seen || ps[i].Primary
	}
}

// typeLabel reads an entry's TYPE into this service's label.
func typeLabel(f *vcard.Field, kind string) string {
	types := strings.ToLower(strings.Join(f.Params.Types(), ","))
	switch {
	case kind == "phones" && strings.Contains(types, "cell"):
		return "mobile"
	case strings.Contains(types, "work"):
		return "work"
	case kind == "emails" && (strings.Contains(types, "home") || strings.Contains(types, "personal")):
		return "personal"
	case kind == "addresses" && strings.Contains(types, "home"):
		return "home"
	}
	return "other"
}

// vcardTypes is the TYPE this service writes for a label.
var vcardTypes = map[string]string{"work": "work", "personal": "home", "home": "home", "mobile": "cell"}

// Encode writes a contact as a vCard 4.0; types are the book's custom
// field types, by key.
func Encode(c contacts.Contact, types map[string]string) vcard.Card {
	card := vcard.Card{}
	card.SetValue(vcard.FieldVersion, "4.0")
	card.SetValue(vcard.FieldFormattedName, c.DisplayName())
	if c.FirstName == "" && c.LastName == "" {
		card.SetValue(vcard.FieldKind, "org")
	}
	card.SetName(&vcard.Name{FamilyName: c.LastName, GivenName: c.FirstName})
	set := func(k, v string) {
		if v != "" {
			card.SetValue(k, v)
		}
	}
	set(vcard.FieldOrganization, c.Company)
	set(vcard.FieldTitle, c.JobTitle)
	set(vcard.FieldNote, c.Notes)
	set(vcard.FieldURL, c.Website)
	if c.Birthday != nil {
		set(vcard.FieldBirthday, *c.Birthday)
	}
	if c.TimeZone != nil {
		set(vcard.FieldTimezone, *c.TimeZone)
	}
	for _, e := range c.Emails {
		card.Add(vcard.FieldEmail, emailField(e))
	}
	for _, p := range c.Phones {
		card.Add(vcard.FieldTelephone, phoneField(p))
	}
	for _, a := range c.Addresses {
		card.Add(vcard.FieldAddress, addressField(a))
	}
	for _, s := range c.Socials {
		card.Add(PropSocial, socialField(s))
	}
	for _, d := range c.Dates {
		card.Add(PropDate, dateField(d))
	}
	if c.Starred {
		card.SetValue(PropStarred, "true")
	}
	for _, k := range sortedKeys(c.CustomFields) {
		card.Add(PropCustom, customField(k, c.CustomFields[k], types[k]))
	}
	if names := labelNames(c); len(names) > 0 {
		card.SetCategories(names)
	}
	return card
}

func entry(value, label string, primary bool) *vcard.Field {
	f := &vcard.Field{Value: value, Params: vcard.Params{}}
	if t, ok := vcardTypes[label]; ok {
		f.Params.Set(vcard.ParamType, t)
	}
	if primary {
		f.Params.Set(vcard.ParamPreferred, "1")
	}
	return f
}

func emailField(e contacts.Email) *vcard.Field { return entry(e.Address, string(e.Label), e.Primary) }
func phoneField(p contacts.Phone) *vcard.Field { return entry(p.Number, string(p.Label), p.Primary) }

func addressField(a contacts.Address) *vcard.Field {
	f := entry("", string(a.Label), false)
	f.Value = strings.Join([]string{"", "", a.Street, a.City, a.State, a.Zip, a.Country}, ";")
	return f
}

func socialField(s contacts.Social) *vcard.Field {
	return &vcard.Field{Value: s.Value, Params: vcard.Params{vcard.ParamType: {string(s.Label)}}}
}

func dateField(d contacts.Date) *vcard.Field {
	return &vcard.Field{Value: d.Value, Params: vcard.Params{paramLabel: {d.Label}}}
}

func customField(key, value, fieldType string) *vcard.Field {
	params := vcard.Params{paramKey: {key}}
	if vt, ok := customValueTypes[fieldType]; ok {
		params[vcard.ParamValue] = []string{vt}
	}
	return &vcard.Field{Value: value, Params: params}
}

func labelNames(c contacts.Contact) []string {
	names := make([]string, len(c.Labels))
	for i, l := range c.Labels {
		names[i] = l.Name
	}
	return names
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// dateLayouts are the date forms exports write: ISO, then the US form of
// Outlook and Google, and vCard's basic form.
var dateLayouts = []string{time.DateOnly, "2006/01/02", "20060102", "1/2/2006", "01/02/2006"}

// ParseDate reads a date as contact files write it into YYYY-MM-DD; ""
// with ok for Outlook's "0/0/00" (no date).
func ParseDate(v string) (string, bool) {
	if v == "0/0/00" || v == "0/0/0000" {
		return "", true
	}
	for _, l := range dateLayouts {
		if t, err := time.Parse(l, v); err == nil {
			return t.Format(time.DateOnly), true
		}
	}
	return "", false
}

// ParseBool reads a yes or no as contact files write it.
func ParseBool(v string) (bool, bool) {
	switch strings.ToLower(v) {
	case "true", "yes", "y", "1", "x", "starred":
		return true, true
	case "false", "no", "n", "0":
		return false, true
	}
	return false, false
}
