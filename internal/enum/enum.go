// Package enum reads strings into the closed sets of values that domain
// types declare. Each set is written once, as a slice of its type's values
// in the type's own package (campaigns.StepTypes, suppression.Reasons);
// parsing, validation messages and the OpenAPI contract test all read that
// slice, so a value added there is accepted, documented and offered
// everywhere at once.
//
// Every set has one reader of the same shape in its package,
// `ParseX(s string) (X, error)`, built on Parse, so its refusal is an
// INVALID_INPUT error worded by Message like every other's
// (TestClosedSetsParseOneWay holds the shape).
package enum

import (
	"fmt"
	"slices"
	"strings"

	"github.com/contactbook/contactbook/internal/apperr"
)

// Parse returns the member of set spelled exactly s (matching is
// case-sensitive, as the API's values are), or an INVALID_INPUT error
// saying what name must be (see Message).
func Parse[T ~string](set []T, name, s string) (T, error) {
	if v := T(s); slices.Contains(set, v) {
		return v, nil
	}
	var zero T
	return zero, apperr.Invalidf("%s", Message(name, set))
}

// Message is the sentence refusing a value outside set, where name says
// what the value is as the reader knows it ("`plan`", "The query
// parameter sort"): "`plan` must be one of: monthly, yearly."
func Message[T ~string](name string, set []T) string {
	return fmt.Sprintf("%s must be one of: %s.", name, Join(set))
}

// Strings returns the set's values as plain strings, in the set's order.
func Strings[T ~string](set []T) []string {
	out := make([]string, len(set))
	for i, v := range set {
		out[i] = string(v)
	}
	return out
}

// Join spells the set for a message: "a, b, c".
func Join[T ~string](set []T) string {
	return strings.Join(Strings(set), ", ")
}

// Or spells the set as a sentence does: "a, b or c".
func Or[T ~string](set []T) string {
	s := Strings(set)
	if len(s) < 2 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + " or " + s[len(s)-1]
}
