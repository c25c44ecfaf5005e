package httpapi

import (
	"net/http"

	"github.com/contactbook/contactbook/internal/access"
	"github.com/contactbook/contactbook/internal/campaigns"
)

// Handlers of campaigns: list, create, read, change, delete, run.

func (s *Server) listCampaigns(w http.ResponseWriter, r *http.Request, sc access.Scope) error {
	cs, err := s.campaigns.Campaigns(r.Context(), sc)
	if err != nil {
		return err
	}
	return data(w, http.StatusOK, nonNil(cs))
}

func (s *Server) getCampaign(w http.ResponseWriter, r *http.Request, sc access.Scope) error {
	id, err := pathUUID(r, "id")
	if err != nil {
		return err
	}
	c, err := s.campaigns.Campaign(r.Context(), sc, id)
	if err != nil {
		return err
	}
	return data(w, http.StatusOK, c)
}

func (s *Server) createCampaign(w http.ResponseWriter, r *http.Request, sc access.Scope) error {
	var in campaigns.CampaignInput
	if err := decodeJSON(w, r, &in); err != nil {
		return err
	}
	c, err := s.campaigns.CreateCampaign(r.Context(), sc, in)
	if err != nil {
		return err
	}
	return data(w, http.StatusOK, c)
}

func (s *Server) updateCampaign(w http.ResponseWriter, r *http.Request, sc access.Scope) error {
	id, err := pathUUID(r, "id")
	if err != nil {
		return err
	}
	var p campaigns.CampaignPatch
	if err := decodeJSON(w, r, &p); err != nil {
		return err
	}
	c, err := s.campaigns.UpdateCampaign(r.Context(), sc, id, p)
	if err != nil {
		return err
	}
	return data(w, http.StatusOK, c)
}

func (s *Server) deleteCampaign(w http.ResponseWriter, r *http.Request, sc access.Scope) error {
	id, err := pathUUID(r, "id")
	if err != nil {
		return err
	}
	if err := s.campaigns.DeleteCampaign(r.Context(), sc, id); err != nil {
		return err
	}
	return message(w, "The campaign was deleted with its steps, participants and completion records.")
}

func (s *Server) runCampaign(w http.ResponseWriter, r *http.Request, sc access.Scope) error {
	id, err := pathUUID(r, "id")
	if err != nil {
		return err
	}
	started, err := s.campaigns.Run(r.Context(), sc, id)
	if err != nil {
		return err
	}
	if !started {
		return message(w, "The campaign is already being processed.")
	}
	return message(w, "Campaign processing started.")
}
