package segments

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/contactbook/contactbook/internal/apperr"
)

func parse(t *testing.T, s string) (Rule, error) {
	t.Helper()
	return ParseRule(json.NewDecoder(strings.NewReader(s)), "rule")
}

// field is the place an error names, or "" when it names none.
func field(err error) string {
	if d := apperr.DetailsOf(err); len(d) > 0 {
		return d[0].Field
	}
	return ""
}

func TestParseRuleNamesThePlace(t *testing.T) {
	t.Parallel()
	cond := `{"field":"company","op":"contains","value":"a"}`
	cases := []struct {
		name, rule, place string
	}{
		{"not an object", `[]`, "rule"},
		{"empty object", `{}`, "rule"},
		{"unknown field", `{"all":[` + cond + `,` + cond + `,{"field":"shoe_size","op":"eq","value":"x"}]}`, "rule.all[2].field"},
		{"unknown op", `{"all":[` + cond + `,` + cond + `,{"field":"company","op":"like","value":"x"}]}`, "rule.all[2].op"},
		{"op of another family", `{"field":"labels","op":"contains","value":"x"}`, "rule.op"},
		{"missing op", `{"field":"company","value":"x"}`, "rule.op"},
		{"unknown key", `{"any":[{"field":"company","op":"eq","valeu":"x"}]}`, "rule.any[0].valeu"},
		{"group beside condition", `{"all":[],"field":"company"}`, "rule"},
		{"group not an array", `{"any":{"field":"company"}}`, "rule.any"},
		{"campaign_id outside email", `{"field":"company","op":"eq","value":"x","campaign_id":"6b3c1f0e-1d7c-4a4e-9f55-2f9a3b1c0d11"}`, "rule.campaign_id"},
		{"bad campaign_id", `{"field":"email.opened","op":"ever","campaign_id":"nope"}`, "rule.campaign_id"},
		{"too deep", `{"not":{"not":{"not":{"not":{"not":{"not":` + cond + `}}}}}}`, "rule.not.not.not.not.not"},
		{"malformed inside", `{"all":[{"field":"company","op":"eq","value":[1,2}]}`, "rule.all[0].value"},
		{"cut short", `{"all":[{"field":"company"`, "rule.all[0]"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parse(t, tc.rule)
			if !apperr.Is(err, apperr.InvalidInput) {
				t.Fatalf("err = %v, want INVALID_INPUT", err)
			}
			if got := field(err); got != tc.place {
				t.Fatalf("place = %q, want %q (%v)", got, tc.place, err)
			}
		})
	}
}

func TestParseRuleLimits(t *testing.T) {
	t.Parallel()
	cond := `{"field":"company","op":"contains","value":"a"}`
	// Five groups on a path, the root included, are allowed.
	five := `{"all":[{"any":[{"not":{"all":[{"any":[` + cond + `]}]}}]}]}`
	if _, err := parse(t, five); err != nil {
		t.Fatalf("five groups: %v", err)
	}
	fifty := `{"all":[` + strings.TrimSuffix(strings.Repeat(cond+",", MaxConditions), ",") + `]}`
	if _, err := parse(t, fifty); err != nil {
		t.Fatalf("fifty conditions: %v", err)
	}
	// 10,000 conditions: refused at the 51st.
	many := `{"any":[` + strings.TrimSuffix(strings.Repeat(cond+",", 10000), ",") + `]}`
	_, err := parse(t, many)
	if got := field(err); got != "rule.any[50]" {
		t.Fatalf("many conditions: place %q (%v)", got, err)
	}
	// A rule two megabytes deep is refused after five groups, without
	// reading the rest (the JSON decoder alone would stop at 10,000 levels
	// with a message naming no field).
	var deep bytes.Buffer
	for deep.Len() < 2<<20 {
		deep.WriteString(`{"not":`)
	}
	_, err = parse(t, deep.String())
	if got := field(err); got != "rule.not.not.not.not.not" {
		t.Fatalf("deep rule: place %q (%v)", got, err)
	}
	// A deep value is malformed JSON at its place.
	_, err = parse(t, `{"field":"company","op":"eq","value":`+strings.Repeat("[", 20000)+strings.Repeat("]", 20000)+`}`)
	if got := field(err); got != "rule.value" {
		t.Fatalf("deep value: place %q (%v)", got, err)
	}
}

func TestRuleRoundTrip(t *testing.T) {
	t.Parallel()
	in := `{"all":[{"field":"email.opened","op":"within_last_days","value":30,"campaign_id":"6b3c1f0e-1d7c-4a4e-9f55-2f9a3b1c0d11"},{"not":{"any":[]}},{"field":"starred","op":"eq","value":true},{"field":"email","op":"is_set"}]}`
	r, err := parse(t, in)
	if err != nil {
		t.Fatal(err)
	}
	out, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != in {
		t.Fatalf("round trip:\n got %s\nwant %s", out, in)
	}
	if _, err := ParseStoredRule(out); err != nil {
		t.Fatalf("stored: %v", err)
	}
}

// A rule saved while "30" was still taken for a number of days reads back
// as the number, so its segment keeps working; a new rule may not say it.
func TestStoredRuleUnquotesIntegers(t *testing.T) {
	t.Parallel()
	stored := `{"all":[{"field":"email.opened","op":"within_last_days","value":"30"},{"not":{"field":"birthday","op":"in_month","value":"12"}},{"field":"company","op":"eq","value":"30"}]}`
	r, err := ParseStoredRule([]byte(stored))
	if err != nil {
		t.Fatal(err)
	}
	out, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"all":[{"field":"email.opened","op":"within_last_days","value":30},{"not":{"field":"birthday","op":"in_month","value":12}},{"field":"company","op":"eq","value":"30"}]}`
	if string(out) != want {
		t.Fatalf("stored rule reads as\n%s\nwant\n%s", out, want)
	}
}
