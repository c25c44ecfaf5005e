package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"mime"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"

	"github.com/contactbook/contactbook/internal/apperr"
)

// maxJSONBody bounds every JSON request body.
const maxJSONBody = 2 << 20

// decodeJSON reads a JSON object body into dst. It insists on
// Content-Type: application/json, bounds the size, refuses text that is not
// valid UTF-8 or holds NUL (jsonText), and explains a wrong type by naming
// the field. Unknown fields are ignored.
func decodeJSON(w http.ResponseWriter, r *http.Request, dst any) error {
	body, err := readJSON(w, r)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(dst); err != nil {
		if field := failingField(body, dst); field != "" && !isTypeError(err) {
			// A value that parses itself (a UUID, a time) failed: its own
			// error says what was wrong but not where.
			return apperr.Invalidf("`%s` holds a value of the wrong form: %s.", field, strings.TrimPrefix(err.Error(), "json: "))
		}
		return jsonError(err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return apperr.Invalidf("The body must hold exactly one JSON object.")
	}
	return nil
}

// readJSON reads a JSON body with decodeJSON's checks (type, size, text)
// for a handler that decodes it itself.
func readJSON(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	if err := requireJSON(r); err != nil {
		return nil, err
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxJSONBody))
	if tooBig := (*http.MaxBytesError)(nil); errors.As(err, &tooBig) {
		return nil, jsonError(err)
	} else if err != nil {
		return nil, apperr.Wrap(err, apperr.InvalidInput, "The body could not be read to its end.")
	}
	return body, jsonText(body)
}

func requireJSON(r *http.Request) error {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "application/json" {
		return apperr.New(apperr.UnsupportedMediaType, "Send the body as JSON with the header Content-Type: application/json.")
	}
	return nil
}

func jsonError(err error) error {
	var (
		tooBig    *http.MaxBytesError
		syntaxErr *json.SyntaxError
		typeErr   *json.UnmarshalTypeError
	)
	switch {
	case errors.As(err, &tooBig):
		return apperr.New(apperr.PayloadTooLarge, "The body is larger than %d MB.", maxJSONBody>>20)
	case errors.Is(err, io.EOF):
		return apperr.Invalidf("The body is empty; send a JSON object.")
	case errors.As(err, &syntaxErr):
		return apperr.Invalidf("The body is not valid JSON (error at byte %d).", syntaxErr.Offset)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return apperr.Invalidf("The body is not valid JSON: it ends too early.")
	case errors.As(err, &typeErr):
		if typeErr.Field == "" {
			return apperr.Invalidf("The body must be a JSON object.")
		}
		return apperr.Invalidf("`%s` must be %s, not %s.", typeErr.Field, jsonTypeName(typeErr.Type.Kind().String(), typeErr.Type.String()), typeErr.Value)
	}
	// Values that parse themselves (UUIDs, times) fail with their own text,
	// which says what was wrong with the value but not which field held it.
	return apperr.Invalidf("The body holds a value of the wrong form: %s.", strings.TrimPrefix(err.Error(), "json: "))
}

func isTypeError(err error) bool {
	var typeErr *json.UnmarshalTypeError
	return errors.As(err, &typeErr)
}

// failingField names the top-level field of the JSON object body whose
// value does not decode into its field of dst (a struct), "" when none
// does on its own (the body is not an object, or the fault is deeper).
func failingField(body []byte, dst any) string {
	var obj map[string]json.RawMessage
	if json.Unmarshal(body, &obj) != nil {
		return ""
	}
	t := reflect.TypeOf(dst)
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || t.Kind() != reflect.Struct {
		return ""
	}
	for _, f := range reflect.VisibleFields(t) {
		if !f.IsExported() || f.Anonymous {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		raw, ok := obj[name]
		if ok && json.Unmarshal(raw, reflect.New(f.Type).Interface()) != nil {
			return name
		}
	}
	return ""
}

func jsonTypeName(kind, typ string) string {
	switch {
	case typ == "uuid.UUID" || strings.HasSuffix(typ, "uuid.UUID"):
		return "a UUID string"
	case kind == "string":
		return "a string"
	case kind == "bool":
		return "a boolean"
	case strings.HasPrefix(kind, "int") || strings.HasPrefix(kind, "uint"):
		return "an integer"
	case strings.HasPrefix(kind, "float"):
		return "a number"
	case kind == "slice" || kind == "array":
		return "an array"
	case kind == "map" || kind == "struct":
		return "an object"
	}
	return "of another type"
}

// pathUUID parses a UUID path parameter.
func pathUUID(r *http.Request, name string) (uuid.UUID, error) {
	id, err := uuid.Parse(chi.URLParam(r, name))
	if err != nil {
		// What is not an id names nothing: the same answer as an id that
		// names nothing of the caller's.
		return uuid.Nil, apperr.NotFoundf("The %s in the path names nothing here (ids are UUIDs).", name)
	}
	return id, nil
}

// queryUUID parses an optional UUID query parameter (nil when absent).
func queryUUID(r *http.Request, name string) (*uuid.UUID, error) {
	raw := r.URL.Query().Get(name)
	if raw == "" {
		return nil, nil
	}
	id, err := uuid.Parse(raw)
	if err != nil {
		return nil, apperr.Invalidf("The query parameter %s must be a UUID.", name)
	}
	return &id, nil
}

// maxQueryInt bounds integer query parameters to what a PostgreSQL
// integer holds, so no value overflows on its way to SQL.
const maxQueryInt = math.MaxInt32

// queryInt reads an integer query parameter of 0..maxQueryInt.
func queryInt(r *http.Request, name string, def int) (int, error) {
	raw := r.URL.Query().Get(name)
	if raw == "" {
		return def, nil
	}
	n, err := strconv.Atoi(raw)
	if err != nil || n < 0 || n > maxQueryInt {
		return 0, apperr.Invalidf("The query parameter %s must be an integer from 0 to %d.", name, maxQueryInt)
	}
	return n, nil
}

// Paging of a list: offset-based with an optional cursor (public
// contacts) or page-based (the internal lists). Limits above the maximum
// are clamped; zero means the default. The answer's meta is built from it
// (page, cursorPage), so parsing and meta live here and in respond.go only.
type Paging struct {
	Limit  int
	Offset int
	// Cursor is the cursor query parameter of a cursor-paged list.
	Cursor string
}

// Page is the 1-based page number the paging stands for.
func (p Paging) Page() int { return p.Offset/p.Limit + 1 }

func limitParam(r *http.Request, def, max int) (int, error) {
	limit, err := queryInt(r, "limit", def)
	if err != nil {
		return 0, err
	}
	if limit == 0 {
		limit = def
	}
	return min(limit, max), nil
}

// offsetPaging reads limit, offset and cursor.
func offsetPaging(r *http.Request, def, max int) (Paging, error) {
	limit, err := limitParam(r, def, max)
	if err != nil {
		return Paging{}, err
	}
	offset, err := queryInt(r, "offset", 0)
	if err != nil {
		return Paging{}, err
	}
	return Paging{Limit: limit, Offset: offset, Cursor: r.URL.Query().Get("cursor")}, nil
}

// pagePaging reads page (1-based) and limit.
func pagePaging(r *http.Request, def, max int) (Paging, error) {
	limit, err := limitParam(r, def, max)
	if err != nil {
		return Paging{}, err
	}
	pg, err := queryInt(r, "page", 1)
	if err != nil {
		return Paging{}, err
	}
	if pg < 1 {
		return Paging{}, apperr.Invalidf("The query parameter page must be 1 or more.")
	}
	if pg > 1_000_000 {
		return Paging{}, apperr.Invalidf("The query parameter page is too large.")
	}
	return Paging{Limit: limit, Offset: (pg - 1) * limit}, nil
}

// queryBool reads an optional boolean query parameter.
func queryBool(r *http.Request, name string) (*bool, error) {
	raw := r.URL.Query().Get(name)
	if raw == "" {
		return nil, nil
	}
	b, err := strconv.ParseBool(raw)
	if err != nil {
		return nil, apperr.Invalidf("The query parameter %s must be true or false.", name)
	}
	return &b, nil
}

// queryTime reads an optional RFC 3339 time query parameter.
func queryTime(r *http.Request, name string) (*time.Time, error) {
	raw := r.URL.Query().Get(name)
	if raw == "" {
		return nil, nil
	}
	t, err := time.Parse(time.RFC3339, raw)
	if err != nil {
		return nil, apperr.Invalidf("The query parameter %s must be an RFC 3339 time such as 2026-01-31T09:00:00Z.", name)
	}
	return &t, nil
}
