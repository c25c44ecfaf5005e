package mailmerge

import "strings"

// parse splits src into literal text and merge expressions. intern returns
// the index of a distinct expression, so equal expressions share one index
// however they are spaced. A brace pair that does not hold a valid merge
// expression stays in the text as written.
func parse(src string, intern func(expr) int) []segment {
	var segs []segment
	text := func(s string) {
		if s == "" {
			return
		}
		if n := len(segs); n > 0 && segs[n-1].expr < 0 {
			segs[n-1].text += s
			return
		}
		segs = append(segs, segment{text: s, expr: -1})
	}
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
		e, ok := parseExpr(src[open+2 : closing])
		if !ok {
			text(src[pos : closing+2])
			pos = closing + 2
			continue
		}
		text(src[pos:open])
		segs = append(segs, segment{expr: intern(e)})
		pos = closing + 2
	}
	text(src[pos:])
	return segs
}

// parseExpr parses the inside of "{{ ... }}":
//
//	field [ "|" "default" ":" quoted ]
//
// where field is a built-in merge field, unsubscribe_url or custom.<key>,
// quoted is "..." or '...', and whitespace may surround every part.
func parseExpr(s string) (expr, bool) {
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
	case strings.HasPrefix(name, "custom.") && isCustomKey(name[len("custom."):]):
		e.kind, e.name = kindCustom, name[len("custom."):]
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

// isField reports whether name is a built-in merge field other than
// unsubscribe_url and custom.<key>.
func isField(name string) bool {
	switch name {
	case "first_name", "last_name", "full_name", "company", "job_title",
		"email", "phone", "website", "birthday", "book_name":
		return true
	}
	return false
}

// isCustomKey mirrors the custom field key format (validate tag fieldkey):
// a lowercase letter, then up to 63 lowercase letters, digits or underscores.
func isCustomKey(k string) bool {
	if k == "" || len(k) > 64 || k[0] < 'a' || k[0] > 'z' {
		return false
	}
	for i := 1; i < len(k); i++ {
		c := k[i]
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '_' {
			return false
		}
	}
	return true
}

// splitAtBodyEnd splits the text segment holding the last "</body" so that
// the footer can go right before it; without one the footer goes last.
func splitAtBodyEnd(segs []segment) ([]segment, int) {
	for i := len(segs) - 1; i >= 0; i-- {
		if segs[i].expr >= 0 {
			continue
		}
		j := lastIndexFold(segs[i].text, "</body")
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

// lastIndexFold is strings.LastIndex for an ASCII-lowercase needle, ignoring
// ASCII case in s.
func lastIndexFold(s, lowerNeedle string) int {
	for i := len(s) - len(lowerNeedle); i >= 0; i-- {
		if strings.EqualFold(s[i:i+len(lowerNeedle)], lowerNeedle) {
			return i
		}
	}
	return -1
}
