package segments

import (
	"strings"
	"time"
	"unicode/utf8"
)

// The SQL of each family's positive ops (compile.go says how they
// combine). Each function checks the condition's value first, so a rule
// compiles only when all of it is valid.

// textColumns are the contact's own text columns a rule can test.
var textColumns = map[Field]string{
	FieldFirstName: "first_name", FieldLastName: "last_name", FieldCompany: "company",
	FieldJobTitle: "job_title", FieldNotes: "notes", FieldWebsite: "website",
}

// escapeLike makes s match literally inside a LIKE pattern.
func escapeLike(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

// textMatch returns the test of expr against a text value for op,
// case-insensitive: eq compares lower-cased, the others are ILIKE
// patterns with the value escaped.
func textMatch(op Op, v string) func(w *sqlWriter, expr string) {
	return func(w *sqlWriter, expr string) {
		switch op {
		case OpEq:
			w.printf("lower(", expr, ") = lower(", w.param(v), ")")
		case OpContains:
			w.printf(expr, " ILIKE ", w.param("%"+escapeLike(v)+"%"))
		case OpStartsWith:
			w.printf(expr, " ILIKE ", w.param(escapeLike(v)+"%"))
		case OpEndsWith:
			w.printf(expr, " ILIKE ", w.param("%"+escapeLike(v)))
		}
	}
}

func (c *compiler) text(r Rule, op Op) (func(w *sqlWriter), error) {
	f := r.cond.Field
	if op == OpIsSet {
		return func(w *sqlWriter) {
			switch f {
			case FieldEmail:
				w.printf(w.col("emails"), " <> '[]'::jsonb")
			case FieldPhone:
				w.printf(w.col("phones"), " <> '[]'::jsonb")
			default:
				w.printf(w.col(textColumns[f]), " <> ''")
			}
		}, nil
	}
	v, err := textValue(r)
	if err != nil {
		return nil, err
	}
	match := textMatch(op, v)
	return func(w *sqlWriter) {
		switch f {
		case FieldEmail:
			// Any of the contact's addresses, through the book's address
			// index (contacts' read model contact_addresses).
			w.printf(w.col("id"), " IN (SELECT contact_id FROM contact_addresses WHERE book_id = ", w.param(w.bookID), " AND ")
			match(w, "address_lower")
			w.printf(")")
		case FieldPhone:
			w.printf("EXISTS (SELECT 1 FROM jsonb_array_elements(", w.col("phones"), ") ph WHERE ")
			match(w, "ph.value->>'number'")
			w.printf(")")
		default:
			if searchable[f] && utf8.RuneCountInString(v) >= 3 {
				// The value is then in the contact's search text too:
				// a test the trigram index answers narrows the book to
				// the contacts that can match before each is checked.
				w.printf(w.col("search"), " ILIKE ", w.param("%"+escapeLike(v)+"%"), " AND ")
			}
			match(w, w.col(textColumns[f]))
		}
	}, nil
}

// searchable are the text columns the contact's search text holds (the
// generated column search: first name, last name, company and the
// addresses, lower-cased). A value of three characters or more that one
// of them holds is in search too, which the trigram index
// contacts_search_trgm_idx answers for a whole table; a shorter value
// has no trigram to look up.
var searchable = map[Field]bool{FieldFirstName: true, FieldLastName: true, FieldCompany: true}

// midnight is the start of a date's day, UTC.
func midnight(d time.Time) time.Time {
	return time.Date(d.Year(), d.Month(), d.Day(), 0, 0, 0, 0, time.UTC)
}

// timestamp is created_at and updated_at: before a date is before its
// first instant (UTC), after a date is from the next day on.
func (c *compiler) timestamp(r Rule, op Op) (func(w *sqlWriter), error) {
	col := string(r.cond.Field)
	var (
		cmp   string
		bound time.Time
	)
	switch op {
	case OpIsSet:
		return constant(true), nil // always set
	case OpBefore, OpAfter:
		d, err := dateValue(r)
		if err != nil {
			return nil, err
		}
		cmp, bound = " < ", midnight(d)
		if op == OpAfter {
			cmp, bound = " >= ", midnight(d).AddDate(0, 0, 1)
		}
	case OpWithinLastDays:
		n, err := daysValue(r)
		if err != nil {
			return nil, err
		}
		cmp, bound = " >= ", c.now.AddDate(0, 0, -n)
	}
	return func(w *sqlWriter) { w.printf(w.col(col), cmp, w.param(bound)) }, nil
}

func (c *compiler) birthday(r Rule, op Op) (func(w *sqlWriter), error) {
	switch op {
	case OpIsSet:
		return func(w *sqlWriter) { w.printf(w.col("birthday"), " IS NOT NULL") }, nil
	case OpInMonth:
		m, err := intValue(r, 1, 12, "a month")
		if err != nil {
			return nil, err
		}
		return func(w *sqlWriter) {
			w.printf("COALESCE(extract(month FROM ", w.col("birthday"), ") = ", w.param(m), ", false)")
		}, nil
	}
	d, err := dateValue(r)
	if err != nil {
		return nil, err
	}
	cmp := " < "
	if op == OpAfter {
		cmp = " > "
	}
	return func(w *sqlWriter) {
		w.printf("COALESCE(", w.col("birthday"), cmp, w.param(d.Format(time.DateOnly)), "::date, false)")
	}, nil
}

func (c *compiler) labels(r Rule, op Op) (func(w *sqlWriter), error) {
	ids, err := labelsValue(r, c.cat)
	if err != nil {
		return nil, err
	}
	return func(w *sqlWriter) {
		w.printf(w.col("id"), " IN (SELECT contact_id FROM contact_label_members WHERE label_id = ANY(", w.param(ids), "::uuid[])")
		if op == OpHasAll {
			w.printf(" GROUP BY contact_id HAVING count(*) = ", w.param(int64(len(ids))))
		}
		w.printf(")")
	}, nil
}

// engagementKinds are the delivery event kinds of the email.* fields.
var engagementKinds = map[Field]string{
	FieldDelivered: "delivered", FieldOpened: "opened", FieldClicked: "clicked",
	FieldBounced: "bounced", FieldComplained: "complained",
}

func (c *compiler) engagement(r Rule, op Op) (func(w *sqlWriter), error) {
	var since *time.Time
	if op == OpWithinLastDays {
		n, err := daysValue(r)
		if err != nil {
			return nil, err
		}
		t := c.now.AddDate(0, 0, -n)
		since = &t
	}
	campaign := r.cond.CampaignID
	if campaign != nil && !c.cat.campaigns[*campaign] {
		return nil, reference(invalid(r.path+".campaign_id", "is not a campaign of this book."))
	}
	if r.cond.Field == FieldSent {
		// The service's own record of the campaign emails it sent: the
		// successful completions of email steps (the campaigns package's
		// read model campaign_email_sends, migration 00043).
		return func(w *sqlWriter) {
			w.printf(w.col("id"), ` IN (SELECT contact_id FROM campaign_email_sends
				WHERE result = 'success' AND book_id = `, w.param(w.bookID))
			if since != nil {
				w.printf(" AND completed_at >= ", w.param(*since))
			}
			if campaign != nil {
				w.printf(" AND campaign_id = ", w.param(*campaign))
			}
			w.printf(")")
		}, nil
	}
	kind := engagementKinds[r.cond.Field]
	return func(w *sqlWriter) {
		// Served by delivery_events_book_kind_idx, from the index alone
		// (through delivery's read model delivery_event_records).
		w.printf(w.col("id"), " IN (SELECT contact_id FROM delivery_event_records WHERE book_id = ", w.param(w.bookID),
			" AND kind = ", w.param(kind))
		if since != nil {
			w.printf(" AND occurred_at >= ", w.param(*since))
		}
		if campaign != nil {
			w.printf(" AND campaign_id = ", w.param(*campaign))
		}
		w.printf(")")
	}, nil
}

// event is the condition on the contact's product events of one name,
// like the engagement conditions: served by tracked_events_book_name_idx
// from the index alone (through tracking's read model
// tracked_event_records), whatever the number of events.
func (c *compiler) event(r Rule, op Op) (func(w *sqlWriter), error) {
	var since *time.Time
	if op == OpWithinLastDays {
		n, err := daysValue(r)
		if err != nil {
			return nil, err
		}
		t := c.now.AddDate(0, 0, -n)
		since = &t
	}
	name := r.cond.Name
	return func(w *sqlWriter) {
		w.printf(w.col("id"), " IN (SELECT contact_id FROM tracked_event_records WHERE book_id = ", w.param(w.bookID),
			" AND name = ", w.param(name))
		if since != nil {
			w.printf(" AND occurred_at >= ", w.param(*since))
		}
		w.printf(")")
	}, nil
}

func (c *compiler) campaign(r Rule, op Op) (func(w *sqlWriter), error) {
	id, err := campaignValue(r, c.cat)
	if err != nil {
		return nil, err
	}
	return func(w *sqlWriter) {
		w.printf(w.col("id"), " IN (SELECT contact_id FROM campaign_participations WHERE campaign_id = ", w.param(id))
		if op != OpEnrolled {
			w.printf(" AND status = ", w.param(string(op)))
		}
		w.printf(")")
	}, nil
}

// numberText is the form of a number value that PostgreSQL's numeric
// reads (custom values are checked when written; the guard keeps a value
// written otherwise from failing the statement).
const numberText = `'^\s*[-+]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]{1,4})?\s*$'`

// dateText is the form of a date value; such values compare as text in
// the C collation exactly as dates compare.
const dateText = `'^[0-9]{4}-[0-9]{2}-[0-9]{2}$'`

var numberCmp = map[Op]string{OpEq: " = ", OpGt: " > ", OpGte: " >= ", OpLt: " < ", OpLte: " <= "}

func (c *compiler) custom(r Rule, key string, op Op) (func(w *sqlWriter), error) {
	def, ok := c.cat.fields[key]
	if !ok {
		return nil, reference(invalid(r.path+".field", "names no custom field of this book."))
	}
	fam := famText
	switch def.typ {
	case "number":
		fam = famNumber
	case "date":
		fam = famTime
	}
	if err := checkOp(r.path, r.cond.Field, fam, r.cond.Op); err != nil {
		return nil, reference(invalid(r.path+".op", "cannot be %s: custom.%s is a %s field; use one of %s.", r.cond.Op, key, def.typ, opList(familyOps[fam])))
	}
	if noValue[r.cond.Op] {
		if err := requireNoValue(r); err != nil {
			return nil, err
		}
	}
	// values writes "contact id IN (the contacts whose value passes test)".
	values := func(test func(w *sqlWriter)) func(w *sqlWriter) {
		return func(w *sqlWriter) {
			w.printf(w.col("id"), " IN (SELECT contact_id FROM contact_custom_values WHERE field_id = ", w.param(def.id), " AND ")
			test(w)
			w.printf(")")
		}
	}
	if op == OpIsSet {
		return values(func(w *sqlWriter) { w.printf("value <> ''") }), nil
	}
	switch fam {
	case famNumber:
		n, err := numberValue(r)
		if err != nil {
			return nil, err
		}
		return values(func(w *sqlWriter) {
			w.printf("(CASE WHEN value ~ ", numberText, " THEN value::numeric END)", numberCmp[op], w.param(n), "::numeric")
		}), nil
	case famTime:
		return c.customDate(r, op, values)
	}
	v, err := textValue(r)
	if err != nil {
		return nil, err
	}
	match := textMatch(op, v)
	return values(func(w *sqlWriter) { match(w, "value") }), nil
}

func (c *compiler) customDate(r Rule, op Op, values func(func(w *sqlWriter)) func(w *sqlWriter)) (func(w *sqlWriter), error) {
	guarded := "(CASE WHEN value ~ " + dateText + " THEN value END) COLLATE \"C\""
	if op == OpWithinLastDays {
		n, err := daysValue(r)
		if err != nil {
			return nil, err
		}
		today := c.now.UTC()
		from, to := today.AddDate(0, 0, -n).Format(time.DateOnly), today.Format(time.DateOnly)
		return values(func(w *sqlWriter) {
			w.printf(guarded, " BETWEEN ", w.param(from), " AND ", w.param(to))
		}), nil
	}
	d, err := dateValue(r)
	if err != nil {
		return nil, err
	}
	cmp := " < "
	if op == OpAfter {
		cmp = " > "
	}
	return values(func(w *sqlWriter) { w.printf(guarded, cmp, w.param(d.Format(time.DateOnly))) }), nil
}
