package vcards

import (
	"slices"
	"strings"

	"github.com/emersion/go-vcard"

	"github.com/contactbook/contactbook/internal/contacts"
)

// regenerated are the properties a card is always given afresh: its
// version, product and revision are the server's to say.
var regenerated = map[string]bool{vcard.FieldVersion: true, vcard.FieldProductID: true, vcard.FieldRevision: true}

// Merge is the contact's card when a client sent one before (stored):
// every property the mapping has no field for comes back as the client
// sent it (parameters and groups included), and so does every mapped
// property that still says what the contact holds; what changed since
// (through the API, the dashboard, an import) is written as Encode
// writes it. Without a stored card it is Encode's. UID is the caller's
// to set.
func Merge(stored vcard.Card, c contacts.Contact, types map[string]string) vcard.Card {
	fresh := Encode(c, types)
	if len(stored) == 0 {
		return fresh
	}
	was := Decode(stored, func(string) bool { return true })
	w := was.Contact
	out := vcard.Card{vcard.FieldVersion: fresh[vcard.FieldVersion]}
	for name, fields := range stored {
		if !mapped[name] && !regenerated[name] {
			out[name] = fields
		}
	}
	// Single properties: the client's while the fields they fill are
	// unchanged.
	same := func(unchanged bool, names ...string) {
		for _, n := range names {
			src := fresh
			if unchanged {
				src = stored
			}
			if fs := src[n]; len(fs) > 0 {
				out[n] = fs
			} else {
				delete(out, n)
			}
		}
	}
	same(w.FirstName == c.FirstName && w.LastName == c.LastName, vcard.FieldName)
	same(w.FirstName == c.FirstName && w.LastName == c.LastName && w.Company == c.Company, vcard.FieldFormattedName, vcard.FieldKind)
	same(w.Company == c.Company, vcard.FieldOrganization)
	same(w.JobTitle == c.JobTitle, vcard.FieldTitle)
	same(w.Notes == c.Notes, vcard.FieldNote)
	same(w.Website == c.Website, vcard.FieldURL)
	same(equalPtr(w.Birthday, c.Birthday), vcard.FieldBirthday)
	same(equalPtr(w.TimeZone, c.TimeZone), vcard.FieldTimezone)
	same(w.Starred == c.Starred, PropStarred)
	same(sameNames(was.Labels, labelNames(c)), vcard.FieldCategories)
	if len(out[vcard.FieldFormattedName]) == 0 {
		out[vcard.FieldFormattedName] = fresh[vcard.FieldFormattedName]
	}

	// Entries: each of the contact's, the client's entry that says the
	// same when there is one, else the mapping's.
	entries(out, stored[vcard.FieldEmail], vcard.FieldEmail, c.Emails, emailField, func(f *vcard.Field, e contacts.Email) bool {
		g := email(f)
		return strings.EqualFold(g.Address, e.Address) && g.Label == e.Label && g.Primary == e.Primary
	})
	entries(out, stored[vcard.FieldTelephone], vcard.FieldTelephone, c.Phones, phoneField, func(f *vcard.Field, p contacts.Phone) bool {
		return phone(f) == p
	})
	entries(out, stored[vcard.FieldAddress], vcard.FieldAddress, c.Addresses, addressField, func(f *vcard.Field, a contacts.Address) bool {
		return address(f) == a
	})
	entries(out, stored[PropSocial], PropSocial, c.Socials, socialField, func(f *vcard.Field, s contacts.Social) bool {
		return social(f) == s
	})
	// Dates: ANNIVERSARY and this service's labelled dates, each kept
	// under the property the client used.
	type storedDate struct {
		prop string
		f    *vcard.Field
	}
	var dates []storedDate
	for _, n := range []string{vcard.FieldAnniversary, PropDate} {
		for _, f := range stored[n] {
			dates = append(dates, storedDate{n, f})
		}
	}
	delete(out, vcard.FieldAnniversary)
	delete(out, PropDate)
	used := make([]bool, len(dates))
	for _, d := range c.Dates {
		prop, f := PropDate, dateField(d)
		for i, s := range dates {
			if g, ok := date(s.prop, s.f); !used[i] && ok && g == d {
				used[i], prop, f = true, s.prop, s.f
				break
			}
		}
		out.Add(prop, f)
	}
	// Custom values: the client's entry while its value is the contact's.
	delete(out, PropCustom)
	for _, k := range sortedKeys(c.CustomFields) {
		v := c.CustomFields[k]
		f := customField(k, v, types[k])
		for _, s := range stored[PropCustom] {
			if s.Params.Get(paramKey) == k && s.Value == v {
				f = s
				break
			}
		}
		out.Add(PropCustom, f)
	}
	return out
}

// mapped are the properties the mapping reads into fields.
var mapped = map[string]bool{
	vcard.FieldName: true, vcard.FieldFormattedName: true, vcard.FieldKind: true, vcard.FieldOrganization: true,
	vcard.FieldTitle: true, vcard.FieldNote: true, vcard.FieldURL: true, vcard.FieldBirthday: true, vcard.FieldTimezone: true,
	vcard.FieldEmail: true, vcard.FieldTelephone: true, vcard.FieldAddress: true, PropSocial: true,
	vcard.FieldAnniversary: true, PropDate: true, PropStarred: true, PropCustom: true, vcard.FieldCategories: true,
}

// entries writes the contact's items under prop: for each, the first
// unused stored entry that says the same, else the mapping's.
func entries[T any](out vcard.Card, stored []*vcard.Field, prop string, items []T, write func(T) *vcard.Field, same func(*vcard.Field, T) bool) {
	delete(out, prop)
	used := make([]bool, len(stored))
	for _, it := range items {
		f := write(it)
		for i, s := range stored {
			if !used[i] && same(s, it) {
				used[i], f = true, s
				break
			}
		}
		out.Add(prop, f)
	}
}

func equalPtr(a, b *string) bool {
	return (a == nil && b == nil) || (a != nil && b != nil && *a == *b)
}

// sameNames compares label names as sets, case-insensitively.
func sameNames(a, b []string) bool {
	norm := func(ns []string) []string {
		out := make([]string, 0, len(ns))
		for _, n := range ns {
			out = append(out, strings.ToLower(strings.TrimSpace(n)))
		}
		slices.Sort(out)
		return slices.Compact(out)
	}
	return slices.Equal(norm(a), norm(b))
}
