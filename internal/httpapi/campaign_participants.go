package httpapi

import (
	"net/http"

	"github.com/google/uuid"

	"github.com/contactbook/contactbook/internal/auth"
	"github.com/contactbook/contactbook/internal/campaigns"
)

// Handlers of a campaign's participants and their history.

func (s *Server) enrollParticipants(w http.ResponseWriter, r *http.Request, a *auth.Actor, id uuid.UUID, hint *uuid.UUID) error {
	var in campaigns.EnrollInput
	if err := decodeJSON(w, r, &in); err != nil {
		return err
	}
	n, err := s.campaigns.Enroll(r.Context(), a, id, hint, in)
	if err != nil {
		return err
	}
	return data(w, http.StatusOK, map[string]int64{"enrolled": n})
}

func (s *Server) enrollLabel(w http.ResponseWriter, r *http.Request, a *auth.Actor, id uuid.UUID, hint *uuid.UUID) error {
	var in campaigns.EnrollLabelInput
	if err := decodeJSON(w, r, &in); err != nil {
		return err
	}
	n, err := s.campaigns.EnrollLabel(r.Context(), a, id, hint, in)
	if err != nil {
		return err
	}
	return data(w, http.StatusOK, map[string]int64{"enrolled": n})
}

func (s *Server) listParticipants(w http.ResponseWriter, r *http.Request, a *auth.Actor, id uuid.UUID, hint *uuid.UUID) error {
	pg, err := pagePaging(r, 50, 100)
	if err != nil {
		return err
	}
	res, err := s.campaigns.Participants(r.Context(), a, id, hint, campaigns.Page{Limit: pg.Limit, Offset: pg.Offset})
	if err != nil {
		return err
	}
	return page(w, nonNil(res.Items), pg, res.Total)
}

func (s *Server) removeParticipant(w http.ResponseWriter, r *http.Request, a *auth.Actor, id uuid.UUID) error {
	pid, err := pathUUID(r, "pid")
	if err != nil {
		return err
	}
	hint, err := bookHint(r)
	if err != nil {
		return err
	}
	if err := s.campaigns.RemoveParticipant(r.Context(), a, id, pid, hint); err != nil {
		return err
	}
	return message(w, "The participant was removed from the campaign.")
}

func (s *Server) participantHistory(w http.ResponseWriter, r *http.Request, a *auth.Actor, id uuid.UUID) error {
	pid, err := pathUUID(r, "pid")
	if err != nil {
		return err
	}
	hint, err := bookHint(r)
	if err != nil {
		return err
	}
	h, err := s.campaigns.History(r.Context(), a, id, pid, hint)
	if err != nil {
		return err
	}
	return data(w, http.StatusOK, nonNil(h))
}
