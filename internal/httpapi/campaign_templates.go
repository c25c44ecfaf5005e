package httpapi

import (
	"net/http"
	"strings"

	"github.com/contactbook/contactbook/internal/access"
	"github.com/contactbook/contactbook/internal/campaigns"
)

// Handlers of campaign templates and their test sends.

func (s *Server) listTemplates(w http.ResponseWriter, r *http.Request, sc access.Scope) error {
	ts, err := s.campaigns.Templates(r.Context(), sc)
	if err != nil {
		return err
	}
	return data(w, http.StatusOK, nonNil(ts))
}

func (s *Server) getTemplate(w http.ResponseWriter, r *http.Request, sc access.Scope) error {
	id, err := pathUUID(r, "id")
	if err != nil {
		return err
	}
	t, err := s.campaigns.Template(r.Context(), sc, id)
	if err != nil {
		return err
	}
	return data(w, http.StatusOK, t)
}

func (s *Server) createTemplate(w http.ResponseWriter, r *http.Request, sc access.Scope) error {
	var in campaigns.TemplateInput
	if err := decodeJSON(w, r, &in); err != nil {
		return err
	}
	t, err := s.campaigns.CreateTemplate(r.Context(), sc, in)
	if err != nil {
		return err
	}
	return data(w, http.StatusOK, t)
}

func (s *Server) updateTemplate(w http.ResponseWriter, r *http.Request, sc access.Scope) error {
	id, err := pathUUID(r, "id")
	if err != nil {
		return err
	}
	var p campaigns.TemplatePatch
	if err := decodeJSON(w, r, &p); err != nil {
		return err
	}
	t, err := s.campaigns.UpdateTemplate(r.Context(), sc, id, p)
	if err != nil {
		return err
	}
	return data(w, http.StatusOK, t)
}

func (s *Server) deleteTemplate(w http.ResponseWriter, r *http.Request, sc access.Scope) error {
	id, err := pathUUID(r, "id")
	if err != nil {
		return err
	}
	if err := s.campaigns.DeleteTemplate(r.Context(), sc, id); err != nil {
		return err
	}
	return message(w, "The email template was deleted.")
}

func (s *Server) sendTestEmail(w http.ResponseWriter, r *http.Request, sc access.Scope) error {
	id, err := pathUUID(r, "id")
	if err != nil {
		return err
	}
	var in campaigns.SendTestInput
	if err := decodeJSON(w, r, &in); err != nil {
		return err
	}
	if err := s.campaigns.SendTest(r.Context(), sc, id, in); err != nil {
		return err
	}
	return message(w, "The test email was sent to "+strings.TrimSpace(in.Email)+".")
}

func (s *Server) previewTemplate(w http.ResponseWriter, r *http.Request, sc access.Scope) error {
	var in campaigns.PreviewInput
	if err := decodeJSON(w, r, &in); err != nil {
		return err
	}
	out, err := s.campaigns.Preview(r.Context(), sc, in)
	if err != nil {
		return err
	}
	return data(w, http.StatusOK, out)
}

func (s *Server) mergeFields(w http.ResponseWriter, r *http.Request, sc access.Scope) error {
	out, err := s.campaigns.MergeFields(r.Context(), sc)
	if err != nil {
		return err
	}
	return data(w, http.StatusOK, out)
}
