package enum

import (
	"slices"
	"testing"
)

type color string

var colors = []color{"red", "green", "blue"}

func TestParse(t *testing.T) {
	if c, ok := Parse(colors, "green"); !ok || c != "green" {
		t.Fatalf("Parse(green) = %q, %v", c, ok)
	}
	for _, s := range []string{"", "Green", "purple", "red "} {
		if c, ok := Parse(colors, s); ok || c != "" {
			t.Errorf("Parse(%q) = %q, %v; want no member", s, c, ok)
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
