package mailer

import (
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
			buf = appendString(buf, p.Subject)
		}
		buf = appendMap(buf, "substitutions", p.Substitutions)
		buf = appendMap(buf, "headers", p.Headers)
		buf = appendMap(buf, "custom_args", p.CustomArgs)
		buf = append(buf, '}')
	}
	return append(buf, "]}"...)
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
	buf = appendString(buf, email)
	if name != "" {
		buf = append(buf, `,"name":`...)
		buf = appendString(buf, name)
	}
	return append(buf, '}')
}

// appendMap writes `,"name":{...}` with sorted keys (stable bodies), nothing
// for an empty map, as omitempty does.
func appendMap(buf []byte, name string, m map[string]string) []byte {
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
		buf = appendString(buf, m[k])
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
