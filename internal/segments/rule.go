package segments

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/google/uuid"

	"github.com/contactbook/contactbook/internal/apperr"
	"github.com/contactbook/contactbook/internal/enum"
	"github.com/contactbook/contactbook/internal/tracking"
)

// Rule is a group ({"all":[...]}, {"any":[...]}, {"not": rule}) or a
// condition ({"field", "op", "value", "campaign_id"}). It is built only
// by ParseRule, so every Rule has passed the language's structural checks
// and limits; what needs the book (its labels, custom fields and
// campaigns) is checked when it is compiled.
type Rule struct {
	kind  kind
	rules []Rule // all, any: the members; not: the one negated
	cond  Condition
	path  string // where the rule stands in the request: rule.all[2]
}

type kind uint8

const (
	kindAll kind = iota
	kindAny
	kindNot
	kindCondition
)

// Condition is one test of a contact.
type Condition struct {
	Field Field
	Op    Op
	// Value is the JSON value as given (nil when none was): its form
	// depends on the field's type, which custom fields learn from the book.
	Value      json.RawMessage
	CampaignID *uuid.UUID
	// Name is the event name of an event condition.
	Name string
}

// MatchAll is the rule {"all":[]}: every contact of the book.
func MatchAll() Rule { return Rule{kind: kindAll, rules: []Rule{}, path: "rule"} }

// MarshalJSON writes the rule in the form ParseRule reads.
func (r Rule) MarshalJSON() ([]byte, error) {
	switch r.kind {
	case kindAll:
		return json.Marshal(map[string][]Rule{"all": nonNil(r.rules)})
	case kindAny:
		return json.Marshal(map[string][]Rule{"any": nonNil(r.rules)})
	case kindNot:
		return json.Marshal(map[string]Rule{"not": r.rules[0]})
	}
	out := struct {
		Field      Field           `json:"field"`
		Op         Op              `json:"op"`
		Value      json.RawMessage `json:"value,omitempty"`
		CampaignID *uuid.UUID      `json:"campaign_id,omitempty"`
		Name       string          `json:"name,omitempty"`
	}{r.cond.Field, r.cond.Op, r.cond.Value, r.cond.CampaignID, r.cond.Name}
	return json.Marshal(out)
}

func nonNil(rs []Rule) []Rule {
	if rs == nil {
		return []Rule{}
	}
	return rs
}

// Field is what a condition tests: a contact field, custom.<key>, labels,
// starred, suppressed, an engagement (email.opened, ...) or campaign.
type Field string

// The fields that are not custom.
const (
	FieldFirstName  Field = "first_name"
	FieldLastName   Field = "last_name"
	FieldCompany    Field = "company"
	FieldJobTitle   Field = "job_title"
	FieldNotes      Field = "notes"
	FieldWebsite    Field = "website"
	FieldEmail      Field = "email"
	FieldPhone      Field = "phone"
	FieldCreatedAt  Field = "created_at"
	FieldUpdatedAt  Field = "updated_at"
	FieldBirthday   Field = "birthday"
	FieldStarred    Field = "starred"
	FieldSuppressed Field = "suppressed"
	FieldLabels     Field = "labels"
	FieldSent       Field = "email.sent"
	FieldDelivered  Field = "email.delivered"
	FieldOpened     Field = "email.opened"
	FieldClicked    Field = "email.clicked"
	FieldBounced    Field = "email.bounced"
	FieldComplained Field = "email.complained"
	FieldCampaign   Field = "campaign"
	// FieldEvent tests the contact's product events of one name.
	FieldEvent Field = "event"
)

// family is a kind of field: it decides the ops and the value.
type family uint8

const (
	famText family = iota + 1
	famNumber
	famTime     // created_at, updated_at, custom dates
	famBirthday // the date itself, and its month
	famBool
	famLabels
	famEngagement
	famCampaign
	famEvent
)

// builtinFields are the fields that are not custom, with their family.
var builtinFields = map[Field]family{
	FieldFirstName: famText, FieldLastName: famText, FieldCompany: famText, FieldJobTitle: famText,
	FieldNotes: famText, FieldWebsite: famText, FieldEmail: famText, FieldPhone: famText,
	FieldCreatedAt: famTime, FieldUpdatedAt: famTime, FieldBirthday: famBirthday,
	FieldStarred: famBool, FieldSuppressed: famBool, FieldLabels: famLabels,
	FieldSent: famEngagement, FieldDelivered: famEngagement, FieldOpened: famEngagement,
	FieldClicked: famEngagement, FieldBounced: famEngagement, FieldComplained: famEngagement,
	FieldCampaign: famCampaign, FieldEvent: famEvent,
}

// customKey is the form of a custom field's key (as the book's field
// definitions require it).
var customKey = regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)

// CustomKey returns the key of a custom.<key> field ("" for other fields).
func (f Field) CustomKey() string {
	if k, ok := strings.CutPrefix(string(f), "custom."); ok {
		return k
	}
	return ""
}

// ParseField reads a field name: one of the built-in fields or
// custom.<key> with a key of the form field definitions have.
func ParseField(s string) (Field, error) {
	f := Field(s)
	if _, ok := builtinFields[f]; ok {
		return f, nil
	}
	if k := f.CustomKey(); k != "" && customKey.MatchString(k) {
		return f, nil
	}
	return "", apperr.Invalidf("`field` must be a contact field (first_name, company, email, ...), custom.<key>, labels, starred, suppressed, email.sent, email.opened, ... or campaign.")
}

// Op is what a condition asks of its field.
type Op string

// Ops.
const (
	OpEq                Op = "eq"
	OpNeq               Op = "neq"
	OpContains          Op = "contains"
	OpNotContains       Op = "not_contains"
	OpStartsWith        Op = "starts_with"
	OpEndsWith          Op = "ends_with"
	OpIsSet             Op = "is_set"
	OpIsNotSet          Op = "is_not_set"
	OpGt                Op = "gt"
	OpGte               Op = "gte"
	OpLt                Op = "lt"
	OpLte               Op = "lte"
	OpBefore            Op = "before"
	OpAfter             Op = "after"
	OpWithinLastDays    Op = "within_last_days"
	OpNotWithinLastDays Op = "not_within_last_days"
	OpInMonth           Op = "in_month"
	OpHasAny            Op = "has_any"
	OpHasAll            Op = "has_all"
	OpHasNone           Op = "has_none"
	OpEver              Op = "ever"
	OpNever             Op = "never"
	OpEnrolled          Op = "enrolled"
	OpNotEnrolled       Op = "not_enrolled"
	OpActive            Op = "active"
	OpCompleted         Op = "completed"
	OpRemoved           Op = "removed"
)

// Ops is every op, in the order the API document lists them.
var Ops = []Op{
	OpEq, OpNeq, OpContains, OpNotContains, OpStartsWith, OpEndsWith, OpIsSet, OpIsNotSet,
	OpGt, OpGte, OpLt, OpLte, OpBefore, OpAfter, OpWithinLastDays, OpNotWithinLastDays, OpInMonth,
	OpHasAny, OpHasAll, OpHasNone, OpEver, OpNever,
	OpEnrolled, OpNotEnrolled, OpActive, OpCompleted, OpRemoved,
}

// familyOps lists the ops of each family, in the order the API document
// and the dashboard offer them.
var familyOps = map[family][]Op{
	famText:       {OpEq, OpNeq, OpContains, OpNotContains, OpStartsWith, OpEndsWith, OpIsSet, OpIsNotSet},
	famNumber:     {OpEq, OpNeq, OpGt, OpGte, OpLt, OpLte, OpIsSet, OpIsNotSet},
	famTime:       {OpBefore, OpAfter, OpWithinLastDays, OpNotWithinLastDays, OpIsSet, OpIsNotSet},
	famBirthday:   {OpBefore, OpAfter, OpInMonth, OpIsSet, OpIsNotSet},
	famBool:       {OpEq},
	famLabels:     {OpHasAny, OpHasAll, OpHasNone},
	famEngagement: {OpWithinLastDays, OpNotWithinLastDays, OpEver, OpNever},
	famCampaign:   {OpEnrolled, OpNotEnrolled, OpActive, OpCompleted, OpRemoved},
	famEvent:      {OpWithinLastDays, OpNotWithinLastDays, OpEver, OpNever},
}

// negation maps each negative op to the positive op it denies: a negative
// op holds when no value of the contact satisfies the positive one, an
// unset value included.
var negation = map[Op]Op{
	OpNeq: OpEq, OpNotContains: OpContains, OpHasNone: OpHasAny, OpIsNotSet: OpIsSet,
	OpNotWithinLastDays: OpWithinLastDays, OpNever: OpEver, OpNotEnrolled: OpEnrolled,
}

// ParseOp reads an op name.
func ParseOp(s string) (Op, error) {
	return enum.Parse(Ops, "`op`", s)
}

func opList(ops []Op) string {
	s := make([]string, len(ops))
	for i, o := range ops {
		s[i] = string(o)
	}
	return strings.Join(s, ", ")
}

// invalid is the 400 of a rule that breaks the language, naming where.
func invalid(path, format string, args ...any) error {
	return apperr.Invalidf("`%s` "+format, append([]any{path}, args...)...)
}

// ParseRule reads one rule from dec, which stands before it (the rule is
// the next JSON value); path names it in errors ("rule"). It reads token
// by token and stops at the first error, so a rule nested megabytes deep
// or holding thousands of conditions is refused after a few groups or 50
// conditions, naming the place.
func ParseRule(dec *json.Decoder, path string) (Rule, error) {
	p := parser{dec: dec}
	return p.rule(path, 0)
}

// ParseStoredRule reads a rule as the segments table keeps it.
func ParseStoredRule(b []byte) (Rule, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	r, err := ParseRule(dec, "rule")
	if err != nil {
		return Rule{}, fmt.Errorf("stored rule: %w", err)
	}
	unquoteIntegers(&r)
	return r, nil
}

type parser struct {
	dec        *json.Decoder
	conditions int
}

func (p *parser) token(path string) (json.Token, error) {
	tok, err := p.dec.Token()
	if err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, apperr.Wrap(err, apperr.InvalidInput, "`%s` is not valid JSON: the body is cut short or malformed there.", path)
	}
	return tok, nil
}

const ruleShape = `must be a rule: a group {"all":[...]}, {"any":[...]}, {"not": rule}, or a condition {"field", "op", "value"}`

// rule reads the rule at path, with groups enclosing groups around it.
func (p *parser) rule(path string, groups int) (Rule, error) {
	tok, err := p.token(path)
	if err != nil {
		return Rule{}, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return Rule{}, invalid(path, ruleShape+".")
	}
	r := Rule{kind: kindCondition, path: path}
	var seenGroup, seenCond bool
	var field, op *string
	for p.dec.More() {
		tok, err := p.token(path)
		if err != nil {
			return Rule{}, err
		}
		key, _ := tok.(string)
		at := path + "." + key
		switch key {
		case "all", "any", "not":
			if seenGroup || seenCond {
				return Rule{}, invalid(path, "must be one group or one condition: %s cannot stand beside other keys.", key)
			}
			seenGroup = true
			if groups+1 > MaxGroups {
				return Rule{}, invalid(path, "nests groups too deep: at most %d groups (all, any, not) on any path from the root, the root included.", MaxGroups)
			}
			if key == "not" {
				r.kind = kindNot
				child, err := p.rule(at, groups+1)
				if err != nil {
					return Rule{}, err
				}
				r.rules = []Rule{child}
				continue
			}
			r.kind = kindAll
			if key == "any" {
				r.kind = kindAny
			}
			if r.rules, err = p.group(at, groups+1); err != nil {
				return Rule{}, err
			}
		case "field", "op":
			if seenGroup {
				return Rule{}, invalid(path, "must be one group or one condition: %s cannot stand beside a group.", key)
			}
			seenCond = true
			var s string
			if err := p.dec.Decode(&s); err != nil {
				return Rule{}, invalid(at, "must be a string.")
			}
			if key == "field" {
				field = &s
			} else {
				op = &s
			}
		case "value":
			if seenGroup {
				return Rule{}, invalid(path, "must be one group or one condition: value cannot stand beside a group.")
			}
			seenCond = true
			if err := p.dec.Decode(&r.cond.Value); err != nil {
				return Rule{}, apperr.Wrap(err, apperr.InvalidInput, "`%s` is not valid JSON (malformed, or nested too deep).", at)
			}
		case "campaign_id":
			if seenGroup {
				return Rule{}, invalid(path, "must be one group or one condition: campaign_id cannot stand beside a group.")
			}
			seenCond = true
			var s string
			if err := p.dec.Decode(&s); err != nil {
				return Rule{}, invalid(at, "must be a campaign id (UUID string).")
			}
			id, err := uuid.Parse(s)
			if err != nil {
				return Rule{}, invalid(at, "must be a campaign id (UUID string).")
			}
			r.cond.CampaignID = &id
		case "name":
			if seenGroup {
				return Rule{}, invalid(path, "must be one group or one condition: name cannot stand beside a group.")
			}
			seenCond = true
			if err := p.dec.Decode(&r.cond.Name); err != nil {
				return Rule{}, invalid(at, "must be an event name (a string).")
			}
		default:
			return Rule{}, invalid(at, "is not part of a rule: a group has all, any or not; a condition has field, op, value, (for email.*) campaign_id and (for event) name.")
		}
	}
	if _, err := p.token(path); err != nil { // the closing brace
		return Rule{}, err
	}
	if seenGroup {
		return r, nil
	}
	if !seenCond {
		return Rule{}, invalid(path, ruleShape+".")
	}
	if p.conditions++; p.conditions > MaxConditions {
		return Rule{}, invalid(path, "is one condition too many: a rule holds at most %d conditions.", MaxConditions)
	}
	return r, p.condition(&r, field, op)
}

// group reads the array of a group's members.
func (p *parser) group(path string, groups int) ([]Rule, error) {
	tok, err := p.token(path)
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '[' {
		return nil, invalid(path, "must be an array of rules.")
	}
	rules := []Rule{}
	for i := 0; p.dec.More(); i++ {
		r, err := p.rule(fmt.Sprintf("%s[%d]", path, i), groups)
		if err != nil {
			return nil, err
		}
		rules = append(rules, r)
	}
	_, err = p.token(path) // the closing bracket
	return rules, err
}

// condition checks what a condition can be checked for without the book:
// the field exists, the op belongs to the field (custom fields wait for
// their type), a value is there when the op takes one.
func (p *parser) condition(r *Rule, field, op *string) error {
	if field == nil {
		return invalid(r.path+".field", "is required in a condition.")
	}
	f, err := ParseField(*field)
	if err != nil {
		return invalid(r.path+".field", "is not a field a rule can test: use a contact field (first_name, company, email, ...), custom.<key>, labels, starred, suppressed, email.sent, email.opened, ... or campaign.")
	}
	r.cond.Field = f
	if op == nil {
		return invalid(r.path+".op", "is required in a condition.")
	}
	o, err := ParseOp(*op)
	if err != nil {
		return invalid(r.path+".op", "is not an op of the rule language.")
	}
	r.cond.Op = o
	if fam, builtin := builtinFields[f]; builtin {
		if err := checkOp(r.path, f, fam, o); err != nil {
			return err
		}
	}
	if r.cond.CampaignID != nil && builtinFields[f] != famEngagement {
		return invalid(r.path+".campaign_id", "only narrows the email.* conditions to one campaign.")
	}
	if f == FieldEvent {
		if err := tracking.CheckName(r.path+".name", r.cond.Name); err != nil {
			return err
		}
	} else if r.cond.Name != "" {
		return invalid(r.path+".name", "only names the event of an event condition.")
	}
	return nil
}

// checkOp refuses an op that the field's family does not have.
func checkOp(path string, f Field, fam family, o Op) error {
	for _, allowed := range familyOps[fam] {
		if allowed == o {
			return nil
		}
	}
	return invalid(path+".op", "cannot be %s for %s: use one of %s.", o, f, opList(familyOps[fam]))
}
