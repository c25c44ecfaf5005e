package httpapi

import (
	"net/http"

	"github.com/google/uuid"

	"github.com/contactbook/contactbook/internal/access"
	"github.com/contactbook/contactbook/internal/campaigns"
)

// Handlers of a book's campaign settings.

func (s *Server) getCampaignSettings(w http.ResponseWriter, r *http.Request, sc access.Scope) error {
	v, err := s.campaigns.GetSettings(r.Context(), sc)
	if err != nil {
		return err
	}
	if !v.Configured {
		return data(w, http.StatusOK, map[string]uuid.UUID{"book_id": v.BookID})
	}
	return data(w, http.StatusOK, v.Settings)
}

func (s *Server) putCampaignSettings(w http.ResponseWriter, r *http.Request, sc access.Scope) error {
	var in campaigns.SettingsInput
	if err := decodeJSON(w, r, &in); err != nil {
		return err
	}
	st, err := s.campaigns.PutSettings(r.Context(), sc, in)
	if err != nil {
		return err
	}
	return data(w, http.StatusOK, st)
}

func (s *Server) verifyCampaignSettings(w http.ResponseWriter, r *http.Request, sc access.Scope) error {
	res, err := s.campaigns.VerifySettings(r.Context(), sc)
	if err != nil {
		return err
	}
	return data(w, http.StatusOK, res)
}
