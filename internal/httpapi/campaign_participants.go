package httpapi

import (
	"net/http"

	"github.com/contactbook/contactbook/internal/access"
	"github.com/contactbook/contactbook/internal/campaigns"
)

// Handlers of a campaign's participants and their history.

func (s *Server) enrollParticipants(w http.ResponseWriter, r *http.Request, sc access.Scope) error {
	id, err := pathUUID(r, "id")
	if err != nil {
		return err
	}
	var in campaigns.EnrollInput
	if err := decodeJSON(w, r, &in); err != nil {
		return err
	}
	n, err := s.campaigns.Enroll(r.Context(), sc, id, in)
	if err != nil {
		return err
	}
	return data(w, http.StatusOK, map[string]int64{"enrolled": n})
}

func (s *Server) enrollLabel(w http.ResponseWriter, r *http.Request, sc access.Scope) error {
	id, err := pathUUID(r, "id")
	if err != nil {
		return err
	}
	var in campaigns.EnrollLabelInput
	if err := decodeJSON(w, r, &in); err != nil {
		return err
	}
	n, err := s.campaigns.EnrollLabel(r.Context(), sc, id, in)
	if err != nil {
		return err
	}
	return data(w, http.StatusOK, map[string]int64{"enrolled": n})
}

func (s *Server) listParticipants(w http.ResponseWriter, r *http.Request, sc access.Scope) error {
	id, err := pathUUID(r, "id")
	if err != nil {
		return err
	}
	pg, err := pagePaging(r, 50, 100)
	if err != nil {
		return err
	}
	res, err := s.campaigns.Participants(r.Context(), sc, id, campaigns.Page{Limit: pg.Limit, Offset: pg.Offset})
	if err != nil {
		return err
	}
	return page(w, nonNil(res.Items), pg, res.Total)
}

func (s *Server) removeParticipant(w http.ResponseWriter, r *http.Request, sc access.Scope) error {
	id, err := pathUUID(r, "id")
	if err != nil {
		return err
	}
	pid, err := pathUUID(r, "pid")
	if err != nil {
		return err
	}
	if err := s.campaigns.RemoveParticipant(r.Context(), sc, id, pid); err != nil {
		return err
	}
	return message(w, "The participant was removed from the campaign.")
}

func (s *Server) participantHistory(w http.ResponseWriter, r *http.Request, sc access.Scope) error {
	id, err := pathUUID(r, "id")
	if err != nil {
		return err
	}
	pid, err := pathUUID(r, "pid")
	if err != nil {
		return err
	}
	h, err := s.campaigns.History(r.Context(), sc, id, pid)
	if err != nil {
		return err
	}
	return data(w, http.StatusOK, nonNil(h))
}
