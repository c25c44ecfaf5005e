package httpapi

import (
	"net/http"

	"github.com/contactbook/contactbook/internal/books"
	"github.com/contactbook/contactbook/internal/webhooks"
)

func (s *Server) listWebhooks(w http.ResponseWriter, r *http.Request, sc books.Scope) error {
	teamID, err := pathUUID(r, "team_id")
	if err != nil {
		return err
	}
	ws, err := s.webhooks.List(r.Context(), sc.Actor, teamID)
	if err != nil {
		return err
	}
	return data(w, http.StatusOK, nonNil(ws))
}

func (s *Server) createWebhook(w http.ResponseWriter, r *http.Request, sc books.Scope) error {
	teamID, err := pathUUID(r, "team_id")
	if err != nil {
		return err
	}
	var in webhooks.CreateInput
	if err := decodeJSON(w, r, &in); err != nil {
		return err
	}
	out, err := s.webhooks.Create(r.Context(), sc.Actor, teamID, in)
	if err != nil {
		return err
	}
	return data(w, http.StatusCreated, out)
}

func (s *Server) updateWebhook(w http.ResponseWriter, r *http.Request, sc books.Scope) error {
	teamID, err := pathUUID(r, "team_id")
	if err != nil {
		return err
	}
	id, err := pathUUID(r, "webhook_id")
	if err != nil {
		return err
	}
	var p webhooks.Patch
	if err := decodeJSON(w, r, &p); err != nil {
		return err
	}
	out, err := s.webhooks.Update(r.Context(), sc.Actor, teamID, id, p)
	if err != nil {
		return err
	}
	return data(w, http.StatusOK, out)
}

func (s *Server) deleteWebhook(w http.ResponseWriter, r *http.Request, sc books.Scope) error {
	teamID, err := pathUUID(r, "team_id")
	if err != nil {
		return err
	}
	id, err := pathUUID(r, "webhook_id")
	if err != nil {
		return err
	}
	if err := s.webhooks.Delete(r.Context(), sc.Actor, teamID, id); err != nil {
		return err
	}
	return noContent(w)
}

func (s *Server) listWebhookDeliveries(w http.ResponseWriter, r *http.Request, sc books.Scope) error {
	teamID, err := pathUUID(r, "team_id")
	if err != nil {
		return err
	}
	id, err := pathUUID(r, "webhook_id")
	if err != nil {
		return err
	}
	limit, err := limitParam(r, webhooks.DefaultLogLimit, webhooks.MaxLogLimit)
	if err != nil {
		return err
	}
	success, err := queryBool(r, "success")
	if err != nil {
		return err
	}
	log, err := s.webhooks.Deliveries(r.Context(), sc.Actor, teamID, id, limit, success)
	if err != nil {
		return err
	}
	return data(w, http.StatusOK, nonNil(log))
}
