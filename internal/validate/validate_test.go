package validate

import (
	"errors"
	"slices"
	"testing"

	"github.com/contactbook/contactbook/internal/apperr"
)

type flavour string

func (flavour) OneOf() []string { return []string{"sweet", "sour", "salty"} }

// The enum tag must answer exactly what the oneof tag it replaces did:
// the same code, message and field path, first failure and details alike.
func TestEnumAnswersAsOneOf(t *testing.T) {
	t.Parallel()
	type item struct {
		Flavour flavour `json:"flavour" validate:"enum"`
	}
	type withEnum struct {
		Name  string  `json:"name" validate:"required"`
		Kind  flavour `json:"kind" validate:"required,enum"`
		Items []item  `json:"items" validate:"dive"`
	}
	type withOneOf struct {
		Name  string `json:"name" validate:"required"`
		Kind  string `json:"kind" validate:"required,oneof=sweet sour salty"`
		Items []struct {
			Flavour string `json:"flavour" validate:"oneof=sweet sour salty"`
		} `json:"items" validate:"dive"`
	}
	for _, c := range []struct{ kind, flavour string }{{"bitter", "umami"}, {"", ""}, {"sour", "Salty"}, {"sweet", "salty"}} {
		e := withEnum{Kind: flavour(c.kind), Items: []item{{Flavour: "sweet"}, {Flavour: flavour(c.flavour)}}}
		o := withOneOf{Kind: c.kind}
		o.Items = make([]struct {
			Flavour string `json:"flavour" validate:"oneof=sweet sour salty"`
		}, 2)
		o.Items[0].Flavour, o.Items[1].Flavour = "sweet", c.flavour
		got, want := Struct(e), Struct(o)
		if (got == nil) != (want == nil) {
			t.Fatalf("%v: enum answers %v, oneof %v", c, got, want)
		}
		if got == nil {
			continue
		}
		var ge, we *apperr.Error
		if !errors.As(got, &ge) || !errors.As(want, &we) {
			t.Fatalf("%v: not *apperr.Error: %v, %v", c, got, want)
		}
		if ge.Code != we.Code || ge.Message != we.Message || !slices.Equal(ge.Details, we.Details) {
			t.Errorf("%v: enum answers %s %q %v, oneof %s %q %v", c, ge.Code, ge.Message, ge.Details, we.Code, we.Message, we.Details)
		}
	}
}

// A field whose type lists no set is refused rather than let through.
func TestEnumNeedsASet(t *testing.T) {
	t.Parallel()
	type plain struct {
		Kind string `json:"kind" validate:"enum"`
	}
	if err := Struct(plain{Kind: "anything"}); err == nil {
		t.Fatal("a plain string passed the enum tag")
	}
}
