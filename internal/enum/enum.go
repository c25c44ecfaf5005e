// Package enum reads strings into the closed sets of values that domain
// types declare. Each set is written once, as a slice of its type's values
// in the type's own package (campaigns.StepTypes, suppression.Reasons);
// parsing, validation messages and the OpenAPI contract test all read that
// slice, so a value added there is accepted, documented and offered
// everywhere at once.
package enum

import (
	"slices"
	"strings"
)

// Parse returns the member of set spelled exactly s, and false when s names
// none (matching is case-sensitive, as the API's values are).
func Parse[T ~string](set []T, s string) (T, bool) {
	if v := T(s); slices.Contains(set, v) {
		return v, true
	}
	var zero T
	return zero, false
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
