package forms

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"net/mail"
	"net/netip"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/contactbook/contactbook/internal/apperr"
	"github.com/contactbook/contactbook/internal/contacts"
	"github.com/contactbook/contactbook/internal/events"
	"github.com/contactbook/contactbook/internal/postgres"
	"github.com/contactbook/contactbook/internal/suppression"
)

// Limits of submissions.
const (
	// postLimit submissions from one client IP to one form per postWindow.
	postLimit  = 10
	postWindow = 10 * time.Minute
	// mailCap confirmation emails per address and form per mailCapWindow.
	mailCap       = 3
	mailCapWindow = 24 * time.Hour
	// tokenTTL is how long a confirmation link works.
	tokenTTL = 7 * 24 * time.Hour
)

// ConsentTicked are the values a ticked consent checkbox posts ("on" is
// what a browser sends for a checkbox without a value).
var ConsentTicked = []string{"true", "on"}

// SubmitInput is one post of a form.
type SubmitInput struct {
	Email string
	// Values holds the form's field values by key (first_name,
	// custom.tier, ...); keys the form does not ask for are ignored.
	Values map[string]string
	// Consent is the consent checkbox: "true" or "on" when ticked.
	Consent string
	// Topics are the label ids chosen; those that are not public labels
	// of the book are ignored.
	Topics []string
	// Honeypot is the hidden company_website field.
	Honeypot string
}

// Result is the answer to a submission or a confirmation; it is the same
// whoever the address belongs to.
type Result struct {
	Message     string
	RedirectURL string
}

// RateLimitedError is a RATE_LIMITED answer that says when to come back.
type RateLimitedError struct {
	err   *apperr.Error
	After time.Duration
}

func (e *RateLimitedError) Error() string { return e.err.Error() }

// RetryAfter is how long the client should wait (the Retry-After header).
func (e *RateLimitedError) RetryAfter() time.Duration { return e.After }

// Unwrap exposes the coded error.
func (e *RateLimitedError) Unwrap() error { return e.err }

// Submit takes one post of a form from origin. Every post counts toward
// the client's limit; a post with the honeypot filled gets the usual
// answer and stores nothing. With double opt-in the submission is held and
// a confirmation email queued in the same transaction (unless the address
// is suppressed for a reason other than unsubscribe, or had its 3 emails
// in the last 24 hours); without, the sign-up is applied at once.
func (s *Service) Submit(ctx context.Context, formID uuid.UUID, in SubmitInput, from Origin) (Result, error) {
	f, err := s.st.form(ctx, s.d.DB, formID, false)
	if err != nil {
		return Result{}, err
	}
	if !f.Enabled {
		return Result{}, errFormNotFound
	}
	if err := s.countPost(ctx, formID, from.IP); err != nil {
		return Result{}, err
	}
	res := s.result(f)
	if strings.TrimSpace(in.Honeypot) != "" {
		return res, nil
	}
	h, err := s.readSubmission(ctx, f, in, from)
	if err != nil {
		return Result{}, err
	}
	if !f.DoubleOptIn {
		err = postgres.InTx(ctx, s.d.DB, func(tx *postgres.Tx) error {
			if err := s.apply(ctx, tx, f, h, MethodSingle); err != nil {
				return err
			}
			return s.st.counted(ctx, tx, f.ID, 1, 1)
		})
		return res, err
	}
	return res, postgres.InTx(ctx, s.d.DB, func(tx *postgres.Tx) error {
		if err := s.st.lockAddress(ctx, tx, f.ID, h.Email); err != nil {
			return err
		}
		send, err := s.mayMail(ctx, tx, f, h.Email)
		if err != nil || !send {
			if err == nil {
				err = s.st.counted(ctx, tx, f.ID, 1, 0)
			}
			return err
		}
		// The link's token is made when the email is sent, so that it is
		// never stored but hashed (not even in the job's arguments); until
		// then the row holds the hash of a secret nobody knows.
		_, hash, err := newToken()
		if err != nil {
			return err
		}
		h.ID, h.TokenHash, h.Mailed, h.ExpiresAt = uuid.New(), hash, true, h.SubmittedAt.Add(tokenTTL)
		if err := s.st.insertHeld(ctx, tx, h); err != nil {
			return err
		}
		if _, err := s.d.Queue.InsertTx(ctx, tx, ConfirmationArgs{SubmissionID: h.ID}, nil); err != nil {
			return apperr.Wrap(err, apperr.Internal, "queue confirmation email")
		}
		return s.st.counted(ctx, tx, f.ID, 1, 0)
	})
}

// result is the answer of every accepted post of the form.
func (s *Service) result(f Form) Result {
	msg := f.SuccessMessage
	if msg == "" && f.DoubleOptIn {
		msg = "Thank you! Check your inbox: we sent you an email with a link to confirm your subscription."
	} else if msg == "" {
		msg = "Thank you! You are subscribed."
	}
	return Result{Message: msg, RedirectURL: f.RedirectURL}
}

// limitKey is the client a post counts for: an IPv4 address, or the /64
// of an IPv6 one, which a single host or home network holds whole and can
// pick any address of (as the login throttle counts them).
func limitKey(ip string) string {
	addr, err := netip.ParseAddr(ip)
	if err != nil {
		return ip
	}
	addr = addr.Unmap()
	if addr.Is4() {
		return addr.String()
	}
	p, err := addr.WithZone("").Prefix(64)
	if err != nil {
		return ip
	}
	return p.String()
}

// countPost counts the post toward the client's limit and refuses it past
// the limit. The limit slides over two fixed windows: the previous
// window's count weighs by how much of it the sliding window still covers.
func (s *Service) countPost(ctx context.Context, formID uuid.UUID, ip string) error {
	now := s.d.Now().UTC()
	window := now.Truncate(postWindow)
	cur, prev, err := s.st.countPost(ctx, s.d.DB, formID, limitKey(ip), window, window.Add(-postWindow))
	if err != nil {
		return err
	}
	elapsed := now.Sub(window)
	estimate := float64(cur) + float64(prev)*(1-float64(elapsed)/float64(postWindow))
	if estimate <= postLimit {
		return nil
	}
	wait := postWindow - elapsed
	if wait < time.Second {
		wait = time.Second
	}
	return &RateLimitedError{
		err:   apperr.New(apperr.RateLimited, "Too many submissions of this form from your address; wait a few minutes (see Retry-After) and try again."),
		After: wait,
	}
}

// mayMail says whether a confirmation email may go to the address: not
// when it is suppressed for a reason other than unsubscribe (an
// unsubscribed person may ask again), nor past the cap.
func (s *Service) mayMail(ctx context.Context, tx *postgres.Tx, f Form, email string) (bool, error) {
	reasons, err := suppression.InForce(ctx, tx, f.BookID, []string{email})
	if err != nil {
		return false, err
	}
	if r, ok := reasons[email]; ok && r != suppression.ReasonUnsubscribe {
		return false, nil
	}
	n, err := s.st.mailedSince(ctx, tx, f.ID, email, s.d.Now().Add(-mailCapWindow))
	return n < mailCap, err
}

// readSubmission checks a post against its form and makes the submission.
func (s *Service) readSubmission(ctx context.Context, f Form, in SubmitInput, from Origin) (held, error) {
	email := strings.ToLower(strings.TrimSpace(in.Email))
	if email == "" {
		return held{}, apperr.Invalidf("`email` is required.")
	}
	if a, err := mail.ParseAddress(email); err != nil || a.Address != email || len(email) > 254 {
		return held{}, apperr.Invalidf("`email` must be an email address, such as ada@example.com.")
	}
	h := held{
		FormID: f.ID, BookID: f.BookID, Email: email, Fields: map[string]string{}, TopicIDs: []uuid.UUID{},
		ConsentText: f.ConsentText, IP: truncate(from.IP, 100), UserAgent: truncate(from.UserAgent, 500),
		SubmittedAt: s.d.Now().UTC().Truncate(time.Microsecond),
	}
	for _, fl := range f.Fields {
		if fl.Key == KeyTopics {
			continue
		}
		v := strings.TrimSpace(in.Values[fl.Key])
		if v == "" && fl.Required {
			return held{}, apperr.Invalidf("`%s` is required.", fl.Key)
		}
		if utf8.RuneCountInString(v) > maxValue {
			return held{}, apperr.Invalidf("`%s` must be at most %d characters.", fl.Key, maxValue)
		}
		if v != "" {
			h.Fields[fl.Key] = v
		}
	}
	if f.has(KeyTopics) {
		public, err := s.d.Books.PublicLabels(ctx, f.BookID)
		if err != nil {
			return held{}, err
		}
		for _, raw := range in.Topics {
			id, err := uuid.Parse(strings.TrimSpace(raw))
			if err != nil {
				continue // not a label id: ignored, like a label that is not public
			}
			for _, l := range public {
				if l.ID == id && !containsID(h.TopicIDs, id) {
					h.TopicIDs = append(h.TopicIDs, id)
				}
			}
		}
		for _, fl := range f.Fields {
			if fl.Key == KeyTopics && fl.Required && len(h.TopicIDs) == 0 {
				return held{}, apperr.Invalidf("`topics` is required: choose at least one topic.")
			}
		}
	}
	if f.ConsentText != "" {
		if c := strings.ToLower(strings.TrimSpace(in.Consent)); !slices.Contains(ConsentTicked, c) {
			return held{}, apperr.Invalidf("`consent` must be given (%s): tick the box to agree to the consent text.", strings.Join(ConsentTicked, " or "))
		}
	}
	if err := s.d.Contacts.CheckSignup(ctx, f.BookID, signupOf(h, nil)); err != nil {
		return held{}, asFormError(err)
	}
	return h, nil
}

// asFormError names a contact rule's field as the form does (`phone` for
// `phones[0].number`, `email` for `emails[0].address`), as INVALID_INPUT.
func asFormError(err error) error {
	code := apperr.CodeOf(err)
	if code != apperr.Validation && code != apperr.InvalidInput {
		return err
	}
	msg := apperr.MessageOf(err)
	for from, to := range map[string]string{"phones[0].number": KeyPhone, "phones[0]": KeyPhone, "emails[0].address": "email", "emails[0]": "email"} {
		msg = strings.Replace(msg, "`"+from+"`", "`"+to+"`", 1)
	}
	return apperr.Invalidf("%s", msg)
}

// signupOf turns a submission into what the contacts service writes.
func signupOf(h held, labelIDs []uuid.UUID) contacts.Signup {
	in := contacts.Signup{Email: h.Email, LabelIDs: labelIDs, Custom: map[string]string{}}
	for k, v := range h.Fields {
		switch k {
		case KeyFirstName:
			in.Values.FirstName = v
		case KeyLastName:
			in.Values.LastName = v
		case KeyCompany:
			in.Values.Company = v
		case KeyJobTitle:
			in.Values.JobTitle = v
		case KeyPhone:
			in.Values.Phones = []contacts.Phone{{Number: v, Label: "mobile"}}
		default:
			if key, ok := strings.CutPrefix(k, customPrefix); ok {
				in.Custom[key] = v
			}
		}
	}
	return in
}

// apply carries out a sign-up in tx: the contact is created or patched
// with the form's labels and the chosen topics, an unsubscribe of the
// address is lifted (the person asked again) while any other suppression
// stays and keeps the contact marked, and the consent is recorded.
func (s *Service) apply(ctx context.Context, tx *postgres.Tx, f Form, h held, method Method) error {
	b, err := s.d.Books.Book(ctx, f.BookID)
	if err != nil {
		return err
	}
	labels, err := s.d.Books.LabelIDs(ctx, f.BookID, f.LabelIDs)
	if err != nil {
		return err
	}
	if len(h.TopicIDs) > 0 {
		public, err := s.d.Books.PublicLabels(ctx, f.BookID)
		if err != nil {
			return err
		}
		for _, l := range public {
			if containsID(h.TopicIDs, l.ID) && !containsID(labels, l.ID) {
				labels = append(labels, l.ID)
			}
		}
	}
	reasons, err := suppression.InForce(ctx, tx, f.BookID, []string{h.Email})
	if err != nil {
		return err
	}
	reason, suppressed := reasons[h.Email]
	if suppressed && reason == suppression.ReasonUnsubscribe {
		if _, err := s.d.Suppressor.LiftUnsubscribe(ctx, tx, f.BookID, h.Email); err != nil {
			return err
		}
	}
	contactID, _, err := s.d.Contacts.Subscribe(ctx, tx, b.TeamID, f.BookID, signupOf(h, labels))
	if err != nil {
		return err
	}
	if suppressed && reason != suppression.ReasonUnsubscribe {
		// The record is in force already: nothing new is recorded, the
		// contact is marked as every holder of a suppressed address is.
		if _, err := s.d.Suppressor.Suppress(ctx, tx, f.BookID, []string{h.Email}, reason, suppression.SourceAPI, nil); err != nil {
			return err
		}
	}
	formID := f.ID
	consent := Consent{
		ID: uuid.New(), ContactID: contactID, FormID: &formID, Method: method, Text: h.ConsentText,
		IP: h.IP, UserAgent: h.UserAgent, SubmittedAt: h.SubmittedAt, ConfirmedAt: s.d.Now().UTC().Truncate(time.Microsecond),
	}
	if err := s.st.insertConsent(ctx, tx, f.BookID, consent); err != nil {
		return err
	}
	return s.emitSubscribed(ctx, tx, b.TeamID, f.BookID, contactID, h.Email, labels, consent)
}

// emitSubscribed writes contact.subscribed for a sign-up (a single opt-in
// post, a confirmed double opt-in), when wanted.
func (s *Service) emitSubscribed(ctx context.Context, tx *postgres.Tx, teamID, bookID, contactID uuid.UUID, address string, labels []uuid.UUID, c Consent) error {
	outbox := s.d.Contacts.Outbox()
	if outbox == nil {
		return nil
	}
	if want, err := outbox.Wanted(ctx, tx, teamID, events.ContactSubscribed); err != nil || !want {
		return err
	}
	if labels == nil {
		labels = []uuid.UUID{}
	}
	book, consentID := bookID, c.ID
	return outbox.Append(ctx, tx, c.ConfirmedAt, events.Event{Type: events.ContactSubscribed, TeamID: teamID, BookID: &book,
		Data: events.SubscribedData{ContactID: contactID, Address: address, FormID: c.FormID, LabelIDs: labels,
			ConsentID: &consentID, Source: events.SubscribedForm, OccurredAt: c.ConfirmedAt}})
}

// ConfirmPage is what the confirmation page shows before the button.
type ConfirmPage struct {
	FormName string
}

// CheckToken looks a confirmation token up for its page. It changes
// nothing: mail scanners fetch links before people click them. Unknown,
// used or expired: NOT_FOUND.
func (s *Service) CheckToken(ctx context.Context, token string) (ConfirmPage, error) {
	hash, ok := tokenHash(token)
	if !ok {
		return ConfirmPage{}, errUnknownToken
	}
	h, err := s.st.pending(ctx, s.d.DB, hash, s.d.Now())
	if err != nil {
		return ConfirmPage{}, err
	}
	f, err := s.st.form(ctx, s.d.DB, h.FormID, false)
	if err != nil {
		return ConfirmPage{}, errUnknownToken
	}
	return ConfirmPage{FormName: f.Name}, nil
}

// Confirm carries out the sign-up of a confirmation token, once. Unknown,
// used or expired: NOT_FOUND.
func (s *Service) Confirm(ctx context.Context, token string) (Result, error) {
	hash, ok := tokenHash(token)
	if !ok {
		return Result{}, errUnknownToken
	}
	var res Result
	err := postgres.InTx(ctx, s.d.DB, func(tx *postgres.Tx) error {
		h, err := s.st.claim(ctx, tx, hash, s.d.Now())
		if err != nil {
			return err
		}
		f, err := s.st.form(ctx, tx, h.FormID, false)
		if err != nil {
			return errUnknownToken
		}
		if err := s.apply(ctx, tx, f, h, MethodDouble); err != nil {
			return err
		}
		res = Result{Message: "Thank you! Your subscription is confirmed.", RedirectURL: f.RedirectURL}
		return s.st.counted(ctx, tx, f.ID, 0, 1)
	})
	return res, err
}

// newToken makes a confirmation token (256 random bits, URL-safe) and the
// hash that is stored.
func newToken() (string, []byte, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", nil, err
	}
	token := base64.RawURLEncoding.EncodeToString(b)
	sum := sha256.Sum256([]byte(token))
	return token, sum[:], nil
}

// tokenHash is the stored hash of a well-formed token.
func tokenHash(token string) ([]byte, bool) {
	token = strings.TrimSpace(token)
	if b, err := base64.RawURLEncoding.DecodeString(token); err != nil || len(b) != 32 {
		return nil, false
	}
	sum := sha256.Sum256([]byte(token))
	return sum[:], true
}

func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n])
}
