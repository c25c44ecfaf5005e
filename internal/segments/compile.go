package segments

import (
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
)

// How a rule becomes SQL. Every condition is a boolean expression over one
// contacts row (the alias the caller names) that is never NULL, so NOT of
// it is its exact complement: a negative op is NOT of its positive op,
// and a contact without the value satisfies the negative one. Conditions
// on other tables are uncorrelated "id IN (SELECT contact_id ...)"
// subqueries: at the top of the WHERE clause PostgreSQL turns them into
// semi-joins, under OR or NOT into one hashed subplan each, evaluated once
// per statement rather than once per contact. Values are parameters; the
// only text written into the SQL is the compiler's own.

// catalog is what the book has that a rule may name.
type catalog struct {
	bookID    uuid.UUID
	fields    map[string]customField // by key
	labels    map[uuid.UUID]bool     // the named ids that are labels of the book
	campaigns map[uuid.UUID]bool     // the named ids that are campaigns of the book
}

type customField struct {
	id  uuid.UUID
	typ string // text, url, number, date
}

// node is a compiled rule: a group of nodes, or one condition's SQL.
type node struct {
	kind     kind
	children []node
	write    func(w *sqlWriter) // a condition: its positive SQL
	negate   bool               // a condition: write NOT of it
}

// sqlWriter builds the SQL of a predicate, numbering its parameters after
// those the caller's statement already has.
type sqlWriter struct {
	b      strings.Builder
	args   []any
	alias  string
	bookID uuid.UUID
}

func (w *sqlWriter) param(v any) string {
	w.args = append(w.args, v)
	return "$" + strconv.Itoa(len(w.args))
}

func (w *sqlWriter) col(name string) string { return w.alias + "." + name }

func (w *sqlWriter) printf(parts ...string) {
	for _, p := range parts {
		w.b.WriteString(p)
	}
}

func (n node) writeTo(w *sqlWriter) {
	switch n.kind {
	case kindAll, kindAny:
		if len(n.children) == 0 {
			if n.kind == kindAll {
				w.printf("TRUE")
			} else {
				w.printf("FALSE")
			}
			return
		}
		sep := " AND "
		if n.kind == kindAny {
			sep = " OR "
		}
		w.printf("(")
		for i, c := range n.children {
			if i > 0 {
				w.printf(sep)
			}
			c.writeTo(w)
		}
		w.printf(")")
	case kindNot:
		w.printf("NOT (")
		n.children[0].writeTo(w)
		w.printf(")")
	default:
		if n.negate {
			w.printf("NOT (")
			n.write(w)
			w.printf(")")
			return
		}
		n.write(w)
	}
}

// constant is a condition that holds for every contact or for none.
func constant(v bool) func(w *sqlWriter) {
	return func(w *sqlWriter) {
		if v {
			w.printf("TRUE")
		} else {
			w.printf("FALSE")
		}
	}
}

// compiler turns a parsed rule into nodes. lenient is for saved rules: a
// condition naming what the book no longer has (a deleted label, field or
// campaign) tests a value no contact has, instead of failing the read.
type compiler struct {
	cat     *catalog
	now     time.Time
	lenient bool
}

func (c *compiler) compile(r Rule) (node, error) {
	if r.kind != kindCondition {
		n := node{kind: r.kind}
		for _, child := range r.rules {
			cn, err := c.compile(child)
			if err != nil {
				return node{}, err
			}
			n.children = append(n.children, cn)
		}
		return n, nil
	}
	op := r.cond.Op
	positive, negate := op, false
	if p, ok := negation[op]; ok {
		positive, negate = p, true
	}
	write, err := c.condition(r, positive)
	if err != nil {
		if c.lenient && errors.Is(err, errReference) {
			// No contact has the value: the positive op holds for none.
			return node{kind: kindCondition, write: constant(false), negate: negate}, nil
		}
		return node{}, err
	}
	return node{kind: kindCondition, write: write, negate: negate}, nil
}

// condition returns the SQL writer of the positive op of a condition
// (op is the condition's own op, or the positive op it negates).
func (c *compiler) condition(r Rule, op Op) (func(w *sqlWriter), error) {
	f := r.cond.Field
	if key := f.CustomKey(); key != "" {
		return c.custom(r, key, op)
	}
	if noValue[r.cond.Op] {
		if err := requireNoValue(r); err != nil {
			return nil, err
		}
	}
	switch builtinFields[f] {
	case famText:
		return c.text(r, op)
	case famTime:
		return c.timestamp(r, op)
	case famBirthday:
		return c.birthday(r, op)
	case famBool:
		b, err := boolValue(r)
		if err != nil {
			return nil, err
		}
		return func(w *sqlWriter) {
			if f == FieldStarred {
				w.printf(w.col("starred"), " = ", w.param(b))
				return
			}
			// The suppression rule (suppression.ContactSuppressed): every
			// address the contact holds is suppressed.
			w.printf("(", w.col("suppressed_at"), " IS NOT NULL) = ", w.param(b))
		}, nil
	case famLabels:
		return c.labels(r, op)
	case famEngagement:
		return c.engagement(r, op)
	case famCampaign:
		return c.campaign(r, op)
	case famEvent:
		return c.event(r, op)
	}
	return nil, invalid(r.path+".field", "is not a field a rule can test.")
}
