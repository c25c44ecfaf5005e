package mailmerge

import (
	"slices"
	"strings"
)

// parse splits src into literal text and merge expressions. intern returns
// the index of a distinct expression, so equal expressions share one index
// however they are spaced. A brace pair that does not hold a valid merge
// expression stays in the text as written. The scan is linear: every search
// starts where the previous one ended, and text segments are slices of src
// (a run of literal text between two expressions is one slice, however many
// brace pairs it holds).
func parse(src string, defined map[string]bool, intern func(expr) int) []segment {
	var segs []segment
	textStart := 0 // start of the literal text not yet in segs
	pos := 0
	for {
		open := strings.Index(src[pos:], "{{")
		if open < 0 {
			break
		}
		open += pos
		closing := strings.Index(src[open+2:], "}}")
		if closing < 0 {
			break
		}
		closing += open + 2
		// "{{ a {{first_name}}": the expression starts at the innermost "{{".
		open += strings.LastIndex(src[open:closing], "{{")
		pos = closing + 2
		e, ok := parseExpr(src[open+2:closing], defined)
		if !ok {
			continue
		}
		if open > textStart {
			segs = append(segs, segment{text: src[textStart:open], expr: -1})
		}
		segs = append(segs, segment{expr: intern(e)})
		textStart = pos
	}
	if textStart < len(src) {
		segs = append(segs, segment{text: src[textStart:], expr: -1})
	}
	return segs
}

// parseExpr parses the inside of "{{ ... }}":
//
//	field [ "|" "default" ":" quoted ]
//
// where field is a built-in merge field, unsubscribe_url or custom.<key>
// for a key the book defines, quoted is "..." or '...', and whitespace may
// surround every part.
func parseExpr(s string, defined map[string]bool) (expr, bool) {
	s = strings.TrimSpace(s)
	name, rest := s, ""
	if i := strings.IndexByte(s, '|'); i >= 0 {
		name, rest = strings.TrimSpace(s[:i]), strings.TrimSpace(s[i+1:])
	}
	var e expr
	switch {
	case name == "unsubscribe_url":
		e.kind = kindUnsubscribe
	case isField(name):
		e.kind, e.name = kindField, name
	case strings.HasPrefix(name, "custom.") && defined[name[len("custom."):]]:
		e.kind, e.name = kindCustom, name[len("custom."):]
	case strings.HasPrefix(name, "data.") && isPath(name[len("data."):]):
		e.kind, e.name = kindData, name[len("data."):]
	case strings.HasPrefix(name, "event.") && isPath(name[len("event."):]):
		e.kind, e.name = kindEvent, name[len("event."):]
	default:
		return expr{}, false
	}
	if rest == "" {
		if strings.IndexByte(s, '|') >= 0 {
			return expr{}, false // "{{ first_name | }}"
		}
		return e, true
	}
	rest, ok := strings.CutPrefix(rest, "default")
	if !ok {
		return expr{}, false
	}
	rest, ok = strings.CutPrefix(strings.TrimSpace(rest), ":")
	if !ok {
		return expr{}, false
	}
	rest = strings.TrimSpace(rest)
	if len(rest) < 2 || (rest[0] != '"' && rest[0] != '\'') || rest[len(rest)-1] != rest[0] {
		return expr{}, false
	}
	e.fallback = rest[1 : len(rest)-1]
	if strings.IndexByte(e.fallback, rest[0]) >= 0 {
		return expr{}, false // "a" "b": two strings, not one
	}
	return e, true
}

// isPath reports whether p is a dotted path of keys ("order.total"):
// letters, digits, "_" and "-", no empty key.
func isPath(p string) bool {
	if p == "" || len(p) > 200 {
		return false
	}
	for _, key := range strings.Split(p, ".") {
		if key == "" {
			return false
		}
		for _, r := range key {
			if !(r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
				return false
			}
		}
	}
	return true
}

// Field is a built-in merge field: the key a template writes ({{key}})
// and what people call it.
type Field struct {
	Key  string `json:"key"`
	Name string `json:"name"`
}

// BuiltIn lists the built-in merge fields other than unsubscribe_url and
// custom.<key>, in the order an editor offers them.
var BuiltIn = []Field{
	{"first_name", "First name"}, {"last_name", "Last name"}, {"full_name", "Full name"}, {"company", "Company"},
	{"job_title", "Job title"}, {"email", "Email"}, {"phone", "Phone"}, {"website", "Website"},
	{"birthday", "Birthday"}, {"book_name", "Book name"},
}

// isField reports whether name is a built-in merge field other than
// unsubscribe_url and custom.<key>.
func isField(name string) bool {
	return slices.ContainsFunc(BuiltIn, func(f Field) bool { return f.Key == name })
}

// splitAtBodyEnd splits the text segment holding the last "</body" so that
// the footer can go right before it; without one the footer goes last.
func splitAtBodyEnd(segs []segment) ([]segment, int) {
	for i := len(segs) - 1; i >= 0; i-- {
		if segs[i].expr >= 0 {
			continue
		}
		j := lastBodyEnd(segs[i].text)
		if j < 0 {
			continue
		}
		before, after := segs[i].text[:j], segs[i].text[j:]
		out := make([]segment, 0, len(segs)+1)
		out = append(out, segs[:i]...)
		if before != "" {
			out = append(out, segment{text: before, expr: -1})
		}
		at := len(out)
		out = append(out, segment{text: after, expr: -1})
		out = append(out, segs[i+1:]...)
		return out, at
	}
	return segs, len(segs)
}

// lastBodyEnd is the index of the last "</body" in s, in any ASCII case,
// or -1. Each search goes backwards from the previous candidate, so s is
// read once.
func lastBodyEnd(s string) int {
	const tag = "</body"
	for i := strings.LastIndex(s, "</"); i >= 0; i = strings.LastIndex(s[:i], "</") {
		if len(s)-i >= len(tag) && strings.EqualFold(s[i:i+len(tag)], tag) {
			return i
		}
	}
	return -1
}
