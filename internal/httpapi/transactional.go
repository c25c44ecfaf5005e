package httpapi

import (
	"net/http"
	"strconv"

	"github.com/contactbook/contactbook/internal/access"
	"github.com/contactbook/contactbook/internal/apperr"
	"github.com/contactbook/contactbook/internal/transactional"
)

// Handlers of transactional emails: send one, list the book's, read one.

func (s *Server) sendTransactional(w http.ResponseWriter, r *http.Request, sc access.Scope) error {
	var in transactional.SendInput
	if err := decodeJSON(w, r, &in); err != nil {
		return err
	}
	m, err := s.transactional.Send(r.Context(), sc, in)
	if err != nil {
		return err
	}
	return data(w, http.StatusAccepted, m)
}

func (s *Server) listTransactional(w http.ResponseWriter, r *http.Request, sc access.Scope) error {
	q := r.URL.Query()
	f := transactional.Filter{Status: transactional.Status(q.Get("status")), Cursor: q.Get("cursor")}
	tpl, err := queryUUID(r, "template_id")
	if err != nil {
		return err
	}
	f.TemplateID = tpl
	if f.Limit, err = cursorLimit(r, transactional.MaxLimit); err != nil {
		return err
	}
	items, next, err := s.transactional.List(r.Context(), sc, f)
	if err != nil {
		return err
	}
	limit := f.Limit
	if limit == 0 {
		limit = transactional.DefaultLimit
	}
	return nextPage(w, nonNil(items), limit, next)
}

func (s *Server) getTransactional(w http.ResponseWriter, r *http.Request, sc access.Scope) error {
	id, err := pathUUID(r, "id")
	if err != nil {
		return err
	}
	m, err := s.transactional.Get(r.Context(), sc.Actor, id)
	if err != nil {
		return err
	}
	return data(w, http.StatusOK, m)
}

// cursorLimit reads the limit of a list paged by cursor: 1 to max, 0 when
// absent (the list's default); anything else is refused, not clamped.
func cursorLimit(r *http.Request, max int) (int, error) {
	raw := r.URL.Query().Get("limit")
	if raw == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(raw)
	if err != nil || n < 1 || n > max {
		return 0, apperr.Invalidf("`limit` must be an integer from 1 to %d.", max)
	}
	return n, nil
}
