package enum

import (
	"errors"
	"slices"
	"testing"

	"github.com/contactbook/contactbook/internal/apperr"
)

type color string

var colors = []color{"red", "green", "blue"}

func TestParse(t *testing.T) {
	if c, err := Parse(colors, "`color`", "green"); err != nil || c != "green" {
		t.Fatalf("Parse(green) = %q, %v", c, err)
	}
	for _, s := range []string{"", "Green", "purple", "red "} {
		c, err := Parse(colors, "`color`", s)
		var ae *apperr.Error
		if !errors.As(err, &ae) || ae.Code != apperr.InvalidInput || c != "" {
			t.Errorf("Parse(%q) = %q, %v; want INVALID_INPUT", s, c, err)
			continue
		}
		if want := "`color` must be one of: red, green, blue."; ae.Message != want {
			t.Errorf("Parse(%q) says %q, want %q", s, ae.Message, want)
		}
	}
}

func TestSpelling(t *testing.T) {
	if got := Strings(colors); !slices.Equal(got, []string{"red", "green", "blue"}) {
		t.Errorf("Strings = %v", got)
	}
	if got := Join(colors); got != "red, green, blue" {
		t.Errorf("Join = %q", got)
	}
	if got := Or(colors); got != "red, green or blue" {
		t.Errorf("Or = %q", got)
	}
	if got := Or(colors[:1]); got != "red" {
		t.Errorf("Or of one = %q", got)
	}
}
