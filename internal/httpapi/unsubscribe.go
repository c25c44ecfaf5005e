package httpapi

import (
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/google/uuid"

	"github.com/contactbook/contactbook/internal/access"
	"github.com/contactbook/contactbook/internal/apperr"
	"github.com/contactbook/contactbook/internal/campaigns"
	"github.com/contactbook/contactbook/web"
)

// maxUnsubscribeBody bounds the confirm form: a token, a scope and an id.
const maxUnsubscribeBody = 64 << 10

// unsubscribePage shows the contact's active campaigns with a form per
// campaign and one for all. It changes nothing: mail scanners and link
// previews fetch GETs without anyone clicking.
func (s *Server) unsubscribePage(w http.ResponseWriter, r *http.Request, _ access.Scope) error {
	token := r.URL.Query().Get("token")
	info, err := s.campaigns.UnsubscribeInfo(r.Context(), token)
	if apperr.Is(err, apperr.NotFound) {
		return html(w, http.StatusNotFound, func(b io.Writer) error { return web.RenderInvalidLink(b) })
	}
	if err != nil {
		return err
	}
	d := web.UnsubscribeData{
		Token: token, ContactName: info.ContactName, Email: info.Email, ConfirmURL: info.ConfirmURL,
	}
	topics, err := s.rights.Topics(r.Context(), token)
	if err != nil {
		return err
	}
	for _, t := range topics {
		id := t.Label.ID.String()
		d.Topics = append(d.Topics, web.SignupTopic{
			ID: "topic-" + id, Value: id, Name: t.Label.Name, Description: t.Label.Description, Checked: t.Checked,
		})
	}
	d.PreferencesURL = strings.TrimSuffix(info.ConfirmURL, "/unsubscribe/confirm") + "/preferences"
	for _, c := range info.Campaigns {
		d.Campaigns = append(d.Campaigns, web.Campaign{ID: c.ID.String(), Name: c.Name})
		if c.ID == info.CurrentCampaignID {
			d.CurrentCampaignID = c.ID.String()
		}
	}
	return html(w, http.StatusOK, func(b io.Writer) error { return web.RenderUnsubscribe(b, d) })
}

// unsubscribeConfirm carries out an unsubscribe posted from the page's
// forms, by a mail client's RFC 8058 one-click POST (token and campaign_id
// in the query, body "List-Unsubscribe=One-Click"), or by an API client.
// It answers a page, or JSON when the client asks for it; never a
// redirect, which one-click clients do not follow.
func (s *Server) unsubscribeConfirm(w http.ResponseWriter, r *http.Request, _ access.Scope) error {
	asJSON := wantsJSON(r)
	in, err := readUnsubscribeForm(w, r)
	if err == nil {
		var res campaigns.UnsubscribeResult
		channel := campaigns.FromPreferencePage
		if in.OneClick {
			channel = campaigns.FromOneClick
		}
		res, err = s.campaigns.Unsubscribe(r.Context(), in.Token, in.Scope, in.CampaignID, channel)
		if err == nil {
			if asJSON {
				return data(w, http.StatusOK, map[string]string{"message": res.Message, "scope": string(res.Scope)})
			}
			return html(w, http.StatusOK, func(b io.Writer) error {
				return web.RenderConfirmed(b, web.ConfirmData{Scope: string(res.Scope), CampaignName: res.CampaignName})
			})
		}
	}
	code := apperr.CodeOf(err)
	if !asJSON && (code == apperr.NotFound || code == apperr.InvalidInput) {
		// A person in a browser gets a page, not an error document.
		return html(w, statusOf(code), func(b io.Writer) error { return web.RenderInvalidLink(b) })
	}
	return err
}

// unsubscribeInput is the confirm form.
type unsubscribeInput struct {
	Token      string     `json:"token"`
	Scope      string     `json:"scope"`
	CampaignID *uuid.UUID `json:"campaign_id"`
	// OneClick: a mail client's RFC 8058 POST (List-Unsubscribe=One-Click).
	OneClick bool `json:"-"`
}

// readUnsubscribeForm reads token, scope and campaign_id from a form body
// (urlencoded or multipart), from the query, or from a JSON body; body
// fields win over query parameters.
func readUnsubscribeForm(w http.ResponseWriter, r *http.Request) (unsubscribeInput, error) {
	r.Body = http.MaxBytesReader(w, r.Body, maxUnsubscribeBody)
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	var in unsubscribeInput
	if mt == "application/json" {
		q := r.URL.Query()
		if err := decodeJSON(w, r, &in); err != nil {
			return in, err
		}
		if in.Token == "" {
			in.Token = q.Get("token")
		}
		if in.Scope == "" {
			in.Scope = q.Get("scope")
		}
		if in.CampaignID == nil && q.Get("campaign_id") != "" {
			id, err := uuid.Parse(q.Get("campaign_id"))
			if err != nil {
				return in, apperr.Invalidf("`campaign_id` must be a UUID.")
			}
			in.CampaignID = &id
		}
		return in, nil
	}
	if err := parsePostedForm(r, mt, maxUnsubscribeBody); err != nil {
		return in, err
	}
	in.Token = strings.TrimSpace(r.FormValue("token"))
	in.OneClick = r.PostFormValue("List-Unsubscribe") == "One-Click"
	in.Scope = strings.TrimSpace(r.FormValue("scope"))
	if raw := strings.TrimSpace(r.FormValue("campaign_id")); raw != "" {
		id, err := uuid.Parse(raw)
		if err != nil {
			return in, apperr.Invalidf("`campaign_id` must be a UUID.")
		}
		in.CampaignID = &id
	}
	return in, nil
}

// wantsJSON reports whether the client asked for JSON: a JSON body, or an
// Accept header naming application/json and not text/html.
func wantsJSON(r *http.Request) bool {
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt == "application/json" {
		return true
	}
	accept := r.Header.Get("Accept")
	return strings.Contains(accept, "application/json") && !strings.Contains(accept, "text/html")
}
