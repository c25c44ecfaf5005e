package httpapi

import (
	"net/http"
	"strings"

	"github.com/google/uuid"

	"github.com/contactbook/contactbook/internal/auth"
	"github.com/contactbook/contactbook/internal/campaigns"
)

// Handlers of campaign templates and their test sends.

func (s *Server) listTemplates(w http.ResponseWriter, r *http.Request, a *auth.Actor, bookID uuid.UUID) error {
	ts, err := s.campaigns.Templates(r.Context(), a, bookID)
	if err != nil {
		return err
	}
	return data(w, http.StatusOK, nonNil(ts))
}

func (s *Server) getTemplate(w http.ResponseWriter, r *http.Request, a *auth.Actor, bookID, id uuid.UUID) error {
	t, err := s.campaigns.Template(r.Context(), a, bookID, id)
	if err != nil {
		return err
	}
	return data(w, http.StatusOK, t)
}

func (s *Server) createTemplate(w http.ResponseWriter, r *http.Request, a *auth.Actor, bookID uuid.UUID) error {
	var in campaigns.TemplateInput
	if err := decodeJSON(w, r, &in); err != nil {
		return err
	}
	t, err := s.campaigns.CreateTemplate(r.Context(), a, bookID, in)
	if err != nil {
		return err
	}
	return data(w, http.StatusOK, t)
}

func (s *Server) updateTemplate(w http.ResponseWriter, r *http.Request, a *auth.Actor, bookID, id uuid.UUID) error {
	var p campaigns.TemplatePatch
	if err := decodeJSON(w, r, &p); err != nil {
		return err
	}
	t, err := s.campaigns.UpdateTemplate(r.Context(), a, bookID, id, p)
	if err != nil {
		return err
	}
	return data(w, http.StatusOK, t)
}

func (s *Server) deleteTemplate(w http.ResponseWriter, r *http.Request, a *auth.Actor, bookID, id uuid.UUID) error {
	if err := s.campaigns.DeleteTemplate(r.Context(), a, bookID, id); err != nil {
		return err
	}
	return message(w, "The email template was deleted.")
}

func (s *Server) sendTestEmail(w http.ResponseWriter, r *http.Request, a *auth.Actor, bookID, id uuid.UUID) error {
	var in campaigns.SendTestInput
	if err := decodeJSON(w, r, &in); err != nil {
		return err
	}
	if err := s.campaigns.SendTest(r.Context(), a, bookID, id, in); err != nil {
		return err
	}
	return message(w, "The test email was sent to "+strings.TrimSpace(in.Email)+".")
}

func (s *Server) previewTemplate(w http.ResponseWriter, r *http.Request, a *auth.Actor, bookID uuid.UUID) error {
	var in campaigns.PreviewInput
	if err := decodeJSON(w, r, &in); err != nil {
		return err
	}
	out, err := s.campaigns.Preview(r.Context(), a, bookID, in)
	if err != nil {
		return err
	}
	return data(w, http.StatusOK, out)
}

func (s *Server) mergeFields(w http.ResponseWriter, r *http.Request, a *auth.Actor, bookID uuid.UUID) error {
	out, err := s.campaigns.MergeFields(r.Context(), a, bookID)
	if err != nil {
		return err
	}
	return data(w, http.StatusOK, out)
}
