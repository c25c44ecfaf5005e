package web

import (
	"bytes"
	"fmt"
	htmltemplate "html/template"
	"io"
	texttemplate "text/template"
)

// The sign-up pages: the hosted form, the confirmation page (a GET that
// changes nothing, with the button that confirms), the pages shown after
// a post, and the page of a form or link that does not exist. Like the
// unsubscribe pages they need no script: every change is a form POST.

// SignupField is one input of the hosted form besides the email.
type SignupField struct {
	ID, Key, Label string
	// Type is the input type: text, tel, url, number or date.
	Type         string
	Autocomplete string
	Required     bool
	Value        string
	Error        string // shown at the field
}

// SignupTopic is one public label offered as a checkbox.
type SignupTopic struct {
	ID, Value, Name, Description string
	Checked                      bool
}

// SignupEmail is the email input's value and error.
type SignupEmail struct {
	Value, Error string
}

// SignupError is one line of the error summary, linking to its field.
type SignupError struct {
	ID, Message string
}

// SignupData is what the hosted form page shows.
type SignupData struct {
	Name           string
	Action         string // absolute URL of the submissions endpoint
	Email          SignupEmail
	Fields         []SignupField
	Topics         []SignupTopic
	TopicsRequired bool
	TopicsError    string
	ConsentText    string
	ConsentChecked bool
	ConsentError   string
	Errors         []SignupError
}

// ConfirmSignupData is what the confirmation page shows.
type ConfirmSignupData struct {
	FormName   string
	Token      string
	ConfirmURL string // absolute URL of POST /api/forms/confirm
}

// MessageData is a page with a title and one message.
type MessageData struct {
	Title, Message string
}

// ConfirmationEmail is what the confirmation email says.
type ConfirmationEmail struct {
	Email, FormName, ConfirmURL string
	CompanyName, PostalAddress  string
}

var (
	confirmEmailHTML = htmltemplate.Must(htmltemplate.ParseFS(files, "templates/email/confirm.html"))
	confirmEmailText = texttemplate.Must(texttemplate.ParseFS(files, "templates/email/confirm.txt"))
)

// RenderSignupForm writes the hosted form page.
func RenderSignupForm(w io.Writer, d SignupData) error { return render(w, "form", d) }

// RenderConfirmSignup writes the confirmation page of a valid link.
func RenderConfirmSignup(w io.Writer, d ConfirmSignupData) error {
	return render(w, "form_confirm", d)
}

// RenderSignupDone writes the page shown after a post (submitted or
// confirmed).
func RenderSignupDone(w io.Writer, d MessageData) error { return render(w, "form_done", d) }

// RenderSignupMissing writes the page of a form that does not exist (or
// is disabled) or a confirmation link that is not valid; the handler sets
// the 404 status.
func RenderSignupMissing(w io.Writer, d MessageData) error {
	return render(w, "form_missing", d)
}

// RenderConfirmationEmail returns the HTML and text parts of the
// confirmation email; every value is escaped in the HTML part.
func RenderConfirmationEmail(d ConfirmationEmail) (html, text string, err error) {
	var h, t bytes.Buffer
	if err := confirmEmailHTML.Execute(&h, d); err != nil {
		return "", "", fmt.Errorf("web: render confirmation email: %w", err)
	}
	if err := confirmEmailText.Execute(&t, d); err != nil {
		return "", "", fmt.Errorf("web: render confirmation email text: %w", err)
	}
	return h.String(), t.String(), nil
}
