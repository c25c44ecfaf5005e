package apptest

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// Response is an answer from the service.
type Response struct {
	T      testing.TB
	Status int
	Header http.Header
	Body   []byte
	parsed any
}

// Expect fails the test unless the status is want; it returns r.
func (r *Response) Expect(want int) *Response {
	r.T.Helper()
	if r.Status != want {
		r.T.Fatalf("status %d, want %d; body: %s", r.Status, want, truncate(r.Body))
	}
	return r
}

// ExpectError fails unless the answer is the error envelope with status
// and code.
func (r *Response) ExpectError(status int, code string) *Response {
	r.T.Helper()
	r.Expect(status)
	if got := r.String("error.code"); got != code {
		r.T.Fatalf("error code %q, want %q; body: %s", got, code, truncate(r.Body))
	}
	if r.String("error.message") == "" {
		r.T.Fatalf("error without message: %s", truncate(r.Body))
	}
	return r
}

func truncate(b []byte) string {
	if len(b) > 2000 {
		return string(b[:2000]) + "..."
	}
	return string(b)
}

// Value returns the JSON value at a dotted path ("data.items.0.id"); nil
// when absent.
func (r *Response) Value(path string) any {
	r.T.Helper()
	if r.parsed == nil {
		if err := json.Unmarshal(r.Body, &r.parsed); err != nil {
			r.T.Fatalf("body is not JSON (%v): %s", err, truncate(r.Body))
		}
	}
	cur := r.parsed
	if path == "" {
		return cur
	}
	for _, part := range strings.Split(path, ".") {
		switch v := cur.(type) {
		case map[string]any:
			cur = v[part]
		case []any:
			i, err := strconv.Atoi(part)
			if err != nil || i < 0 || i >= len(v) {
				return nil
			}
			cur = v[i]
		default:
			return nil
		}
	}
	return cur
}

// Has reports whether the path exists (even as null).
func (r *Response) Has(path string) bool {
	r.T.Helper()
	parent, last := "", path
	if i := strings.LastIndexByte(path, '.'); i >= 0 {
		parent, last = path[:i], path[i+1:]
	}
	m, ok := r.Value(parent).(map[string]any)
	if !ok {
		return false
	}
	_, ok = m[last]
	return ok
}

// String returns the string at path ("" when absent or not a string).
func (r *Response) String(path string) string {
	r.T.Helper()
	s, _ := r.Value(path).(string)
	return s
}

// Int returns the number at path as an int (0 when absent).
func (r *Response) Int(path string) int {
	r.T.Helper()
	f, _ := r.Value(path).(float64)
	return int(f)
}

// Bool returns the boolean at path.
func (r *Response) Bool(path string) bool {
	r.T.Helper()
	b, _ := r.Value(path).(bool)
	return b
}

// Len returns the length of the array at path (-1 when not an array).
func (r *Response) Len(path string) int {
	r.T.Helper()
	a, ok := r.Value(path).([]any)
	if !ok {
		return -1
	}
	return len(a)
}

// Decode unmarshals the JSON at path into dst.
func (r *Response) Decode(path string, dst any) {
	r.T.Helper()
	b, err := json.Marshal(r.Value(path))
	if err != nil {
		r.T.Fatal(err)
	}
	if err := json.Unmarshal(b, dst); err != nil {
		r.T.Fatalf("decode %s: %v", path, err)
	}
}
