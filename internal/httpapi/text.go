package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/contactbook/contactbook/internal/apperr"
)

// Text that reaches the service must be valid UTF-8 without NUL: PostgreSQL
// text cannot hold U+0000, and Go's JSON decoder would otherwise replace
// invalid bytes with U+FFFD behind the client's back. The rules are checked
// here, once, for every JSON body (decodeJSON), form (formText), query
// parameter, header and path (withTextCheck), so that no handler or service
// has to think about them and the answer always names what to fix.

// textProblem says what is wrong with s, or "" when it is acceptable text.
func textProblem(s string) string {
	switch {
	case strings.IndexByte(s, 0) >= 0:
		return "holds a NUL character (\\u0000), which text may not contain"
	case !utf8.ValidString(s):
		return "is not valid UTF-8"
	}
	return ""
}

// withTextCheck refuses requests whose path, query parameters or header
// values hold NUL or invalid UTF-8, naming the offender.
func withTextCheck(log *slog.Logger) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if err := requestText(r); err != nil {
				writeError(w, r, log, err)
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

func requestText(r *http.Request) error {
	if p := textProblem(r.URL.Path); p != "" {
		return apperr.Invalidf("The path %s.", p)
	}
	if err := valuesText("query parameter", r.URL.Query()); err != nil {
		return err
	}
	for name, vals := range r.Header {
		for _, v := range vals {
			if p := textProblem(v); p != "" {
				return apperr.Invalidf("The header %s %s.", name, p)
			}
		}
	}
	return nil
}

// valuesText checks the names and values of a query or form.
func valuesText(kind string, vals url.Values) error {
	for name, vs := range vals {
		if p := textProblem(name); p != "" {
			return apperr.Invalidf("A %s name %s.", kind, p)
		}
		for _, v := range vs {
			if p := textProblem(v); p != "" {
				return apperr.Invalidf("The %s %s %s.", kind, name, p)
			}
		}
	}
	return nil
}

// formText checks the fields of a parsed form body (urlencoded or
// multipart: ParseMultipartForm fills PostForm too).
func formText(r *http.Request) error {
	return valuesText("form field", r.PostForm)
}

// parsePostedForm reads a page's form post (urlencoded, or multipart of
// at most maxBody bytes) into r.PostForm and checks its text: an oversize
// body is PAYLOAD_TOO_LARGE, an unreadable one INVALID_INPUT.
func parsePostedForm(r *http.Request, mediaType string, maxBody int64) error {
	var err error
	if mediaType == "multipart/form-data" {
		err = r.ParseMultipartForm(maxBody)
	} else {
		err = r.ParseForm()
	}
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return apperr.New(apperr.PayloadTooLarge, "The form is too large.")
		}
		return apperr.Invalidf("The form could not be read.")
	}
	return formText(r)
}

// maxTextWalkDepth bounds the nesting the walk follows: no body of this
// API nests more than a few levels, and a hostile one must not make the
// walk's path grow with the body.
const maxTextWalkDepth = 64

// nulEscape is the only way a JSON document can carry NUL: a raw 0x00
// byte is a syntax error.
var nulEscape = []byte(`\u0000`)

// jsonText checks every string of a JSON document, names and values. The
// common case (valid UTF-8, no NUL escape) costs two linear scans; only a
// body that fails them is walked token by token to name the field.
func jsonText(body []byte) error {
	bad := invalidUTF8At(body)
	if bad < 0 && !bytes.Contains(body, nulEscape) {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	var path jsonPath
	for {
		tok, err := dec.Token()
		if err != nil {
			// A syntax error is the decoder's to report; invalid UTF-8
			// outside a string is one too, but say what it is.
			if bad >= 0 {
				return apperr.Invalidf("The body is not valid UTF-8.")
			}
			return nil
		}
		covered := bad >= 0 && dec.InputOffset() > int64(bad)
		s, isString := tok.(string)
		key := path.atKey()
		if isString {
			if p := textProblem(s); p != "" || covered {
				if p == "" {
					p = "is not valid UTF-8"
				}
				if key {
					return apperr.Invalidf("A field name in %s %s.", path.where(), p)
				}
				return apperr.Invalidf("%s %s.", path.field(), p)
			}
		} else if covered {
			return apperr.Invalidf("The body is not valid UTF-8.")
		}
		path.step(tok, key)
		if len(path.frames) > maxTextWalkDepth {
			return apperr.Invalidf("The body nests deeper than %d levels.", maxTextWalkDepth)
		}
	}
}

// invalidUTF8At is the offset of the first byte of b that is not valid
// UTF-8, or -1.
func invalidUTF8At(b []byte) int {
	if utf8.Valid(b) {
		return -1
	}
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n == 1 {
			return i
		}
		i += n
	}
	return -1
}

// jsonPath follows a json.Decoder's tokens and names the current value the
// way validation messages do: emails[0].address.
type jsonPath struct{ frames []jsonFrame }

type jsonFrame struct {
	array   bool
	index   int
	key     string
	wantKey bool
}

// atKey reports whether the next string token is an object's field name.
func (p *jsonPath) atKey() bool {
	n := len(p.frames)
	return n > 0 && !p.frames[n-1].array && p.frames[n-1].wantKey
}

// step moves past tok; key says whether tok was a field name.
func (p *jsonPath) step(tok json.Token, key bool) {
	switch tok {
	case json.Delim('{'):
		p.frames = append(p.frames, jsonFrame{wantKey: true})
		return
	case json.Delim('['):
		p.frames = append(p.frames, jsonFrame{array: true})
		return
	case json.Delim('}'), json.Delim(']'):
		p.frames = p.frames[:len(p.frames)-1]
	default:
		if key {
			top := &p.frames[len(p.frames)-1]
			top.key, top.wantKey = tok.(string), false
			return
		}
	}
	// A value ended: the enclosing container moves on.
	if n := len(p.frames); n > 0 {
		top := &p.frames[n-1]
		if top.array {
			top.index++
		} else {
			top.wantKey = true
		}
	}
}

// String is the path of the current value ("" at the top level).
func (p *jsonPath) String() string {
	var b strings.Builder
	for i, f := range p.frames {
		if f.array {
			b.WriteString("[" + strconv.Itoa(f.index) + "]")
			continue
		}
		if f.wantKey {
			break
		}
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(f.key)
	}
	return b.String()
}

// field names the current value for a message that starts with it.
func (p *jsonPath) field() string {
	if s := p.String(); s != "" {
		return "`" + s + "`"
	}
	return "The body"
}

// where names the current object for "in ...".
func (p *jsonPath) where() string {
	if s := p.String(); s != "" {
		return "`" + s + "`"
	}
	return "the body"
}
