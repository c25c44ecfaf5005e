package httpapi

import (
	"net/http"

	"github.com/contactbook/contactbook/internal/access"
	"github.com/contactbook/contactbook/internal/campaigns"
)

// Handlers of a campaign's steps.

func (s *Server) createStep(w http.ResponseWriter, r *http.Request, sc access.Scope) error {
	id, err := pathUUID(r, "id")
	if err != nil {
		return err
	}
	var in campaigns.StepInput
	if err := decodeJSON(w, r, &in); err != nil {
		return err
	}
	st, err := s.campaigns.CreateStep(r.Context(), sc, id, in)
	if err != nil {
		return err
	}
	return data(w, http.StatusOK, st)
}

func (s *Server) updateStep(w http.ResponseWriter, r *http.Request, sc access.Scope) error {
	id, err := pathUUID(r, "id")
	if err != nil {
		return err
	}
	stepID, err := pathUUID(r, "sid")
	if err != nil {
		return err
	}
	var p campaigns.StepPatch
	if err := decodeJSON(w, r, &p); err != nil {
		return err
	}
	st, err := s.campaigns.UpdateStep(r.Context(), sc, id, stepID, p)
	if err != nil {
		return err
	}
	return data(w, http.StatusOK, st)
}

func (s *Server) deleteStep(w http.ResponseWriter, r *http.Request, sc access.Scope) error {
	id, err := pathUUID(r, "id")
	if err != nil {
		return err
	}
	stepID, err := pathUUID(r, "sid")
	if err != nil {
		return err
	}
	if err := s.campaigns.DeleteStep(r.Context(), sc, id, stepID); err != nil {
		return err
	}
	return message(w, "The step was deleted.")
}

func (s *Server) reorderSteps(w http.ResponseWriter, r *http.Request, sc access.Scope) error {
	id, err := pathUUID(r, "id")
	if err != nil {
		return err
	}
	var in campaigns.ReorderInput
	if err := decodeJSON(w, r, &in); err != nil {
		return err
	}
	if err := s.campaigns.ReorderSteps(r.Context(), sc, id, in); err != nil {
		return err
	}
	return message(w, "The steps were reordered.")
}
