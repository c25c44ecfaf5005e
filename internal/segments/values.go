package segments

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/contactbook/contactbook/internal/validate"
)

// The value readers: each reads a condition's value in the form its op
// takes, or says at value what the form is.

// noValue are the ops that take no value.
var noValue = map[Op]bool{OpIsSet: true, OpIsNotSet: true, OpEver: true, OpNever: true}

func isNull(v json.RawMessage) bool {
	return len(v) == 0 || string(bytes.TrimSpace(v)) == "null"
}

// valueAt is the place of a condition's value in errors.
func valueAt(r Rule) string { return r.path + ".value" }

func requireNoValue(r Rule) error {
	if !isNull(r.cond.Value) {
		return invalid(valueAt(r), "is not taken by %s; leave it out.", r.cond.Op)
	}
	return nil
}

func textValue(r Rule) (string, error) {
	var s string
	if isNull(r.cond.Value) || json.Unmarshal(r.cond.Value, &s) != nil {
		return "", invalid(valueAt(r), "must be a string for %s %s.", r.cond.Field, r.cond.Op)
	}
	switch {
	case s == "":
		return "", invalid(valueAt(r), "must not be empty: to find contacts without a value, use is_not_set.")
	case utf8.RuneCountInString(s) > MaxText:
		return "", invalid(valueAt(r), "may be at most %d characters long.", MaxText)
	case strings.ContainsRune(s, 0) || !utf8.ValidString(s):
		return "", invalid(valueAt(r), "must be text without NUL characters.")
	}
	return s, nil
}

func numberValue(r Rule) (float64, error) {
	var f float64
	if isNull(r.cond.Value) || json.Unmarshal(r.cond.Value, &f) != nil || math.IsInf(f, 0) {
		return 0, invalid(valueAt(r), "must be a number for %s %s.", r.cond.Field, r.cond.Op)
	}
	return f, nil
}

// intValue reads an integer of lo..hi: a JSON number without a fraction.
// The value is decoded as any JSON value and must come out a number: a
// json.Number target alone would also take the string "30".
func intValue(r Rule, lo, hi int, what string) (int, error) {
	var v any
	dec := json.NewDecoder(bytes.NewReader(r.cond.Value))
	dec.UseNumber()
	if isNull(r.cond.Value) || dec.Decode(&v) != nil {
		return 0, invalid(valueAt(r), "must be %s, an integer from %d to %d.", what, lo, hi)
	}
	n, ok := v.(json.Number)
	if !ok {
		return 0, invalid(valueAt(r), "must be %s, an integer from %d to %d (a JSON number, not a string).", what, lo, hi)
	}
	i, err := n.Int64()
	if err != nil || i < int64(lo) || i > int64(hi) {
		return 0, invalid(valueAt(r), "must be %s, an integer from %d to %d.", what, lo, hi)
	}
	return int(i), nil
}

// integerOps are the ops whose value is an integer, whatever the field.
var integerOps = map[Op]bool{OpWithinLastDays: true, OpNotWithinLastDays: true, OpInMonth: true}

// quotedInteger matches an integer written as a JSON string ("30").
var quotedInteger = regexp.MustCompile(`^"[0-9]{1,9}"$`)

// unquoteIntegers rewrites, in a rule read from storage, an integer value
// saved as a string ("30") into the number it names. Rules saved before
// such values were refused keep meaning what they meant; the API answers
// them with the number.
func unquoteIntegers(r *Rule) {
	if r.kind != kindCondition {
		for i := range r.rules {
			unquoteIntegers(&r.rules[i])
		}
		return
	}
	v := bytes.TrimSpace(r.cond.Value)
	if integerOps[r.cond.Op] && quotedInteger.Match(v) {
		r.cond.Value = json.RawMessage(bytes.Trim(v, `"`))
	}
}

func daysValue(r Rule) (int, error) { return intValue(r, 1, MaxDays, "a number of days") }

func dateValue(r Rule) (time.Time, error) {
	var s string
	if isNull(r.cond.Value) || json.Unmarshal(r.cond.Value, &s) != nil || !validate.Date(s) {
		return time.Time{}, invalid(valueAt(r), "must be a date of the form YYYY-MM-DD that exists.")
	}
	t, _ := time.Parse(time.DateOnly, s)
	return t, nil
}

func boolValue(r Rule) (bool, error) {
	var b bool
	if isNull(r.cond.Value) || json.Unmarshal(r.cond.Value, &b) != nil {
		return false, invalid(valueAt(r), "must be true or false.")
	}
	return b, nil
}

// errReference marks a value that names something the book does not have
// (a label, a campaign, a custom field, or a custom field of another
// type). A saved segment may come to name one when it is deleted; such a
// condition then tests a value no contact has.
var errReference = errors.New("reference outside the book")

type referenceError struct{ err error }

func (e referenceError) Error() string { return e.err.Error() }
func (e referenceError) Unwrap() []error {
	return []error{e.err, errReference}
}

func reference(err error) error { return referenceError{err} }

// labelsValue reads 1..MaxLabels label ids, each a label of the book;
// repeats count once.
func labelsValue(r Rule, cat *catalog) ([]uuid.UUID, error) {
	var raw []json.RawMessage
	if isNull(r.cond.Value) || json.Unmarshal(r.cond.Value, &raw) != nil || len(raw) == 0 || len(raw) > MaxLabels {
		return nil, invalid(valueAt(r), "must be an array of 1 to %d label ids.", MaxLabels)
	}
	ids := make([]uuid.UUID, 0, len(raw))
	seen := map[uuid.UUID]bool{}
	for i, v := range raw {
		at := fmt.Sprintf("%s[%d]", valueAt(r), i)
		var s string
		if json.Unmarshal(v, &s) != nil {
			return nil, invalid(at, "must be a label id (UUID string).")
		}
		id, err := uuid.Parse(s)
		if err != nil {
			return nil, invalid(at, "must be a label id (UUID string).")
		}
		if !cat.labels[id] {
			return nil, reference(invalid(at, "is not a label of this book."))
		}
		if !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	return ids, nil
}

// campaignValue reads the campaign id of a campaign condition.
func campaignValue(r Rule, cat *catalog) (uuid.UUID, error) {
	var s string
	if isNull(r.cond.Value) || json.Unmarshal(r.cond.Value, &s) != nil {
		return uuid.Nil, invalid(valueAt(r), "must be a campaign id (UUID string).")
	}
	id, err := uuid.Parse(s)
	if err != nil {
		return uuid.Nil, invalid(valueAt(r), "must be a campaign id (UUID string).")
	}
	if !cat.campaigns[id] {
		return uuid.Nil, reference(invalid(valueAt(r), "is not a campaign of this book."))
	}
	return id, nil
}

// references are the label and campaign ids a rule names, so the book
// can be asked about all of them at once.
func references(r Rule, labels, campaigns map[uuid.UUID]bool) {
	if r.kind != kindCondition {
		for _, c := range r.rules {
			references(c, labels, campaigns)
		}
		return
	}
	if r.cond.CampaignID != nil {
		campaigns[*r.cond.CampaignID] = true
	}
	switch r.cond.Field {
	case FieldLabels:
		var ss []string
		if json.Unmarshal(r.cond.Value, &ss) == nil {
			for _, s := range ss {
				if id, err := uuid.Parse(s); err == nil {
					labels[id] = true
				}
			}
		}
	case FieldCampaign:
		var s string
		if json.Unmarshal(r.cond.Value, &s) == nil {
			if id, err := uuid.Parse(s); err == nil {
				campaigns[id] = true
			}
		}
	}
}
