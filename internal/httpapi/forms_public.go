package httpapi

import (
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"
	"github.com/google/uuid"

	"github.com/contactbook/contactbook/internal/access"
	"github.com/contactbook/contactbook/internal/apperr"
	"github.com/contactbook/contactbook/internal/books"
	"github.com/contactbook/contactbook/internal/forms"
	"github.com/contactbook/contactbook/web"
)

// The public side of sign-up forms: the hosted page, the submission
// endpoint (the one endpoint that answers any origin, so a form embedded
// on another site can post to it), the confirmation page and its button,
// and the preference page's save. A person in a browser always gets a
// page; an API client gets JSON.

// maxSubmissionBody bounds a submission: an address and a few fields.
const maxSubmissionBody = 64 << 10

// missingForm is the page of a form that does not exist or is disabled.
var missingForm = web.MessageData{
	Title:   "This form is not available",
	Message: "The form may have been switched off or removed. Check the link with whoever shared it.",
}

// invalidConfirmation is the page of a confirmation link that does not work.
var invalidConfirmation = web.MessageData{
	Title:   "This confirmation link is not valid",
	Message: "It was used already, has expired (a link works for 7 days) or is incomplete: some email programs break long links in two. Sign up again to get a new link.",
}

// hostedForm serves the hosted page of an enabled form.
func (s *Server) hostedForm(w http.ResponseWriter, r *http.Request, _ access.Scope) error {
	id, err := uuid.Parse(chi.URLParam(r, "form_id"))
	if err != nil {
		return html(w, http.StatusNotFound, func(b io.Writer) error { return web.RenderSignupMissing(b, missingForm) })
	}
	pf, err := s.forms.Hosted(r.Context(), id)
	if apperr.Is(err, apperr.NotFound) {
		return html(w, http.StatusNotFound, func(b io.Writer) error { return web.RenderSignupMissing(b, missingForm) })
	}
	if err != nil {
		return err
	}
	d := signupPage(pf, forms.SubmitInput{}, nil)
	return html(w, http.StatusOK, func(b io.Writer) error { return web.RenderSignupForm(b, d) })
}

// allowAnyOrigin lets a page of any site read the answer (no credentials
// are involved: the endpoint is public).
func allowAnyOrigin(w http.ResponseWriter) {
	w.Header().Set("Access-Control-Allow-Origin", "*")
}

// submissionPreflight answers a browser's CORS preflight of a submission.
func (s *Server) submissionPreflight(w http.ResponseWriter, _ *http.Request, _ access.Scope) error {
	allowAnyOrigin(w)
	h := w.Header()
	h.Set("Access-Control-Allow-Methods", "POST, OPTIONS")
	h.Set("Access-Control-Allow-Headers", "Content-Type, Accept")
	h.Set("Access-Control-Max-Age", "86400")
	return noContent(w)
}

// submitForm takes a post of a form: JSON answers 202 with the message; a
// browser's form post gets the success page, or a 303 to the form's
// redirect_url, or the form again with the error at its field.
func (s *Server) submitForm(w http.ResponseWriter, r *http.Request, _ access.Scope) error {
	allowAnyOrigin(w)
	asJSON := wantsJSON(r)
	id, err := uuid.Parse(chi.URLParam(r, "form_id"))
	if err != nil {
		err = apperr.NotFoundf("No form with this id.")
	}
	var in forms.SubmitInput
	if err == nil {
		in, err = readSubmission(w, r)
	}
	var res forms.Result
	if err == nil {
		from := forms.Origin{IP: middleware.GetClientIP(r.Context()), UserAgent: r.UserAgent()}
		res, err = s.forms.Submit(r.Context(), id, in, from)
	}
	switch {
	case err == nil && asJSON:
		return data(w, http.StatusAccepted, map[string]string{"message": res.Message})
	case err == nil && res.RedirectURL != "":
		http.Redirect(w, r, res.RedirectURL, http.StatusSeeOther)
		return nil
	case err == nil:
		return html(w, http.StatusOK, func(b io.Writer) error {
			return web.RenderSignupDone(b, web.MessageData{Title: "Thank you", Message: res.Message})
		})
	case asJSON:
		return err
	}
	return s.submissionErrorPage(w, r, id, in, err)
}

// submissionErrorPage answers a browser's failed post with a page.
func (s *Server) submissionErrorPage(w http.ResponseWriter, r *http.Request, id uuid.UUID, in forms.SubmitInput, err error) error {
	switch apperr.CodeOf(err) {
	case apperr.NotFound:
		return html(w, http.StatusNotFound, func(b io.Writer) error { return web.RenderSignupMissing(b, missingForm) })
	case apperr.RateLimited:
		var wait interface{ RetryAfter() time.Duration }
		if errors.As(err, &wait) {
			w.Header().Set("Retry-After", strconv.Itoa(int(wait.RetryAfter().Round(time.Second)/time.Second)))
		}
		return html(w, http.StatusTooManyRequests, func(b io.Writer) error {
			return web.RenderSignupMissing(b, web.MessageData{Title: "Too many submissions", Message: apperr.MessageOf(err)})
		})
	case apperr.InvalidInput:
		pf, herr := s.forms.Hosted(r.Context(), id)
		if herr != nil {
			return herr
		}
		d := signupPage(pf, in, err)
		return html(w, http.StatusBadRequest, func(b io.Writer) error { return web.RenderSignupForm(b, d) })
	}
	return err
}

// readSubmission reads a post: a form body (urlencoded or multipart) or a
// JSON object. Besides the form's field keys it carries email, consent
// (true or "on"), topics (label ids) and the honeypot company_website.
func readSubmission(w http.ResponseWriter, r *http.Request) (forms.SubmitInput, error) {
	r.Body = http.MaxBytesReader(w, r.Body, maxSubmissionBody)
	in := forms.SubmitInput{Values: map[string]string{}}
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if mt == "application/json" {
		var body map[string]json.RawMessage
		if err := decodeJSON(w, r, &body); err != nil {
			return in, err
		}
		for k, raw := range body {
			switch k {
			case "consent":
				var b bool
				if json.Unmarshal(raw, &b) == nil {
					in.Consent = strconv.FormatBool(b)
				} else if json.Unmarshal(raw, &in.Consent) != nil {
					return in, apperr.Invalidf("`consent` must be true or false.")
				}
			case "topics":
				if json.Unmarshal(raw, &in.Topics) != nil {
					return in, apperr.Invalidf("`topics` must be an array of label ids.")
				}
			default:
				var v string
				if string(raw) == "null" {
					continue
				}
				if json.Unmarshal(raw, &v) != nil {
					return in, apperr.Invalidf("`%s` must be a string.", k)
				}
				in.Values[k] = v
			}
		}
	} else {
		if err := parsePostedForm(r, mt, maxSubmissionBody); err != nil {
			return in, err
		}
		for k, vs := range r.PostForm {
			switch k {
			case "consent":
				in.Consent = vs[0]
			case "topics":
				in.Topics = vs
			default:
				in.Values[k] = vs[0]
			}
		}
	}
	in.Email, in.Honeypot = in.Values["email"], in.Values[forms.HoneypotField]
	delete(in.Values, "email")
	delete(in.Values, forms.HoneypotField)
	return in, nil
}

// signupPage builds the hosted page of a form, with the values of a post
// and its error at the field it names.
func signupPage(pf forms.PublicForm, in forms.SubmitInput, err error) web.SignupData {
	f := pf.Form
	d := web.SignupData{
		Name: f.Name, Action: "/api/forms/" + f.ID.String() + "/submissions",
		Email: web.SignupEmail{Value: in.Email}, ConsentText: f.ConsentText,
		ConsentChecked: slices.Contains(forms.ConsentTicked, in.Consent),
	}
	field, msg := "", ""
	if err != nil {
		msg = apperr.MessageOf(err)
		if details := apperr.DetailsOf(err); len(details) > 0 {
			field = details[0].Field
		}
	}
	for _, fl := range f.Fields {
		if fl.Key == forms.KeyTopics {
			d.TopicsRequired = fl.Required
			continue
		}
		sf := web.SignupField{
			ID: fieldID(fl.Key), Key: fl.Key, Label: forms.BuiltinLabel(fl.Key), Type: "text",
			Required: fl.Required, Value: in.Values[fl.Key],
		}
		switch fl.Key {
		case forms.KeyFirstName:
			sf.Autocomplete = "given-name"
		case forms.KeyLastName:
			sf.Autocomplete = "family-name"
		case forms.KeyCompany:
			sf.Autocomplete = "organization"
		case forms.KeyJobTitle:
			sf.Autocomplete = "organization-title"
		case forms.KeyPhone:
			sf.Type, sf.Autocomplete = "tel", "tel"
		default:
			def := pf.Custom[fl.Key]
			sf.Label = def.Name
			if sf.Label == "" {
				sf.Label = strings.TrimPrefix(fl.Key, "custom.")
			}
			switch def.Type {
			case books.FieldURL, books.FieldNumber, books.FieldDate:
				sf.Type = string(def.Type)
			}
		}
		if field == fl.Key || strings.HasPrefix(field, fl.Key+".") {
			sf.Error = msg
		}
		d.Fields = append(d.Fields, sf)
	}
	for _, l := range pf.Topics {
		checked := false
		for _, t := range in.Topics {
			checked = checked || t == l.ID.String()
		}
		d.Topics = append(d.Topics, web.SignupTopic{
			ID: "f-topic-" + l.ID.String(), Value: l.ID.String(), Name: l.Name, Description: l.Description, Checked: checked,
		})
	}
	switch {
	case msg == "":
	case field == "email":
		d.Email.Error = msg
	case field == "consent":
		d.ConsentError = msg
	case field == "topics":
		d.TopicsError = msg
	}
	if msg != "" {
		target := fieldID(field)
		switch field {
		case "email", "consent", "topics":
		default:
			if !hasField(d.Fields, field) {
				target = "f-email"
			}
		}
		d.Errors = []web.SignupError{{ID: target, Message: msg}}
	}
	return d
}

// fieldID is the HTML id of a form field's input.
func fieldID(key string) string {
	return "f-" + strings.NewReplacer(".", "-", "_", "-").Replace(key)
}

func hasField(fs []web.SignupField, key string) bool {
	for _, f := range fs {
		if f.Key == key {
			return true
		}
	}
	return false
}

// confirmSignupPage shows the confirmation button of a valid link. It
// changes nothing.
func (s *Server) confirmSignupPage(w http.ResponseWriter, r *http.Request, _ access.Scope) error {
	token := r.URL.Query().Get("token")
	p, err := s.forms.CheckToken(r.Context(), token)
	if apperr.Is(err, apperr.NotFound) {
		return html(w, http.StatusNotFound, func(b io.Writer) error { return web.RenderSignupMissing(b, invalidConfirmation) })
	}
	if err != nil {
		return err
	}
	d := web.ConfirmSignupData{FormName: p.FormName, Token: token, ConfirmURL: "/api/forms/confirm"}
	return html(w, http.StatusOK, func(b io.Writer) error { return web.RenderConfirmSignup(b, d) })
}

// confirmSignup confirms a submission: a page, or JSON when asked.
func (s *Server) confirmSignup(w http.ResponseWriter, r *http.Request, _ access.Scope) error {
	asJSON := wantsJSON(r)
	// The unsubscribe form's reader takes token from a form, JSON or the
	// query alike; the other fields are not read.
	in, err := readUnsubscribeForm(w, r)
	var res forms.Result
	if err == nil {
		res, err = s.forms.Confirm(r.Context(), in.Token)
	}
	switch {
	case err == nil && asJSON:
		return data(w, http.StatusOK, map[string]string{"message": res.Message})
	case err == nil:
		return html(w, http.StatusOK, func(b io.Writer) error {
			return web.RenderSignupDone(b, web.MessageData{Title: "Subscription confirmed", Message: res.Message})
		})
	case !asJSON && apperr.Is(err, apperr.NotFound):
		return html(w, http.StatusNotFound, func(b io.Writer) error { return web.RenderSignupMissing(b, invalidConfirmation) })
	}
	return err
}

// preferencesInput is the preference form: an unsubscribe token and the
// full set of public labels wanted.
type preferencesInput struct {
	Token    string   `json:"token"`
	LabelIDs []string `json:"label_ids"`
}

// savePreferences sets the topics of the contact of an unsubscribe token:
// a page, or JSON when asked, like the unsubscribe confirm.
func (s *Server) savePreferences(w http.ResponseWriter, r *http.Request, _ access.Scope) error {
	asJSON := wantsJSON(r)
	in, err := readPreferences(w, r)
	if err == nil {
		err = s.rights.SetTopics(r.Context(), in.Token, in.LabelIDs)
	}
	const msg = "Your preferences are saved."
	switch {
	case err == nil && asJSON:
		return data(w, http.StatusOK, map[string]string{"message": msg})
	case err == nil:
		return html(w, http.StatusOK, func(b io.Writer) error {
			return web.RenderSignupDone(b, web.MessageData{Title: "Preferences saved", Message: msg + " You will hear about the topics you chose."})
		})
	}
	if code := apperr.CodeOf(err); !asJSON && (code == apperr.NotFound || code == apperr.InvalidInput) {
		return html(w, statusOf(code), func(b io.Writer) error { return web.RenderInvalidLink(b) })
	}
	return err
}

func readPreferences(w http.ResponseWriter, r *http.Request) (preferencesInput, error) {
	r.Body = http.MaxBytesReader(w, r.Body, maxUnsubscribeBody)
	var in preferencesInput
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt == "application/json" {
		err := decodeJSON(w, r, &in)
		if in.Token == "" {
			in.Token = r.URL.Query().Get("token")
		}
		return in, err
	}
	if err := r.ParseForm(); err != nil {
		return in, apperr.Invalidf("The form could not be read.")
	}
	if err := formText(r); err != nil {
		return in, err
	}
	in.Token = strings.TrimSpace(r.FormValue("token"))
	in.LabelIDs = r.PostForm["label_ids"]
	if strings.TrimSpace(in.Token) == "" {
		return in, apperr.Invalidf("`token` is required: use the link from the email.")
	}
	return in, nil
}
