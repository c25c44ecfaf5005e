package httpapi

import (
	"net/http"

	"github.com/google/uuid"

	"github.com/contactbook/contactbook/internal/auth"
	"github.com/contactbook/contactbook/internal/campaigns"
)

// Handlers of a campaign's steps.

func (s *Server) createStep(w http.ResponseWriter, r *http.Request, a *auth.Actor, id uuid.UUID, hint *uuid.UUID) error {
	var in campaigns.StepInput
	if err := decodeJSON(w, r, &in); err != nil {
		return err
	}
	st, err := s.campaigns.CreateStep(r.Context(), a, id, hint, in)
	if err != nil {
		return err
	}
	return data(w, http.StatusOK, st)
}

func (s *Server) updateStep(w http.ResponseWriter, r *http.Request, a *auth.Actor, id uuid.UUID) error {
	stepID, err := pathUUID(r, "sid")
	if err != nil {
		return err
	}
	hint, err := bookHint(r)
	if err != nil {
		return err
	}
	var p campaigns.StepPatch
	if err := decodeJSON(w, r, &p); err != nil {
		return err
	}
	st, err := s.campaigns.UpdateStep(r.Context(), a, id, stepID, hint, p)
	if err != nil {
		return err
	}
	return data(w, http.StatusOK, st)
}

func (s *Server) deleteStep(w http.ResponseWriter, r *http.Request, a *auth.Actor, id uuid.UUID) error {
	stepID, err := pathUUID(r, "sid")
	if err != nil {
		return err
	}
	hint, err := bookHint(r)
	if err != nil {
		return err
	}
	if err := s.campaigns.DeleteStep(r.Context(), a, id, stepID, hint); err != nil {
		return err
	}
	return message(w, "The step was deleted.")
}

func (s *Server) reorderSteps(w http.ResponseWriter, r *http.Request, a *auth.Actor, id uuid.UUID, hint *uuid.UUID) error {
	var in campaigns.ReorderInput
	if err := decodeJSON(w, r, &in); err != nil {
		return err
	}
	if err := s.campaigns.ReorderSteps(r.Context(), a, id, hint, in); err != nil {
		return err
	}
	return message(w, "The steps were reordered.")
}
