package httpapi

import (
	"net/http"

	"github.com/contactbook/contactbook/internal/access"
	"github.com/contactbook/contactbook/internal/accounts"
)

// App passwords: what phones and desktop address books sign in to CardDAV
// with (docs/carddav.md).

func (s *Server) createAppPassword(w http.ResponseWriter, r *http.Request, sc access.Scope) error {
	var in accounts.AppPasswordInput
	if err := decodeJSON(w, r, &in); err != nil {
		return err
	}
	p, err := s.accounts.CreateAppPassword(r.Context(), sc.Actor, in)
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "no-store")
	return data(w, http.StatusCreated, p)
}

func (s *Server) listAppPasswords(w http.ResponseWriter, r *http.Request, sc access.Scope) error {
	list, err := s.accounts.AppPasswords(r.Context(), sc.Actor)
	if err != nil {
		return err
	}
	return data(w, http.StatusOK, nonNil(list))
}

func (s *Server) revokeAppPassword(w http.ResponseWriter, r *http.Request, sc access.Scope) error {
	id, err := pathUUID(r, "id")
	if err != nil {
		return err
	}
	if err := s.accounts.RevokeAppPassword(r.Context(), sc.Actor, id); err != nil {
		return err
	}
	return noContent(w)
}
