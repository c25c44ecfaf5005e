package transfer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/emersion/go-vcard"

	"github.com/contactbook/contactbook/internal/apperr"
	"github.com/contactbook/contactbook/internal/contacts"
)

// Properties of this service's own vCards beyond the standard ones, so an
// export imports back whole.
const (
	propStarred = "X-CONTACTBOOK-STARRED"
	propCustom  = "X-CONTACTBOOK-CUSTOM" // ;KEY=<key>
	propDate    = "X-CONTACTBOOK-DATE"   // ;LABEL=<label>
	propSocial  = "X-SOCIALPROFILE"      // ;TYPE=<network>, as Apple and others write it
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

// vcardFile reads the cards of a vCard file one at a time.
type vcardFile struct {
	dec    *vcard.Decoder
	record int
	zones  zoneNames
}

func openVCard(text io.Reader) *vcardFile {
	return &vcardFile{dec: vcard.NewDecoder(text)}
}

// next reads the next card; io.EOF after the last.
func (f *vcardFile) next() (vcard.Card, error) {
	card, err := f.dec.Decode()
	if errors.Is(err, io.EOF) {
		return nil, io.EOF
	}
	f.record++
	if errors.Is(err, errFileGone) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return nil, err // the stream under the decoder failed, not the card
	}
	if err != nil {
		return nil, apperr.Invalidf("Card %d cannot be read: %s; every card runs from BEGIN:VCARD to END:VCARD.", f.record, strings.TrimPrefix(err.Error(), "vcard: "))
	}
	return card, nil
}

// row turns a card into an import row; the row number is the card's.
func (f *vcardFile) row(card vcard.Card) ImportRow {
	out := ImportRow{Row: f.record, Columns: map[string]string{}, Custom: map[string]string{}}
	c := &out.Contact
	for field, prop := range map[string]string{"first_name": "N", "last_name": "N", "company": "ORG", "job_title": "TITLE",
		"notes": "NOTE", "website": "URL", "time_zone": "TZ", "birthday": "BDAY", "emails": "EMAIL", "phones": "TEL", "addresses": "ADR",
		"socials": propSocial, "dates": propDate, "labels": "CATEGORIES"} {
		out.Columns[field] = prop
	}
	if n := card.Name(); n != nil {
		c.FirstName, c.LastName = strings.TrimSpace(n.GivenName), strings.TrimSpace(n.FamilyName)
	}
	// FN names a person unless it is the organisation's name (a company
	// card: KIND:org, or FN equal to ORG).
	org := strings.TrimSpace(strings.TrimRight(card.Value(vcard.FieldOrganization), ";"))
	isOrg := strings.EqualFold(card.Value(vcard.FieldKind), "org")
	if fn := strings.TrimSpace(card.Value(vcard.FieldFormattedName)); c.FirstName == "" && c.LastName == "" && !isOrg && fn != org {
		if fn != "" {
			out.Columns["first_name"], out.Columns["last_name"] = "FN", "FN"
			if i := strings.LastIndexByte(fn, ' '); i > 0 {
				c.FirstName, c.LastName = strings.TrimSpace(fn[:i]), strings.TrimSpace(fn[i+1:])
			} else {
				c.FirstName = fn
			}
		}
	}
	// ORG is kept whole ("Company;Department" stays so): this service
	// writes a company holding ";" as it is, and cutting at the first
	// component would lose it. Empty trailing components (Apple's "Acme;")
	// go.
	c.Company = strings.TrimSpace(strings.ReplaceAll(strings.TrimRight(card.Value(vcard.FieldOrganization), ";"), `\;`, ";"))
	c.JobTitle = strings.TrimSpace(card.Value(vcard.FieldTitle))
	// The note is kept as written: its spaces and line breaks are the
	// note's. A blank one is none.
	if n := card.Value(vcard.FieldNote); strings.TrimSpace(n) != "" {
		c.Notes = n
	}
	c.Website = strings.TrimSpace(card.Value(vcard.FieldURL))
	if b := strings.TrimSpace(card.Value(vcard.FieldBirthday)); b != "" {
		if d, ok := parseDate(b); ok && d != "" {
			c.Birthday = &d
		} else {
			out.Problem = &RowError{Row: f.record, Column: "BDAY", Message: "The birthday " + b + " is not a full date (YYYY-MM-DD)."}
		}
	}
	// TZ as text, the IANA name this service writes; an offset from UTC
	// (vCard 3.0's default type) or a URI names no zone and is left out.
	if tz := card.Get(vcard.FieldTimezone); tz != nil {
		v := strings.TrimSpace(tz.Value)
		vt := strings.ToLower(tz.Params.Get(vcard.ParamValue))
		switch {
		case v == "" || (vt != "" && vt != "text") || utcOffset.MatchString(v):
		case f.zones.valid(v):
			c.TimeZone = &v
		case out.Problem == nil:
			out.Problem = &RowError{Row: f.record, Column: "TZ", Message: fmt.Sprintf("%q is not an IANA time zone name such as Europe/Berlin.", v)}
		}
	}
	for _, e := range card[vcard.FieldEmail] {
		c.Emails = append(c.Emails, contacts.Email{Address: strings.TrimSpace(e.Value), Label: contacts.EmailLabel(typeLabel(e, "emails")), Primary: preferred(e)})
	}
	onePrimaryEmail(c.Emails)
	for _, t := range card[vcard.FieldTelephone] {
		c.Phones = append(c.Phones, contacts.Phone{Number: strings.TrimPrefix(strings.TrimSpace(t.Value), "tel:"), Label: contacts.PhoneLabel(typeLabel(t, "phones")), Primary: preferred(t)})
	}
	onePrimaryPhone(c.Phones)
	for _, f := range card[vcard.FieldAddress] {
		a := vcard.Card{vcard.FieldAddress: {f}}.Address()
		c.Addresses = append(c.Addresses, contacts.Address{Label: contacts.AddressLabel(typeLabel(f, "addresses")),
			Street: strings.TrimSpace(a.StreetAddress), City: strings.TrimSpace(a.Locality), State: strings.TrimSpace(a.Region),
			Zip: strings.TrimSpace(a.PostalCode), Country: strings.TrimSpace(a.Country)})
	}
	for _, s := range card[propSocial] {
		label := strings.ToLower(s.Params.Get(vcard.ParamType))
		if label == "twitter" {
			label = "x"
		}
		if !oneOf(label, socialLabels) {
			label = "other"
		}
		c.Socials = append(c.Socials, contacts.Social{Label: contacts.SocialLabel(label), Value: strings.TrimSpace(s.Value)})
	}
	addDate := func(label, v string) {
		if d, ok := parseDate(strings.TrimSpace(v)); ok && d != "" {
			c.Dates = append(c.Dates, contacts.Date{Label: label, Value: d})
		} else if out.Problem == nil {
			out.Problem = &RowError{Row: f.record, Column: propDate, Message: "The date " + v + " is not a full date (YYYY-MM-DD)."}
		}
	}
	for _, a := range card[vcard.FieldAnniversary] {
		addDate("anniversary", a.Value)
	}
	for _, d := range card[propDate] {
		addDate(d.Params.Get(paramLabel), d.Value)
	}
	if v := card.Value(propStarred); v != "" {
		c.Starred, _ = parseBool(v)
	}
	for _, x := range card[propCustom] {
		if k := x.Params.Get(paramKey); k != "" {
			out.Custom[k] = x.Value
			out.Columns["custom."+k] = propCustom
			if vt := x.Params.Get(vcard.ParamValue); vt != "" {
				if out.FieldTypes == nil {
					out.FieldTypes = map[string]string{}
				}
				out.FieldTypes[k] = fieldTypeOf(vt)
			}
		}
	}
	if card.Value(vcard.FieldCategories) != "" {
		for _, l := range card.Categories() {
			if l = strings.TrimSpace(l); l != "" {
				out.Labels = append(out.Labels, l)
			}
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

// contactCard is a contact as a vCard 4.0; types are the book's custom
// field types, by key.
func contactCard(c contacts.Contact, types map[string]string) vcard.Card {
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
	entry := func(value, label string, primary bool) *vcard.Field {
		f := &vcard.Field{Value: value, Params: vcard.Params{}}
		if t, ok := vcardTypes[label]; ok {
			f.Params.Set(vcard.ParamType, t)
		}
		if primary {
			f.Params.Set(vcard.ParamPreferred, "1")
		}
		return f
	}
	for _, e := range c.Emails {
		card.Add(vcard.FieldEmail, entry(e.Address, string(e.Label), e.Primary))
	}
	for _, p := range c.Phones {
		card.Add(vcard.FieldTelephone, entry(p.Number, string(p.Label), p.Primary))
	}
	for _, a := range c.Addresses {
		f := entry("", string(a.Label), false)
		f.Value = strings.Join([]string{"", "", a.Street, a.City, a.State, a.Zip, a.Country}, ";")
		card.Add(vcard.FieldAddress, f)
	}
	for _, s := range c.Socials {
		card.Add(propSocial, &vcard.Field{Value: s.Value, Params: vcard.Params{vcard.ParamType: {string(s.Label)}}})
	}
	for _, d := range c.Dates {
		card.Add(propDate, &vcard.Field{Value: d.Value, Params: vcard.Params{paramLabel: {d.Label}}})
	}
	if c.Starred {
		card.SetValue(propStarred, "true")
	}
	for k, v := range c.CustomFields {
		params := vcard.Params{paramKey: {k}}
		if vt, ok := customValueTypes[types[k]]; ok {
			params[vcard.ParamValue] = []string{vt}
		}
		card.Add(propCustom, &vcard.Field{Value: v, Params: params})
	}
	if len(c.Labels) > 0 {
		names := make([]string, len(c.Labels))
		for i, l := range c.Labels {
			names[i] = l.Name
		}
		card.SetCategories(names)
	}
	return card
}
