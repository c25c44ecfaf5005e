package mailmerge

import (
	"bytes"
	"encoding/json"
	"strconv"
)

// maxFlatDepth bounds how deep Flatten follows nested objects: a merge
// path names at most this many keys.
const maxFlatDepth = 8

// Flatten turns a JSON object into merge values by dotted path:
// {"order":{"id":"A-1","total":12.5}} gives "order.id" -> "A-1" and
// "order.total" -> "12.5" (and "order" -> the object's JSON). Strings are
// taken as they are, numbers and booleans as written, null as "", arrays
// and objects as their compact JSON. Anything but an object gives an
// empty map.
func Flatten(raw []byte) map[string]string {
	out := map[string]string{}
	var obj map[string]json.RawMessage
	if len(raw) == 0 || json.Unmarshal(raw, &obj) != nil {
		return out
	}
	flattenInto(out, "", obj, 1)
	return out
}

func flattenInto(out map[string]string, prefix string, obj map[string]json.RawMessage, depth int) {
	for k, v := range obj {
		path := k
		if prefix != "" {
			path = prefix + "." + k
		}
		v = bytes.TrimSpace(v)
		if len(v) == 0 {
			continue
		}
		switch v[0] {
		case '"':
			var s string
			if json.Unmarshal(v, &s) == nil {
				out[path] = s
			}
		case '{':
			var buf bytes.Buffer
			if json.Compact(&buf, v) == nil {
				out[path] = buf.String()
			}
			if depth < maxFlatDepth {
				var inner map[string]json.RawMessage
				if json.Unmarshal(v, &inner) == nil {
					flattenInto(out, path, inner, depth+1)
				}
			}
		case '[':
			var buf bytes.Buffer
			if json.Compact(&buf, v) == nil {
				out[path] = buf.String()
			}
		case 'n':
			out[path] = ""
		default:
			// A number or a boolean, as written (a number keeps its form:
			// 12.50 stays 12.50).
			if _, err := strconv.ParseFloat(string(v), 64); err == nil || string(v) == "true" || string(v) == "false" {
				out[path] = string(v)
			}
		}
	}
}
