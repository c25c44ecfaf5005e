package httpapi

import (
	"net/http"

	"github.com/contactbook/contactbook/internal/access"
	"github.com/contactbook/contactbook/internal/campaigns"
)

// Handlers of campaign figures: stats, a step's contacts, a contact's campaigns.

func (s *Server) campaignStats(w http.ResponseWriter, r *http.Request, sc access.Scope) error {
	id, err := pathUUID(r, "id")
	if err != nil {
		return err
	}
	st, err := s.campaigns.Stats(r.Context(), sc, id)
	if err != nil {
		return err
	}
	return data(w, http.StatusOK, st)
}

func (s *Server) stepContacts(w http.ResponseWriter, r *http.Request, sc access.Scope) error {
	id, err := pathUUID(r, "id")
	if err != nil {
		return err
	}
	stepID, err := pathUUID(r, "sid")
	if err != nil {
		return err
	}
	pg, err := pagePaging(r, 50, 100)
	if err != nil {
		return err
	}
	res, err := s.campaigns.StepContacts(r.Context(), sc, id, stepID, r.URL.Query().Get("result"),
		campaigns.Page{Limit: pg.Limit, Offset: pg.Offset})
	if err != nil {
		return err
	}
	return page(w, nonNil(res.Items), pg, res.Total)
}

func (s *Server) contactCampaigns(w http.ResponseWriter, r *http.Request, sc access.Scope) error {
	id, err := pathUUID(r, "id")
	if err != nil {
		return err
	}
	cs, err := s.campaigns.ContactCampaigns(r.Context(), sc.Actor, id)
	if err != nil {
		return err
	}
	return data(w, http.StatusOK, nonNil(cs))
}
