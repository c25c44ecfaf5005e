package httpapi

import (
	"strings"
	"testing"

	"github.com/contactbook/contactbook/internal/apperr"
)

func TestJSONTextNamesTheField(t *testing.T) {
	for _, tc := range []struct {
		body, want string
	}{
		{`{"name":"ok","emails":[{"address":"a"},{"address":"b"}]}`, ""},
		{`{"name":"a\\u0000"}`, ""}, // an escaped backslash, not a NUL
		{`{"name":"a\u0000"}`, "`name` holds a NUL"},
		{`{"a":1,"b":[true,null,{"c":"x"}],"emails":[{"label":"w"},{"label":"w","address":"\u0000"}]}`, "`emails[1].address` holds a NUL"},
		{`{"custom_fields":{"plan":"gold\u0000"}}`, "`custom_fields.plan` holds a NUL"},
		{`{"ids":["a","b","\u0000"]}`, "`ids[2]` holds a NUL"},
		{`{"x":{"k\u0000":1}}`, "A field name in `x` holds a NUL"},
		{`{"k\u0000":1}`, "A field name in the body holds a NUL"},
		{`"\u0000"`, "The body holds a NUL"},
		{"{\"a\":{\"b\":\"ok\"},\"name\":\"caf\xe9\"}", "`name` is not valid UTF-8"},
		{"{\"n\xff\":1}", "A field name in the body is not valid UTF-8"},
		{"{\"a\":\"ok\"}\xff", "The body is not valid UTF-8"},
		{"{\"a\":\"\u00e9\u00e9\",\"b\":[1,2],\"c\":\"\xc3\"}", "`c` is not valid UTF-8"},
		{strings.Repeat("[", 100000) + `"\u0000"` + strings.Repeat("]", 100000), "The body nests deeper than 64 levels"},
	} {
		err := jsonText([]byte(tc.body))
		if tc.want == "" {
			if err != nil {
				t.Errorf("%s: %v", tc.body, err)
			}
			continue
		}
		if !apperr.Is(err, apperr.InvalidInput) || !strings.HasPrefix(apperr.MessageOf(err), tc.want) {
			t.Errorf("%s: got %v, want %q...", tc.body, err, tc.want)
		}
	}
}

// BenchmarkJSONText measures the common case: a valid 2 MB body costs two
// linear scans.
func BenchmarkJSONText(b *testing.B) {
	body := []byte(`{"contact_ids":[` + strings.Repeat(`"6f1c1d7e-0000-4000-8000-000000000000",`, 50000) + `"x"]}`)
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if err := jsonText(body); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkJSONTextWalk measures the slow path: a 2 MB body whose last
// string holds a NUL is walked token by token.
func BenchmarkJSONTextWalk(b *testing.B) {
	body := []byte(`{"contact_ids":[` + strings.Repeat(`"6f1c1d7e-0000-4000-8000-000000000000",`, 50000) + `"\u0000"]}`)
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if err := jsonText(body); err == nil {
			b.Fatal("no error")
		}
	}
}
