package httpapi

import (
	"net/http"
	"time"

	"github.com/google/uuid"

	"github.com/contactbook/contactbook/internal/access"
	"github.com/contactbook/contactbook/internal/events"
	"github.com/contactbook/contactbook/internal/webhooks"
)

func (s *Server) listWebhooks(w http.ResponseWriter, r *http.Request, sc access.Scope) error {
	ws, err := s.webhooks.List(r.Context(), sc)
	if err != nil {
		return err
	}
	return data(w, http.StatusOK, nonNil(ws))
}

func (s *Server) createWebhook(w http.ResponseWriter, r *http.Request, sc access.Scope) error {
	var in webhooks.CreateInput
	if err := decodeJSON(w, r, &in); err != nil {
		return err
	}
	out, err := s.webhooks.Create(r.Context(), sc, in)
	if err != nil {
		return err
	}
	return data(w, http.StatusCreated, out)
}

func (s *Server) updateWebhook(w http.ResponseWriter, r *http.Request, sc access.Scope) error {
	id, err := pathUUID(r, "webhook_id")
	if err != nil {
		return err
	}
	var p webhooks.Patch
	if err := decodeJSON(w, r, &p); err != nil {
		return err
	}
	out, err := s.webhooks.Update(r.Context(), sc, id, p)
	if err != nil {
		return err
	}
	return data(w, http.StatusOK, out)
}

func (s *Server) deleteWebhook(w http.ResponseWriter, r *http.Request, sc access.Scope) error {
	id, err := pathUUID(r, "webhook_id")
	if err != nil {
		return err
	}
	if err := s.webhooks.Delete(r.Context(), sc, id); err != nil {
		return err
	}
	return noContent(w)
}

func (s *Server) listWebhookDeliveries(w http.ResponseWriter, r *http.Request, sc access.Scope) error {
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
	since, err := queryTime(r, "since")
	if err != nil {
		return err
	}
	q := r.URL.Query()
	pg, err := s.webhooks.Deliveries(r.Context(), sc, id, webhooks.LogFilter{
		Limit: limit, Event: q.Get("event"), Success: success, Since: since, Cursor: q.Get("cursor"),
	})
	if err != nil {
		return err
	}
	return nextPage(w, nonNil(pg.Items), limit, pg.NextCursor)
}

// webhookEventTypes lists the event types a webhook may subscribe to, in
// the order and groups the webhook editor shows them.
func (s *Server) webhookEventTypes(w http.ResponseWriter, _ *http.Request, _ access.Scope) error {
	return data(w, http.StatusOK, events.Catalogue)
}

func (s *Server) testWebhook(w http.ResponseWriter, r *http.Request, sc access.Scope) error {
	id, err := pathUUID(r, "webhook_id")
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
	delivery, err := s.webhooks.SendTest(r.Context(), sc, id, in.Event)
	if err != nil {
		return err
	}
	return data(w, http.StatusAccepted, map[string]uuid.UUID{"delivery_id": delivery})
}

func (s *Server) retryWebhookDelivery(w http.ResponseWriter, r *http.Request, sc access.Scope) error {
	id, err := pathUUID(r, "webhook_id")
	if err != nil {
		return err
	}
	delivery, err := pathUUID(r, "delivery_id")
	if err != nil {
		return err
	}
	if err := s.webhooks.Retry(r.Context(), sc, id, delivery); err != nil {
		return err
	}
	return data(w, http.StatusAccepted, map[string]uuid.UUID{"delivery_id": delivery})
}

// recoverInput is the body of a recovery.
type recoverInput struct {
	Since time.Time `json:"since"`
}

func (s *Server) recoverWebhook(w http.ResponseWriter, r *http.Request, sc access.Scope) error {
	id, err := pathUUID(r, "webhook_id")
	if err != nil {
		return err
	}
	var in recoverInput
	if err := decodeJSON(w, r, &in); err != nil {
		return err
	}
	queued, err := s.webhooks.Recover(r.Context(), sc, id, in.Since)
	if err != nil {
		return err
	}
	return data(w, http.StatusAccepted, map[string]int{"queued": queued})
}
