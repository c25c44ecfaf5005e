// Package contactstest holds contact fixtures for the tests of any
// package: the domain's own tests and the API's.
package contactstest

// FullContact is a contact body with every field a create takes filled
// in (the first name with spaces to trim), for tests of what is stored and
// shown.
func FullContact() map[string]any {
	return map[string]any{
		"first_name": " Ada ", "last_name": "Lovelace", "company": "Analytical Engines", "job_title": "Countess",
		"notes": "First programmer", "website": "https://ada.example.com/about", "birthday": "1815-12-10",
		"starred": true,
		"emails": []any{
			map[string]any{"address": "Ada@Example.com", "label": "work", "primary": true},
			map[string]any{"address": "ada@home.example", "label": "personal"},
		},
		"phones":        []any{map[string]any{"number": "+44 (20) 7946-0958 ext. 12", "label": "mobile", "primary": true}},
		"addresses":     []any{map[string]any{"label": "home", "street": "12 St James's Square", "city": "London", "zip": "SW1Y 4JH", "country": "UK"}},
		"dates":         []any{map[string]any{"label": "wedding", "value": "1835-07-08"}},
		"socials":       []any{map[string]any{"label": "github", "value": "ada"}},
		"relationships": []any{map[string]any{"label": "spouse", "name": "William King"}},
	}
}
