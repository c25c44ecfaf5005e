package httpapi

import (
	"net/http"

	"github.com/contactbook/contactbook/internal/access"
	"github.com/contactbook/contactbook/internal/forms"
)

// The forms API (both APIs) and the person's rights on a contact. The
// public pages and the submission endpoint are in forms_public.go.

func (s *Server) listForms(w http.ResponseWriter, r *http.Request, sc access.Scope) error {
	fs, err := s.forms.List(r.Context(), sc)
	if err != nil {
		return err
	}
	return data(w, http.StatusOK, nonNil(fs))
}

func (s *Server) createForm(w http.ResponseWriter, r *http.Request, sc access.Scope) error {
	var in forms.Input
	if err := decodeJSON(w, r, &in); err != nil {
		return err
	}
	f, err := s.forms.Create(r.Context(), sc, in)
	if err != nil {
		return err
	}
	return data(w, http.StatusCreated, f)
}

func (s *Server) getForm(w http.ResponseWriter, r *http.Request, sc access.Scope) error {
	id, err := pathUUID(r, "id")
	if err != nil {
		return err
	}
	f, err := s.forms.Get(r.Context(), sc.Actor, id)
	if err != nil {
		return err
	}
	return data(w, http.StatusOK, f)
}

func (s *Server) updateForm(w http.ResponseWriter, r *http.Request, sc access.Scope) error {
	id, err := pathUUID(r, "id")
	if err != nil {
		return err
	}
	var p forms.Patch
	if err := decodeJSON(w, r, &p); err != nil {
		return err
	}
	f, err := s.forms.Update(r.Context(), sc.Actor, id, p)
	if err != nil {
		return err
	}
	return data(w, http.StatusOK, f)
}

func (s *Server) deleteForm(w http.ResponseWriter, r *http.Request, sc access.Scope) error {
	id, err := pathUUID(r, "id")
	if err != nil {
		return err
	}
	if err := s.forms.Delete(r.Context(), sc.Actor, id); err != nil {
		return err
	}
	return noContent(w)
}

func (s *Server) contactConsents(w http.ResponseWriter, r *http.Request, sc access.Scope) error {
	id, err := pathUUID(r, "id")
	if err != nil {
		return err
	}
	cs, err := s.forms.Consents(r.Context(), sc.Actor, id)
	if err != nil {
		return err
	}
	return data(w, http.StatusOK, nonNil(cs))
}

func (s *Server) contactDataExport(w http.ResponseWriter, r *http.Request, sc access.Scope) error {
	id, err := pathUUID(r, "id")
	if err != nil {
		return err
	}
	out, err := s.rights.DataExport(r.Context(), sc.Actor, id)
	if err != nil {
		return err
	}
	return data(w, http.StatusOK, out)
}

func (s *Server) eraseContact(w http.ResponseWriter, r *http.Request, sc access.Scope) error {
	id, err := pathUUID(r, "id")
	if err != nil {
		return err
	}
	if err := s.rights.Erase(r.Context(), sc.Actor, id); err != nil {
		return err
	}
	return data(w, http.StatusOK, map[string]string{
		"message": "The contact and everything held about them were erased; their suppressions keep blocking the address by its hash.",
	})
}
