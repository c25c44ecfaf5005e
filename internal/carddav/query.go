package carddav

import (
	"fmt"
	"strings"

	"github.com/emersion/go-vcard"
	"github.com/emersion/go-webdav/carddav"
)

// match tells whether a card passes an addressbook-query's filter (RFC
// 6352 10.5). The library's matcher compares case-sensitively and tests
// only the first of a property's values; a phone searching for "smith"
// or for the second email address of a card expects neither. Text is
// compared case-insensitively (the RFC's default collation,
// i;unicode-casemap), against every value of the property.
func match(q *carddav.AddressBookQuery, c vcard.Card) (bool, error) {
	if len(q.PropFilters) == 0 {
		return true, nil
	}
	all := q.FilterTest == carddav.FilterAllOf
	for _, pf := range q.PropFilters {
		ok, err := matchProp(pf, c)
		if err != nil {
			return false, err
		}
		if ok != all {
			return ok, nil
		}
	}
	return all, nil
}

func matchProp(pf carddav.PropFilter, c vcard.Card) (bool, error) {
	fields := c[strings.ToUpper(pf.Name)]
	if pf.IsNotDefined {
		return len(fields) == 0, nil
	}
	if len(fields) == 0 {
		return false, nil
	}
	if len(pf.TextMatches) == 0 && len(pf.Params) == 0 {
		return true, nil
	}
	all := pf.Test == carddav.FilterAllOf
	var tests []func(*vcard.Field) (bool, error)
	for _, tm := range pf.TextMatches {
		tests = append(tests, func(f *vcard.Field) (bool, error) { return matchText(tm, f.Value) })
	}
	for _, p := range pf.Params {
		tests = append(tests, func(f *vcard.Field) (bool, error) {
			vs := f.Params[strings.ToUpper(p.Name)]
			if p.IsNotDefined {
				return len(vs) == 0, nil
			}
			if p.TextMatch == nil {
				return len(vs) > 0, nil
			}
			for _, v := range vs {
				if ok, err := matchText(*p.TextMatch, v); ok || err != nil {
					return ok, err
				}
			}
			return false, nil
		})
	}
	for _, test := range tests {
		ok := false
		for _, f := range fields {
			hit, err := test(f)
			if err != nil {
				return false, err
			}
			if hit {
				ok = true
				break
			}
		}
		if ok != all {
			return ok, nil
		}
	}
	return all, nil
}

func matchText(tm carddav.TextMatch, value string) (bool, error) {
	v, t := strings.ToLower(value), strings.ToLower(tm.Text)
	var ok bool
	switch tm.MatchType {
	case carddav.MatchContains, "":
		ok = strings.Contains(v, t)
	case carddav.MatchEquals:
		ok = v == t
	case carddav.MatchStartsWith:
		ok = strings.HasPrefix(v, t)
	case carddav.MatchEndsWith:
		ok = strings.HasSuffix(v, t)
	default:
		return false, fmt.Errorf("%w: unknown match-type %q", errBadRequest, tm.MatchType)
	}
	return ok != tm.NegateCondition, nil
}
