package httpapi

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"

	"github.com/contactbook/contactbook/internal/apperr"
)

// writeJSON writes v as the response body with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		body = []byte(`{"error":{"code":"SERVER_ERROR","message":"The response could not be encoded."}}`)
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(body)
	_, _ = w.Write([]byte{'\n'})
}

type dataBody struct {
	Data any `json:"data"`
}

// Meta describes a page of a list.
type Meta struct {
	Page  int   `json:"page"`
	Limit int   `json:"limit"`
	Total int64 `json:"total"`
}

// meta describes the page p with total items in all.
func (p Paging) meta(total int64) Meta {
	return Meta{Page: p.Page(), Limit: p.Limit, Total: total}
}

// cursorMeta is Meta with the cursor of the next page (null on the last).
type cursorMeta struct {
	Meta
	NextCursor *string `json:"next_cursor"`
}

type pageBody struct {
	Data any `json:"data"`
	Meta any `json:"meta"`
}

// data answers {data: v}.
func data(w http.ResponseWriter, status int, v any) error {
	writeJSON(w, status, dataBody{Data: v})
	return nil
}

// page answers {data: items, meta} for the page p of a list of total
// items.
func page(w http.ResponseWriter, items any, p Paging, total int64) error {
	writeJSON(w, http.StatusOK, pageBody{Data: items, Meta: p.meta(total)})
	return nil
}

// cursorPage answers a page of a cursor-paged list: meta also carries the
// next page's cursor, null on the last page (next empty).
func cursorPage(w http.ResponseWriter, items any, p Paging, total int64, next string) error {
	meta := cursorMeta{Meta: p.meta(total)}
	if next != "" {
		meta.NextCursor = &next
	}
	writeJSON(w, http.StatusOK, pageBody{Data: items, Meta: meta})
	return nil
}

// nextMeta is the meta of a list paged by cursor alone: its size is not
// counted, the next page's cursor is null on the last.
type nextMeta struct {
	Limit      int     `json:"limit"`
	NextCursor *string `json:"next_cursor"`
}

// nextPage answers a page of a list paged by cursor alone.
func nextPage(w http.ResponseWriter, items any, limit int, next string) error {
	meta := nextMeta{Limit: limit}
	if next != "" {
		meta.NextCursor = &next
	}
	writeJSON(w, http.StatusOK, pageBody{Data: items, Meta: meta})
	return nil
}

// message answers {data: {message}}.
func message(w http.ResponseWriter, text string) error {
	return data(w, http.StatusOK, map[string]string{"message": text})
}

// noContent answers 204.
func noContent(w http.ResponseWriter) error {
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// nonNil turns a nil slice into an empty one so lists render as [].
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// html answers one of the public HTML pages (web/). The page renders into
// a buffer first, so a template error becomes a clean 500 instead of half
// a page. The pages are self-contained, so the policy allows nothing but
// their inline style; unsubscribe URLs carry a token, so no referrer.
func html(w http.ResponseWriter, status int, render func(io.Writer) error) error {
	var buf bytes.Buffer
	if err := render(&buf); err != nil {
		return apperr.Wrap(err, apperr.Internal, "render page")
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
	return nil
}
