// Package web renders the public HTML pages: the hosted sign-up forms
// and their confirmation pages (see forms.go), the unsubscribe flow (the page
// an unsubscribe link opens, listing the contact's active campaigns, each
// with a "Leave this campaign" form, plus "Unsubscribe from all emails"; the
// confirmation shown after a POST; the page for an unknown link) and the
// pages a payment checkout returns to. The templates are embedded (embed +
// html/template, so every value is escaped for its context) and
// self-contained: inline CSS, no scripts, fonts, images or other external
// assets, so the pages load from a mail client's in-app browser without
// tracking anyone. They are plain, accessible (headings, descriptive button
// names, visible focus, sufficient contrast) and fit any screen width. The
// unsubscribe GET page changes nothing: link scanners prefetch GETs, so every
// change goes through a form POST to ConfirmURL.
package web

import (
	"bytes"
	"embed"
	"fmt"
	"html/template"
	"io"
)

//go:embed templates/*.html templates/email/*
var files embed.FS

// pages holds one parsed template set per page (layout + page). Parsed once
// when the package loads, immutable afterwards, safe for concurrent use; a
// broken template fails every test of this package.
var pages = map[string]*template.Template{
	"unsubscribe": parse("unsubscribe.html"),
	"confirmed":   parse("confirmed.html"),
	"invalid":     parse("invalid.html"),
	"billing":     parse("billing.html"),

	"form":         parse("form.html"),
	"form_confirm": parse("form_confirm.html"),
	"form_done":    parse("form_done.html"),
	"form_missing": parse("form_missing.html"),
}

func parse(page string) *template.Template {
	return template.Must(template.ParseFS(files, "templates/layout.html", "templates/"+page))
}

// Campaign is one campaign the contact is active in.
type Campaign struct {
	ID   string
	Name string
}

// UnsubscribeData is what the unsubscribe page shows.
type UnsubscribeData struct {
	Token             string
	ContactName       string     // may be empty
	Email             string     // masked or plain, as given
	Campaigns         []Campaign // the contact's active campaigns (may be empty)
	CurrentCampaignID string     // the campaign of the email the link came from (listed first, highlighted), may be empty
	ConfirmURL        string     // absolute URL of POST /api/unsubscribe/confirm
	// Topics are the book's public labels, checked where the contact has
	// them; the preference form posts the full set wanted to
	// PreferencesURL. No topics: no preference form.
	Topics         []SignupTopic
	PreferencesURL string
}

// ConfirmData is what the confirmation page shows. Scope is "campaign" or
// "all".
type ConfirmData struct {
	Scope        string
	CampaignName string
}

type campaignView struct {
	ID, Name string
	Current  bool
}

// RenderUnsubscribe writes the GET page: one form per campaign (POST token,
// scope=campaign, campaign_id) and one for scope=all. The campaign the email
// came from is listed first.
func RenderUnsubscribe(w io.Writer, d UnsubscribeData) error {
	view := struct {
		UnsubscribeData
		Campaigns []campaignView
	}{UnsubscribeData: d}
	for _, c := range d.Campaigns {
		if d.CurrentCampaignID != "" && c.ID == d.CurrentCampaignID {
			view.Campaigns = append([]campaignView{{ID: c.ID, Name: c.Name, Current: true}}, view.Campaigns...)
			continue
		}
		view.Campaigns = append(view.Campaigns, campaignView{ID: c.ID, Name: c.Name})
	}
	return render(w, "unsubscribe", view)
}

// RenderConfirmed writes the page shown after a successful POST confirm.
func RenderConfirmed(w io.Writer, d ConfirmData) error {
	switch d.Scope {
	case "campaign", "all":
	default:
		return fmt.Errorf("web: unknown unsubscribe scope %q", d.Scope)
	}
	return render(w, "confirmed", struct {
		ConfirmData
		All bool
	}{d, d.Scope == "all"})
}

// RenderInvalidLink writes the page for an unknown token (the handler sets
// the 404 status).
func RenderInvalidLink(w io.Writer) error {
	return render(w, "invalid", nil)
}

// RenderBillingReturn writes the page the payment provider's checkout
// returns to: success (the add-on activates once the provider's webhook
// arrives) or cancel.
func RenderBillingReturn(w io.Writer, success bool) error {
	return render(w, "billing", struct{ Success bool }{success})
}

// render executes into a buffer first, so a failure never leaves half a page
// behind a 200 status.
func render(w io.Writer, page string, data any) error {
	var buf bytes.Buffer
	if err := pages[page].ExecuteTemplate(&buf, "layout", data); err != nil {
		return fmt.Errorf("web: render %s page: %w", page, err)
	}
	_, err := w.Write(buf.Bytes())
	return err
}
