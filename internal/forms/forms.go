// Package forms collects sign-ups: a book's forms (the hosted page and
// embeddable HTML post to them), the submissions held until the person
// confirms by email (double opt-in), the consent records that prove who
// agreed to what, when and from where, and the person's own rights over
// their data: the preference page's topics, the data export and erasure.
//
// A submission reveals nothing about who is known: its answer is the same
// for a new address, a known one, a suppressed one and a capped one. The
// confirmation email is a River job queued in the transaction that holds
// the submission, so a crash loses neither.
package forms

import (
	"fmt"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/contactbook/contactbook/internal/apperr"
	"github.com/contactbook/contactbook/internal/optional"
)

// Form is a sign-up form of a book, as the API returns it.
type Form struct {
	ID               uuid.UUID   `json:"id"`
	BookID           uuid.UUID   `json:"book_id"`
	Name             string      `json:"name"`
	Fields           []Field     `json:"fields"`
	LabelIDs         []uuid.UUID `json:"label_ids"`
	DoubleOptIn      bool        `json:"double_opt_in"`
	ConsentText      string      `json:"consent_text"`
	SuccessMessage   string      `json:"success_message"`
	RedirectURL      string      `json:"redirect_url"`
	Enabled          bool        `json:"enabled"`
	SubmissionsCount int64       `json:"submissions_count"`
	ConfirmedCount   int64       `json:"confirmed_count"`
	CreatedAt        time.Time   `json:"created_at"`
	UpdatedAt        time.Time   `json:"updated_at"`
}

// Field is one field a form asks for besides the email, which every form
// has and requires.
type Field struct {
	Key      string `json:"key"`
	Required bool   `json:"required"`
}

// The built-in field keys; custom fields are "custom.<key>" of the book.
const (
	KeyFirstName = "first_name"
	KeyLastName  = "last_name"
	KeyCompany   = "company"
	KeyJobTitle  = "job_title"
	KeyPhone     = "phone"
	KeyTopics    = "topics"
	customPrefix = "custom."
)

// builtinFields lists the built-in keys with the label the hosted page
// shows, in the order the page shows them.
var builtinFields = []struct{ Key, Label string }{
	{KeyFirstName, "First name"},
	{KeyLastName, "Last name"},
	{KeyCompany, "Company"},
	{KeyJobTitle, "Job title"},
	{KeyPhone, "Phone"},
	{KeyTopics, "Topics"},
}

// HoneypotField is the hidden field of the hosted page and the embed
// snippet that people leave empty and form-filling bots do not.
const HoneypotField = "company_website"

// Limits of a form.
const (
	maxName           = 200
	maxFields         = 30
	maxLabels         = 100
	maxConsentText    = 5000
	maxSuccessMessage = 2000
	maxRedirectURL    = 2048
	// maxValue bounds a submitted field value.
	maxValue = 2000
)

// Input is the body that creates a form.
type Input struct {
	Name           string      `json:"name"`
	Fields         []Field     `json:"fields"`
	LabelIDs       []uuid.UUID `json:"label_ids"`
	DoubleOptIn    *bool       `json:"double_opt_in"`
	ConsentText    string      `json:"consent_text"`
	SuccessMessage string      `json:"success_message"`
	RedirectURL    string      `json:"redirect_url"`
	Enabled        *bool       `json:"enabled"`
}

// Patch changes any field of a form.
type Patch struct {
	Name           optional.Value[string]      `json:"name"`
	Fields         optional.Value[[]Field]     `json:"fields"`
	LabelIDs       optional.Value[[]uuid.UUID] `json:"label_ids"`
	DoubleOptIn    optional.Value[bool]        `json:"double_opt_in"`
	ConsentText    optional.Value[string]      `json:"consent_text"`
	SuccessMessage optional.Value[string]      `json:"success_message"`
	RedirectURL    optional.Value[string]      `json:"redirect_url"`
	Enabled        optional.Value[bool]        `json:"enabled"`
}

// apply patches f; null is refused for every field.
func (p Patch) apply(f *Form) error {
	for name, null := range map[string]bool{
		"name": p.Name.Null, "fields": p.Fields.Null, "label_ids": p.LabelIDs.Null, "double_opt_in": p.DoubleOptIn.Null,
		"consent_text": p.ConsentText.Null, "success_message": p.SuccessMessage.Null, "redirect_url": p.RedirectURL.Null, "enabled": p.Enabled.Null,
	} {
		if null {
			return apperr.Invalidf("`%s` cannot be null.", name)
		}
	}
	p.Name.ApplyTo(&f.Name)
	p.Fields.ApplyTo(&f.Fields)
	p.LabelIDs.ApplyTo(&f.LabelIDs)
	p.DoubleOptIn.ApplyTo(&f.DoubleOptIn)
	p.ConsentText.ApplyTo(&f.ConsentText)
	p.SuccessMessage.ApplyTo(&f.SuccessMessage)
	p.RedirectURL.ApplyTo(&f.RedirectURL)
	p.Enabled.ApplyTo(&f.Enabled)
	return nil
}

// normalize trims the texts and makes the lists non-nil.
func (f *Form) normalize() {
	f.Name = strings.TrimSpace(f.Name)
	f.ConsentText = strings.TrimSpace(f.ConsentText)
	f.SuccessMessage = strings.TrimSpace(f.SuccessMessage)
	f.RedirectURL = strings.TrimSpace(f.RedirectURL)
	if f.Fields == nil {
		f.Fields = []Field{}
	}
	if f.LabelIDs == nil {
		f.LabelIDs = []uuid.UUID{}
	}
	for i := range f.Fields {
		f.Fields[i].Key = strings.TrimSpace(f.Fields[i].Key)
	}
}

// validate checks what a form can check alone; customKeys are the book's
// custom field keys.
func (f *Form) validate(customKeys map[string]bool) error {
	switch n := utf8.RuneCountInString(f.Name); {
	case n == 0:
		return apperr.Invalidf("`name` is required.")
	case n > maxName:
		return apperr.Invalidf("`name` must be at most %d characters.", maxName)
	}
	if len(f.Fields) > maxFields {
		return apperr.Invalidf("`fields` may hold at most %d fields.", maxFields)
	}
	seen := map[string]bool{}
	for i, fl := range f.Fields {
		if problem := checkFieldKey(fl.Key, customKeys); problem != "" {
			return apperr.Invalidf("`fields[%d].key` %s", i, problem)
		}
		if seen[fl.Key] {
			return apperr.Invalidf("`fields[%d].key` repeats %q; each field appears once.", i, fl.Key)
		}
		seen[fl.Key] = true
	}
	if len(f.LabelIDs) > maxLabels {
		return apperr.Invalidf("`label_ids` may hold at most %d labels.", maxLabels)
	}
	if utf8.RuneCountInString(f.ConsentText) > maxConsentText {
		return apperr.Invalidf("`consent_text` must be at most %d characters.", maxConsentText)
	}
	if utf8.RuneCountInString(f.SuccessMessage) > maxSuccessMessage {
		return apperr.Invalidf("`success_message` must be at most %d characters.", maxSuccessMessage)
	}
	if f.RedirectURL != "" {
		u, err := url.Parse(f.RedirectURL)
		if err != nil || u.Scheme != "https" || u.Host == "" || len(f.RedirectURL) > maxRedirectURL {
			return apperr.Invalidf("`redirect_url` must be an https:// URL of at most %d characters.", maxRedirectURL)
		}
	}
	return nil
}

// checkFieldKey says what is wrong with a field key, or "".
func checkFieldKey(key string, customKeys map[string]bool) string {
	if custom, ok := strings.CutPrefix(key, customPrefix); ok {
		if !customKeys[custom] {
			return fmt.Sprintf("names %q, which is not a custom field of this book.", key)
		}
		return ""
	}
	for _, b := range builtinFields {
		if b.Key == key {
			return ""
		}
	}
	if key == "email" {
		return "cannot be email: every form has the email field, always required."
	}
	return "must be one of first_name, last_name, company, job_title, phone, topics or custom.<key> of the book."
}

// has reports whether the form asks for key.
func (f Form) has(key string) bool {
	for _, fl := range f.Fields {
		if fl.Key == key {
			return true
		}
	}
	return false
}

// Method says how a consent was given.
type Method string

// Consent methods.
const (
	MethodSingle Method = "single" // at submission, without a confirmation email
	MethodDouble Method = "double" // by the link of the confirmation email
)

// Methods is every consent method.
var Methods = []Method{MethodSingle, MethodDouble}

// Consent is the record of one sign-up's consent: the text as shown, from
// where and when.
type Consent struct {
	ID          uuid.UUID  `json:"id"`
	ContactID   uuid.UUID  `json:"contact_id"`
	FormID      *uuid.UUID `json:"form_id"`
	Method      Method     `json:"method"`
	Text        string     `json:"text"`
	IP          string     `json:"ip"`
	UserAgent   string     `json:"user_agent"`
	SubmittedAt time.Time  `json:"submitted_at"`
	ConfirmedAt time.Time  `json:"confirmed_at"`
}

// Origin is where a submission came from.
type Origin struct {
	IP        string
	UserAgent string
}
