// Package optional distinguishes, in a JSON PATCH body, a field that was
// left out from one sent as null and from one sent with a value. PATCH
// semantics ("omitted fields are unchanged", "null clears") need all three.
package optional

import (
	"bytes"
	"encoding/json"
)

// Value is a field of a PATCH body.
type Value[T any] struct {
	Set  bool // the field was present in the body
	Null bool // it was present as JSON null
	V    T
}

// UnmarshalJSON is only called when the field is present.
func (o *Value[T]) UnmarshalJSON(b []byte) error {
	o.Set = true
	if bytes.Equal(bytes.TrimSpace(b), []byte("null")) {
		o.Null = true
		var zero T
		o.V = zero
		return nil
	}
	return json.Unmarshal(b, &o.V)
}

// Some returns a Value holding v, for tests and callers building patches.
func Some[T any](v T) Value[T] { return Value[T]{Set: true, V: v} }

// HasValue reports whether the field was sent with a non-null value.
func (o Value[T]) HasValue() bool { return o.Set && !o.Null }

// ApplyTo copies the value into dst when it was sent; null sets the zero
// value. It reports whether dst changed hands.
func (o Value[T]) ApplyTo(dst *T) bool {
	if !o.Set {
		return false
	}
	*dst = o.V
	return true
}

// ApplyToPtr copies the value into dst when sent; null clears dst.
func (o Value[T]) ApplyToPtr(dst **T) bool {
	if !o.Set {
		return false
	}
	if o.Null {
		*dst = nil
		return true
	}
	v := o.V
	*dst = &v
	return true
}
