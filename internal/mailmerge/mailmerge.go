// Package mailmerge compiles campaign email templates (subject and HTML body)
// with merge fields written in double braces — {{first_name}}, {{ company }},
// {{custom.plan}}, {{unsubscribe_url}} and the fallback form
// {{first_name | default: "there"}} — and renders them for recipients. A
// template is parsed once by Compile and then rendered many times: Render
// produces one recipient's subject and HTML directly (send-test), while
// SharedHTML and Personalize produce the batch form the email provider
// expands itself (one shared HTML body with placeholders plus a small map of
// substitutions per recipient); both paths give byte-identical HTML. Values
// are HTML-escaped in the body and inserted as-is in the subject; anything
// between braces that is not a known merge expression stays visible as written
// so the author notices it, and so does {{custom.<key>}} for a key the book
// does not define. Every body gets the compliance footer (company name,
// postal address and a visible unsubscribe link).
//
// Compile and every rendering take time linear in the template's size, whatever
// its shape: a template is data a customer controls, up to a megabyte.
package mailmerge

import (
	"html"
	"strconv"
	"strings"
)

// Values are one recipient's merge data.
type Values struct {
	// Fields holds the built-in merge fields by name: first_name last_name
	// full_name company job_title email phone website birthday book_name.
	// A missing full_name is derived from first_name and last_name.
	Fields map[string]string
	// Custom holds custom field values by key ({{custom.<key>}}).
	Custom map[string]string
	// UnsubscribeURL is this recipient's unsubscribe link, used by
	// {{unsubscribe_url}} and by the footer.
	UnsubscribeURL string
	// Data holds a transactional email's data by dotted path
	// ({{data.<key>}}, {{data.<key>.<key>}}); see Flatten.
	Data map[string]string
	// Event holds the properties of the event that entered the recipient
	// into the campaign by dotted path ({{event.<key>}}); see Flatten.
	Event map[string]string
}

// Footer is the compliance footer appended to every campaign email.
type Footer struct {
	CompanyName, AddressLine1, AddressLine2, City, State, PostalCode, Country string
}

// placeholderBase starts every placeholder. It has the shape of an HTML
// character reference, so it can never appear in an HTML-escaped value (every
// '&' of a value becomes "&amp;") nor in the escaped footer; Compile extends it
// by a few letters when the template's own text contains it
// (placeholderPrefix).
const placeholderBase = "&cbm"

type exprKind uint8

const (
	kindField exprKind = iota
	kindCustom
	kindUnsubscribe
	kindData
	kindEvent
)

// expr is one distinct merge expression: a field plus an optional fallback.
type expr struct {
	kind     exprKind
	name     string // field name or custom key
	fallback string
}

// segment is either literal text (expr < 0) or a merge expression.
type segment struct {
	text string
	expr int
}

// Template is a compiled email template (subject + body_html). It is
// immutable and safe for concurrent use.
type Template struct {
	subject []segment
	body    []segment
	// footerAt is the index in body before which the footer goes: before the
	// last </body> when the body has one, else at the end.
	footerAt int
	exprs    []expr
	// tokens[i] is the placeholder of exprs[i] in the shared HTML; empty for
	// expressions used only in the subject.
	tokens []string
	// bodyExprs lists the expressions that have a placeholder, the footer's
	// unsubscribe link included.
	bodyExprs []int
	// unsubscribe is the expression the footer link uses.
	unsubscribe int
	sharedHead  string // shared HTML before the footer
	sharedTail  string // shared HTML after the footer
	bodyLen     int    // length of the literal body text, to size buffers
}

// Compile parses a template. customKeys are the custom field keys the
// book defines: {{custom.<key>}} for any other key is not a merge field and
// stays as written. Compile never fails: text it does not understand is
// kept as written.
func Compile(subject, bodyHTML string, customKeys []string) *Template {
	t := &Template{}
	defined := make(map[string]bool, len(customKeys))
	for _, k := range customKeys {
		defined[k] = true
	}
	index := map[expr]int{}
	intern := func(e expr) int {
		if i, ok := index[e]; ok {
			return i
		}
		index[e] = len(t.exprs)
		t.exprs = append(t.exprs, e)
		return len(t.exprs) - 1
	}
	t.subject = parse(subject, defined, intern)
	t.body = parse(bodyHTML, defined, intern)
	t.body, t.footerAt = splitAtBodyEnd(t.body)
	t.unsubscribe = intern(expr{kind: kindUnsubscribe})

	prefix := placeholderPrefix(bodyHTML)
	t.tokens = make([]string, len(t.exprs))
	addToken := func(i int) {
		if t.tokens[i] == "" {
			t.tokens[i] = prefix + strconv.Itoa(len(t.bodyExprs)) + ";"
			t.bodyExprs = append(t.bodyExprs, i)
		}
	}
	for _, s := range t.body {
		if s.expr >= 0 {
			addToken(s.expr)
		} else {
			t.bodyLen += len(s.text)
		}
	}
	addToken(t.unsubscribe)

	var head, tail strings.Builder
	for i, s := range t.body {
		b := &head
		if i >= t.footerAt {
			b = &tail
		}
		if s.expr >= 0 {
			b.WriteString(t.tokens[s.expr])
		} else {
			b.WriteString(s.text)
		}
	}
	t.sharedHead, t.sharedTail = head.String(), tail.String()
	return t
}

// CustomKeys returns the custom field keys the template uses (subject and
// body), in order of first use, so a caller can load or fill exactly those.
func (t *Template) CustomKeys() []string {
	var keys []string
	for _, e := range t.exprs {
		if e.kind == kindCustom {
			keys = append(keys, e.name)
		}
	}
	return keys
}

// Placeholders is how many substitutions Personalize returns: the
// distinct merge expressions of the body, the footer's link included.
func (t *Template) Placeholders() int { return len(t.bodyExprs) }

// Render renders the template for one recipient directly. Its HTML equals
// SharedHTML(f) with Personalize(v)'s substitutions applied.
func (t *Template) Render(v Values, f Footer) (subject, html string) {
	var b strings.Builder
	b.Grow(t.bodyLen + 1024)
	for i, s := range t.body {
		if i == t.footerAt {
			writeFooter(&b, f, escapeHTML(t.value(t.unsubscribe, v)))
		}
		if s.expr >= 0 {
			b.WriteString(escapeHTML(t.value(s.expr, v)))
		} else {
			b.WriteString(s.text)
		}
	}
	if t.footerAt == len(t.body) {
		writeFooter(&b, f, escapeHTML(t.value(t.unsubscribe, v)))
	}
	return t.renderSubject(v), b.String()
}

// RenderPlain renders the template for one recipient without the
// compliance footer: a transactional email (a receipt, a password link)
// is not marketing and carries no unsubscribe link.
func (t *Template) RenderPlain(v Values) (subject, html string) {
	var b strings.Builder
	b.Grow(t.bodyLen + 256)
	for _, s := range t.body {
		if s.expr >= 0 {
			b.WriteString(escapeHTML(t.value(s.expr, v)))
		} else {
			b.WriteString(s.text)
		}
	}
	return t.renderSubject(v), b.String()
}

// SharedHTML is the body every recipient of a batch shares: each distinct
// merge expression is replaced by its placeholder ("&cbm0;", "&cbm1;", ...,
// lengthened to "&cbmx0;" or another few letters if the template's own text
// contains "&cbm") and the footer is included, its unsubscribe link pointing at the
// unsubscribe_url placeholder.
func (t *Template) SharedHTML(f Footer) string {
	var b strings.Builder
	b.Grow(len(t.sharedHead) + len(t.sharedTail) + 1024)
	b.WriteString(t.sharedHead)
	writeFooter(&b, f, t.tokens[t.unsubscribe])
	b.WriteString(t.sharedTail)
	return b.String()
}

// Personalize returns one recipient's rendered subject and the substitutions
// (placeholder -> HTML-escaped value) that turn SharedHTML into its body.
func (t *Template) Personalize(v Values) (subject string, substitutions map[string]string) {
	substitutions = make(map[string]string, len(t.bodyExprs))
	for _, i := range t.bodyExprs {
		substitutions[t.tokens[i]] = escapeHTML(t.value(i, v))
	}
	return t.renderSubject(v), substitutions
}

// renderSubject renders the subject unescaped. Line breaks (from the
// template or a value) become spaces: a subject is a single header line.
func (t *Template) renderSubject(v Values) string {
	var s string
	if len(t.subject) == 1 && t.subject[0].expr < 0 {
		s = t.subject[0].text
	} else {
		var b strings.Builder
		for _, seg := range t.subject {
			if seg.expr >= 0 {
				b.WriteString(t.value(seg.expr, v))
			} else {
				b.WriteString(seg.text)
			}
		}
		s = b.String()
	}
	if strings.ContainsAny(s, "\r\n") {
		s = strings.Join(strings.FieldsFunc(s, func(r rune) bool { return r == '\r' || r == '\n' }), " ")
	}
	return s
}

// placeholderPrefix is placeholderBase, or when body contains it,
// placeholderBase and the first run of letters that follows none of its
// occurrences in body; no placeholder then occurs in body's own text
// (placeholderBase cannot overlap itself, so every occurrence of the
// prefix would start at one of placeholderBase). Runs of n letters are
// tried once 26^n exceeds the number of occurrences, so a free one
// exists and is found among the first occurrences+1 tried: a single scan
// of body, however it is shaped.
func placeholderPrefix(body string) string {
	var after []string // the text after each occurrence, as slices of body
	for rest := body; ; {
		i := strings.Index(rest, placeholderBase)
		if i < 0 {
			break
		}
		rest = rest[i+len(placeholderBase):]
		after = append(after, rest)
	}
	if len(after) == 0 {
		return placeholderBase
	}
	n := 1
	for runs := len(suffixLetters); runs <= len(after); runs *= len(suffixLetters) {
		n++
	}
	taken := make(map[string]bool, len(after))
	for _, a := range after {
		if len(a) >= n {
			taken[a[:n]] = true
		}
	}
	run := make([]byte, n)
	for i := 0; ; i++ {
		// The i-th run of n letters, its first letter varying fastest.
		for j, k := 0, i; j < n; j, k = j+1, k/len(suffixLetters) {
			run[j] = suffixLetters[k%len(suffixLetters)]
		}
		if !taken[string(run)] {
			return placeholderBase + string(run)
		}
	}
}

// suffixLetters extend a placeholder; "x" first, so the common case of a
// template that mentions "&cbm" once gets "&cbmx".
const suffixLetters = "xyzabcdefghijklmnopqrstuvw"

// value is the unescaped text of expression i for v, the fallback applied.
func (t *Template) value(i int, v Values) string {
	e := t.exprs[i]
	var s string
	switch e.kind {
	case kindField:
		s = v.Fields[e.name]
		if e.name == "full_name" && strings.TrimSpace(s) == "" {
			s = strings.TrimSpace(v.Fields["first_name"] + " " + v.Fields["last_name"])
		}
	case kindCustom:
		s = v.Custom[e.name]
	case kindUnsubscribe:
		s = v.UnsubscribeURL
	case kindData:
		s = v.Data[e.name]
	case kindEvent:
		s = v.Event[e.name]
	}
	if e.fallback != "" && strings.TrimSpace(s) == "" {
		return e.fallback
	}
	return s
}

// PlaceholderURL is what send-test shows for a custom field the sample
// contact has no value for: https://example.com/placeholder/custom.<key>.
func PlaceholderURL(key string) string {
	return "https://example.com/placeholder/custom." + key
}

// escapeHTML escapes text for HTML element content and quoted attribute
// values. It returns s itself when nothing needs escaping.
func escapeHTML(s string) string {
	if !strings.ContainsAny(s, `&<>"'`) {
		return s
	}
	return html.EscapeString(s)
}
