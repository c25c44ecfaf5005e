package httpapi

import (
	"net/http"
	"time"

	"github.com/google/uuid"

	"github.com/contactbook/contactbook/internal/books"
	"github.com/contactbook/contactbook/internal/events"
	"github.com/contactbook/contactbook/internal/webhooks"
)

// webhookPath reads the team and webhook ids of a route addressed to one
// webhook.
func webhookPath(r *http.Request) (teamID, id uuid.UUID, err error) {
	if teamID, err = pathUUID(r, "team_id"); err != nil {
		return uuid.Nil, uuid.Nil, err
	}
	id, err = pathUUID(r, "webhook_id")
	return teamID, id, err
}

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
	teamID, id, err := webhookPath(r)
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
	teamID, id, err := webhookPath(r)
	if err != nil {
		return err
	}
	if err := s.webhooks.Delete(r.Context(), sc.Actor, teamID, id); err != nil {
		return err
	}
	return noContent(w)
}

func (s *Server) listWebhookDeliveries(w http.ResponseWriter, r *http.Request, sc books.Scope) error {
	teamID, id, err := webhookPath(r)
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
	since, err := queryTime(r, "since")
	if err != nil {
		return err
	}
	q := r.URL.Query()
	pg, err := s.webhooks.Deliveries(r.Context(), sc.Actor, teamID, id, webhooks.LogFilter{
		Limit: limit, Event: q.Get("event"), Success: success, Since: since, Cursor: q.Get("cursor"),
	})
	if err != nil {
		return err
	}
	return nextPage(w, nonNil(pg.Items), limit, pg.NextCursor)
}

// webhookEventTypes lists the event types a webhook may subscribe to, in
// the order and groups the webhook editor shows them.
func (s *Server) webhookEventTypes(w http.ResponseWriter, _ *http.Request, _ books.Scope) error {
	return data(w, http.StatusOK, events.Catalogue)
}

func (s *Server) testWebhook(w http.ResponseWriter, r *http.Request, sc books.Scope) error {
	teamID, id, err := webhookPath(r)
	if err != nil {
		return err
	}
	// The body is optional: {"event": type} sends that type's sample.
	var in struct {
		Event string `json:"event"`
	}
	if r.ContentLength != 0 && r.Header.Get("Content-Type") != "" {
		if err := decodeJSON(w, r, &in); err != nil {
			return err
		}
	}
	delivery, err := s.webhooks.SendTest(r.Context(), sc.Actor, teamID, id, in.Event)
	if err != nil {
		return err
	}
	return data(w, http.StatusAccepted, map[string]uuid.UUID{"delivery_id": delivery})
}

func (s *Server) retryWebhookDelivery(w http.ResponseWriter, r *http.Request, sc books.Scope) error {
	teamID, id, err := webhookPath(r)
	if err != nil {
		return err
	}
	delivery, err := pathUUID(r, "delivery_id")
	if err != nil {
		return err
	}
	if err := s.webhooks.Retry(r.Context(), sc.Actor, teamID, id, delivery); err != nil {
		return err
	}
	return data(w, http.StatusAccepted, map[string]uuid.UUID{"delivery_id": delivery})
}

// recoverInput is the body of a recovery.
type recoverInput struct {
	Since time.Time `json:"since"`
}

func (s *Server) recoverWebhook(w http.ResponseWriter, r *http.Request, sc books.Scope) error {
	teamID, id, err := webhookPath(r)
	if err != nil {
		return err
	}
	var in recoverInput
	if err := decodeJSON(w, r, &in); err != nil {
		return err
	}
	queued, err := s.webhooks.Recover(r.Context(), sc.Actor, teamID, id, in.Since)
	if err != nil {
		return err
	}
	return data(w, http.StatusAccepted, map[string]int{"queued": queued})
}
