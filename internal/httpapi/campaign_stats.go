package httpapi

import (
	"net/http"

	"github.com/google/uuid"

	"github.com/contactbook/contactbook/internal/auth"
	"github.com/contactbook/contactbook/internal/campaigns"
)

// Handlers of campaign figures: stats, a step's contacts, a contact's campaigns.

func (s *Server) campaignStats(w http.ResponseWriter, r *http.Request, a *auth.Actor, id uuid.UUID, hint *uuid.UUID) error {
	st, err := s.campaigns.Stats(r.Context(), a, id, hint)
	if err != nil {
		return err
	}
	return data(w, http.StatusOK, st)
}

func (s *Server) stepContacts(w http.ResponseWriter, r *http.Request, a *auth.Actor, id uuid.UUID) error {
	stepID, err := pathUUID(r, "sid")
	if err != nil {
		return err
	}
	hint, err := bookHint(r)
	if err != nil {
		return err
	}
	pg, err := pagePaging(r, 50, 100)
	if err != nil {
		return err
	}
	res, err := s.campaigns.StepContacts(r.Context(), a, id, stepID, hint, r.URL.Query().Get("result"),
		campaigns.Page{Limit: pg.Limit, Offset: pg.Offset})
	if err != nil {
		return err
	}
	return page(w, nonNil(res.Items), pg, res.Total)
}

func (s *Server) contactCampaigns(w http.ResponseWriter, r *http.Request, a *auth.Actor, id uuid.UUID) error {
	cs, err := s.campaigns.ContactCampaigns(r.Context(), a, id)
	if err != nil {
		return err
	}
	return data(w, http.StatusOK, nonNil(cs))
}
