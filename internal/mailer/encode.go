package mailer

import (
	"bytes"
	"slices"
	"strconv"
	"unicode/utf8"
)

// encodeMail writes the v3 mail/send body for b: from, reply_to, a
// text/plain content when there is one, one text/html content and one
// personalization per recipient. It is the JSON
// that helpers/mail.GetRequestBody produces for the same mail.SGMailV3,
// written by hand because encoding/json's reflection over 1,000
// personalizations with three maps each was most of a batch's CPU time.
// Every value that becomes an email header (addresses and display names,
// subject, extra headers) goes through headerText: this is the one place
// that keeps line breaks out of headers, whatever the value came from.
func encodeMail(b Batch) []byte {
	size := 256 + len(b.HTML) + len(b.Text)
	for _, p := range b.Personalizations {
		size += 96 + len(p.To) + len(p.ToName) + len(p.Subject) + mapSize(p.Substitutions) + mapSize(p.Headers) + mapSize(p.CustomArgs)
	}
	buf := make([]byte, 0, size+size/8)
	buf = append(buf, `{"from":`...)
	buf = appendAddress(buf, b.FromEmail, b.FromName)
	if b.ReplyTo != "" {
		buf = append(buf, `,"reply_to":`...)
		buf = appendAddress(buf, b.ReplyTo, "")
	}
	buf = append(buf, `,"content":[`...)
	if b.Text != "" {
		buf = append(buf, `{"type":"text/plain","value":`...)
		buf = appendString(buf, b.Text)
		buf = append(buf, `},`...)
	}
	buf = append(buf, `{"type":"text/html","value":`...)
	buf = appendString(buf, b.HTML)
	buf = append(buf, `}],"personalizations":[`...)
	for i, p := range b.Personalizations {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = append(buf, `{"to":[`...)
		buf = appendAddress(buf, p.To, p.ToName)
		buf = append(buf, ']')
		if p.Subject != "" {
			buf = append(buf, `,"subject":`...)
			buf = appendString(buf, headerText(p.Subject))
		}
		buf = appendMap(buf, "substitutions", p.Substitutions, false)
		buf = appendMap(buf, "headers", p.Headers, true)
		buf = appendMap(buf, "custom_args", p.CustomArgs, false)
		buf = append(buf, '}')
	}
	buf = append(buf, ']')
	if t := b.Tracking; t != nil {
		buf = append(buf, `,"tracking_settings":{"click_tracking":{"enable":`...)
		buf = strconv.AppendBool(buf, t.Clicks)
		buf = append(buf, `,"enable_text":`...)
		buf = strconv.AppendBool(buf, t.Clicks)
		buf = append(buf, `},"open_tracking":{"enable":`...)
		buf = strconv.AppendBool(buf, t.Opens)
		buf = append(buf, `}}`...)
	}
	return append(buf, '}')
}

func mapSize(m map[string]string) int {
	n := 0
	for k, v := range m {
		n += len(k) + len(v) + 6
	}
	return n
}

func appendAddress(buf []byte, email, name string) []byte {
	buf = append(buf, `{"email":`...)
	buf = appendString(buf, headerText(email))
	if name = headerText(name); name != "" {
		buf = append(buf, `,"name":`...)
		buf = appendString(buf, name)
	}
	return append(buf, '}')
}

// headerText is s fit for an email header: every run of control
// characters (CR and LF above all, which would end the header and start
// another one) and Unicode line or paragraph separators, with the spaces
// around it, becomes one space (none at the start or the end). s itself
// comes back when it is clean, which is nearly always.
func headerText(s string) string {
	if !needsFolding(s) {
		return s
	}
	b := make([]byte, 0, len(s))
	inRun := false
	for _, r := range s {
		switch {
		case foldedInHeader(r):
			b = bytes.TrimRight(b, " ")
			inRun = true
		case r == ' ' && inRun:
		default:
			if inRun && len(b) > 0 {
				b = append(b, ' ')
			}
			inRun = false
			b = utf8.AppendRune(b, r)
		}
	}
	return string(b)
}

// needsFolding reports whether s holds a rune foldedInHeader folds, by
// its UTF-8 bytes: a byte scan, as cheap as the JSON encoding after it.
func needsFolding(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c < 0x20 || c == 0x7f:
			return true
		case c == 0xc2 && i+1 < len(s) && s[i+1] <= 0x9f: // U+0080..U+009F
			return true
		case c == 0xe2 && i+2 < len(s) && s[i+1] == 0x80 && (s[i+2] == 0xa8 || s[i+2] == 0xa9): // U+2028, U+2029
			return true
		}
	}
	return false
}

// foldedInHeader reports whether r may not appear in a header as it is:
// C0 and C1 control characters, DEL, and the Unicode line and paragraph
// separators.
func foldedInHeader(r rune) bool {
	return r < 0x20 || (r >= 0x7f && r <= 0x9f) || r == '\u2028' || r == '\u2029'
}

// appendMap writes `,"name":{...}` with sorted keys (stable bodies), nothing
// for an empty map, as omitempty does; header values go through
// headerText.
func appendMap(buf []byte, name string, m map[string]string, header bool) []byte {
	if len(m) == 0 {
		return buf
	}
	var small [8]string
	keys := small[:0]
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	buf = append(buf, ',', '"')
	buf = append(buf, name...)
	buf = append(buf, `":{`...)
	for i, k := range keys {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = appendString(buf, k)
		buf = append(buf, ':')
		if header {
			buf = appendString(buf, headerText(m[k]))
		} else {
			buf = appendString(buf, m[k])
		}
	}
	return append(buf, '}')
}

const hex = "0123456789abcdef"

// appendString writes s as a JSON string: quotes, backslashes and control
// characters escaped, invalid UTF-8 replaced by U+FFFD (as encoding/json
// does), U+2028 and U+2029 escaped so the body is also valid JavaScript.
func appendString(buf []byte, s string) []byte {
	buf = append(buf, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			buf = append(buf, s[start:i]...)
			switch c {
			case '"', '\\':
				buf = append(buf, '\\', c)
			case '\n':
				buf = append(buf, '\\', 'n')
			case '\r':
				buf = append(buf, '\\', 'r')
			case '\t':
				buf = append(buf, '\\', 't')
			default:
				buf = append(buf, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			buf = append(buf, s[start:i]...)
			buf = append(buf, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			buf = append(buf, s[start:i]...)
			buf = append(buf, `\u202`...)
			buf = strconv.AppendInt(buf, int64(r&0xf), 16)
			i += size
			start = i
			continue
		}
		i += size
	}
	buf = append(buf, s[start:]...)
	return append(buf, '"')
}
