package httpapi

import (
	"net/http"

	"github.com/google/uuid"

	"github.com/contactbook/contactbook/internal/auth"
	"github.com/contactbook/contactbook/internal/campaigns"
)

// Handlers of campaigns: list, create, read, change, delete, run.

func (s *Server) listCampaigns(w http.ResponseWriter, r *http.Request, a *auth.Actor, bookID uuid.UUID) error {
	cs, err := s.campaigns.Campaigns(r.Context(), a, bookID)
	if err != nil {
		return err
	}
	return data(w, http.StatusOK, nonNil(cs))
}

func (s *Server) getCampaign(w http.ResponseWriter, r *http.Request, a *auth.Actor, id uuid.UUID, hint *uuid.UUID) error {
	c, err := s.campaigns.Campaign(r.Context(), a, id, hint)
	if err != nil {
		return err
	}
	return data(w, http.StatusOK, c)
}

func (s *Server) createCampaign(w http.ResponseWriter, r *http.Request, a *auth.Actor, bookID uuid.UUID) error {
	var in campaigns.CampaignInput
	if err := decodeJSON(w, r, &in); err != nil {
		return err
	}
	c, err := s.campaigns.CreateCampaign(r.Context(), a, bookID, in)
	if err != nil {
		return err
	}
	return data(w, http.StatusOK, c)
}

func (s *Server) updateCampaign(w http.ResponseWriter, r *http.Request, a *auth.Actor, id uuid.UUID, hint *uuid.UUID) error {
	var p campaigns.CampaignPatch
	if err := decodeJSON(w, r, &p); err != nil {
		return err
	}
	c, err := s.campaigns.UpdateCampaign(r.Context(), a, id, hint, p)
	if err != nil {
		return err
	}
	return data(w, http.StatusOK, c)
}

func (s *Server) deleteCampaign(w http.ResponseWriter, r *http.Request, a *auth.Actor, id uuid.UUID, hint *uuid.UUID) error {
	if err := s.campaigns.DeleteCampaign(r.Context(), a, id, hint); err != nil {
		return err
	}
	return message(w, "The campaign was deleted with its steps, participants and completion records.")
}

func (s *Server) runCampaign(w http.ResponseWriter, r *http.Request, a *auth.Actor, id uuid.UUID, hint *uuid.UUID) error {
	started, err := s.campaigns.Run(r.Context(), a, id, hint)
	if err != nil {
		return err
	}
	if !started {
		return message(w, "The campaign is already being processed.")
	}
	return message(w, "Campaign processing started.")
}
