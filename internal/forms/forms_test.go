package forms

import (
	"strings"
	"testing"
)

// The rules a form checks alone: its name, its field keys (built-in or
// custom.<key> of the book, each once, never email) and an https
// redirect.
func TestFormValidate(t *testing.T) {
	t.Parallel()
	custom := map[string]bool{"tier": true}
	ok := Form{Name: "News", Fields: []Field{{Key: "first_name", Required: true}, {Key: "custom.tier"}, {Key: "topics"}}, RedirectURL: "https://example.com/thanks"}
	if err := ok.validate(custom); err != nil {
		t.Fatalf("a valid form: %v", err)
	}
	for want, f := range map[string]Form{
		"`name`":          {Name: ""},
		"`fields[0].key`": {Name: "x", Fields: []Field{{Key: "email"}}},
		"`fields[1].key`": {Name: "x", Fields: []Field{{Key: "company"}, {Key: "company"}}},
		"custom.plan":     {Name: "x", Fields: []Field{{Key: "custom.plan"}}},
		"`redirect_url`":  {Name: "x", RedirectURL: "http://example.com"},
	} {
		err := f.validate(custom)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v", want, err)
		}
	}
}

// A token carries 256 random bits; only its hash is kept, and a token
// that is not one of ours is refused before any lookup.
func TestTokens(t *testing.T) {
	t.Parallel()
	a, hashA, err := newToken()
	if err != nil {
		t.Fatal(err)
	}
	b, _, _ := newToken()
	if a == b || len(a) != 43 {
		t.Fatalf("tokens %q %q", a, b)
	}
	if h, ok := tokenHash(a); !ok || string(h) != string(hashA) {
		t.Fatal("a token's hash must be the stored one")
	}
	for _, bad := range []string{"", "short", a + "x", strings.Repeat("!", 43)} {
		if _, ok := tokenHash(bad); ok {
			t.Errorf("%q accepted", bad)
		}
	}
}

// The answer of a post never depends on the address: it is the form's.
func TestResultIsTheForms(t *testing.T) {
	t.Parallel()
	s := &Service{}
	if r := s.result(Form{DoubleOptIn: true}); !strings.Contains(r.Message, "confirm") {
		t.Fatalf("double opt-in default: %q", r.Message)
	}
	if r := s.result(Form{SuccessMessage: "Thanks!", RedirectURL: "https://example.com"}); r.Message != "Thanks!" || r.RedirectURL != "https://example.com" {
		t.Fatalf("custom: %+v", r)
	}
}
