package contacts

import (
	"strings"
)

// mergeImported patches dst with the non-empty values of src: scalar
// fields replace, emails and phones not yet present are added, an
// address, date or social replaces the one of the same label.
func mergeImported(dst *Contact, src Contact) {
	set := func(d *string, v string) {
		if v != "" {
			*d = v
		}
	}
	set(&dst.FirstName, src.FirstName)
	set(&dst.LastName, src.LastName)
	set(&dst.Company, src.Company)
	set(&dst.JobTitle, src.JobTitle)
	set(&dst.Notes, src.Notes)
	set(&dst.Website, src.Website)
	if src.TimeZone != nil {
		dst.TimeZone = src.TimeZone
	}
	if src.Birthday != nil {
		dst.Birthday = src.Birthday
	}
	if src.Starred {
		dst.Starred = true
	}
	for _, e := range src.Emails {
		if !slicesContainsFold(dst.Emails, func(x Email) string { return x.Address }, e.Address) {
			e.Primary = e.Primary && !anyPrimary(dst.Emails)
			dst.Emails = append(dst.Emails, e)
		}
	}
	for _, p := range src.Phones {
		if !slicesContainsFold(dst.Phones, func(x Phone) string { return x.Number }, p.Number) {
			p.Primary = false
			dst.Phones = append(dst.Phones, p)
		}
	}
	dst.Addresses = replaceByLabel(dst.Addresses, src.Addresses, func(a Address) string { return string(a.Label) })
	dst.Dates = replaceByLabel(dst.Dates, src.Dates, func(d Date) string { return d.Label })
	dst.Socials = replaceByLabel(dst.Socials, src.Socials, func(s Social) string { return string(s.Label) })
}

func anyPrimary(es []Email) bool {
	for _, e := range es {
		if e.Primary {
			return true
		}
	}
	return false
}

func slicesContainsFold[T any](s []T, key func(T) string, v string) bool {
	for _, x := range s {
		if strings.EqualFold(strings.TrimSpace(key(x)), strings.TrimSpace(v)) {
			return true
		}
	}
	return false
}

func replaceByLabel[T any](dst, src []T, label func(T) string) []T {
	for _, s := range src {
		replaced := false
		for i := range dst {
			if label(dst[i]) == label(s) {
				dst[i], replaced = s, true
				break
			}
		}
		if !replaced {
			dst = append(dst, s)
		}
	}
	return dst
}
