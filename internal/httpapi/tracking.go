package httpapi

import (
	"net/http"

	"github.com/contactbook/contactbook/internal/access"
	"github.com/contactbook/contactbook/internal/tracking"
)

// Handlers of product events: report one, list a contact's.

func (s *Server) recordEvent(w http.ResponseWriter, r *http.Request, sc access.Scope) error {
	var in tracking.Input
	if err := decodeJSON(w, r, &in); err != nil {
		return err
	}
	e, err := s.tracking.Record(r.Context(), sc, in)
	if err != nil {
		return err
	}
	return data(w, http.StatusAccepted, e)
}

func (s *Server) contactEvents(w http.ResponseWriter, r *http.Request, sc access.Scope) error {
	id, err := pathUUID(r, "id")
	if err != nil {
		return err
	}
	f := tracking.Filter{Name: r.URL.Query().Get("name"), Cursor: r.URL.Query().Get("cursor")}
	if f.Limit, err = cursorLimit(r, tracking.MaxLimit); err != nil {
		return err
	}
	items, next, err := s.tracking.OfContact(r.Context(), sc.Actor, id, f)
	if err != nil {
		return err
	}
	limit := f.Limit
	if limit == 0 {
		limit = tracking.DefaultLimit
	}
	return nextPage(w, nonNil(items), limit, next)
}
