// Package mailertest is a fake SendGrid for tests and benchmarks: an httptest
// server answering POST /v3/mail/send the way SendGrid does. It requires
// "Authorization: Bearer <key>", parses the real v3 JSON body (optionally
// gzip-compressed), rejects what SendGrid rejects with SendGrid's
// {"errors":[{"message":...}]} shape (missing from, subject or content,
// 0 or more than 1,000 personalizations, substitution limits), answers 202
// with an X-Message-Id header, and records every request. Failures can be
// injected (FailNext) and answers slowed down (SetDelay). It is safe for
// concurrent use and cheap enough for a benchmark of 100 requests of 1,000
// personalizations each.
package mailertest

import (
	"compress/gzip"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Address is an email address with an optional display name.
type Address struct {
	Email string `json:"email"`
	Name  string `json:"name,omitempty"`
}

// Content is one body part.
type Content struct {
	Type  string `json:"type"`
	Value string `json:"value"`
}

// Personalization is one parsed personalizations[] item.
type Personalization struct {
	To            []Address         `json:"to"`
	Subject       string            `json:"subject"`
	Substitutions map[string]string `json:"substitutions"`
	Headers       map[string]string `json:"headers"`
	CustomArgs    map[string]string `json:"custom_args"`
}

// Request is one received mail/send request.
type Request struct {
	APIKey    string `json:"-"` // from "Authorization: Bearer <key>"
	Status    int    `json:"-"` // the status answered
	MessageID string `json:"-"` // the X-Message-Id answered, "" unless accepted

	From             Address           `json:"from"`
	ReplyTo          *Address          `json:"reply_to"`
	Subject          string            `json:"subject"` // top-level default subject
	Content          []Content         `json:"content"`
	Personalizations []Personalization `json:"personalizations"`
	Headers          map[string]string `json:"headers"`
	CustomArgs       map[string]string `json:"custom_args"`
	TemplateID       string            `json:"template_id"`
	TrackingSettings *TrackingSettings `json:"tracking_settings"`
}

// TrackingSettings is the request's tracking_settings, as far as the
// service sets them.
type TrackingSettings struct {
	ClickTracking *struct {
		Enable     bool `json:"enable"`
		EnableText bool `json:"enable_text"`
	} `json:"click_tracking"`
	OpenTracking *struct {
		Enable bool `json:"enable"`
	} `json:"open_tracking"`
}

// HTML is the request's text/html content ("" if it has none).
func (r Request) HTML() string { return r.content("text/html") }

// Text is the request's text/plain content ("" if it has none).
func (r Request) Text() string { return r.content("text/plain") }

func (r Request) content(typ string) string {
	for _, c := range r.Content {
		if c.Type == typ {
			return c.Value
		}
	}
	return ""
}

// Text is the recipient's text/plain body (substitutions are not applied:
// account emails, the only ones with a text part, use none).
func (r Recipient) Text() string { return Request{Content: r.Content}.Text() }

// Recipient is one personalization of an accepted request together with
// what it shares with the rest of its batch.
type Recipient struct {
	Email, Name   string // the personalization's first "to" address
	Subject       string
	Substitutions map[string]string
	Headers       map[string]string
	CustomArgs    map[string]string
	From          Address
	ReplyTo       *Address
	Content       []Content // the batch's shared content, placeholders unreplaced
	APIKey        string
	MessageID     string
}

// HTML is the text/html body this recipient receives: the shared content
// with the substitutions applied in one pass, as the provider does.
func (r Recipient) HTML() string {
	html := Request{Content: r.Content}.HTML()
	if len(r.Substitutions) == 0 {
		return html
	}
	pairs := make([]string, 0, 2*len(r.Substitutions))
	for k, v := range r.Substitutions {
		pairs = append(pairs, k, v)
	}
	return strings.NewReplacer(pairs...).Replace(html)
}

type failure struct {
	status int
	body   string
	left   int
}

// Server is the fake SendGrid. URL is its base URL (use it as
// MAILER_BASE_URL).
type Server struct {
	*httptest.Server

	idPrefix string
	seq      atomic.Int64
	accepted atomic.Int64 // recipients of accepted requests

	mu       sync.Mutex
	records  []*record
	failures []failure
	delay    time.Duration
	key      string
}

// record is one received request. The body is kept as bytes and parsed in
// full only when a test asks (Requests, Recipients): a benchmark's 100,000
// recipients then cost neither the maps nor the garbage collector's time.
type record struct {
	apiKey, messageID string
	status            int
	body              []byte
	parsed            *Request
}

func (r *record) request() *Request {
	if r.parsed == nil {
		var req Request
		_ = json.Unmarshal(r.body, &req) // rejected bodies may not parse; keep what did
		req.APIKey, req.Status, req.MessageID = r.apiKey, r.status, r.messageID
		r.parsed, r.body = &req, nil
	}
	return r.parsed
}

// NewServer starts a fake SendGrid, closed when the test ends.
func NewServer(t testing.TB) *Server {
	t.Helper()
	var id [6]byte
	_, _ = rand.Read(id[:])
	s := &Server{idPrefix: hex.EncodeToString(id[:])}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

// FailNext makes the next n valid requests answer status with body (for
// example 400 and `{"errors":[{"message":"..."}]}`). Status 0 drops the
// connection without an answer, a network error for the client. Calls queue
// up.
func (s *Server) FailNext(status int, body string, n int) {
	if n <= 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failures = append(s.failures, failure{status: status, body: body, left: n})
}

// SetDelay delays every answer by d (0 to stop); a client that gives up
// earlier gets no answer and nothing is recorded.
func (s *Server) SetDelay(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.delay = d
}

// RequireAPIKey makes requests with any other key answer 401, as SendGrid
// does for an unknown key. By default every non-empty key is accepted.
func (s *Server) RequireAPIKey(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.key = key
}

// Requests returns every request received so far, rejected ones included
// (see Request.Status), in arrival order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Request, len(s.records))
	for i, r := range s.records {
		out[i] = *r.request()
	}
	return out
}

// RequestCount is len(Requests()) without parsing them.
func (s *Server) RequestCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.records)
}

// Recipients returns one record per personalization of every accepted
// request, in arrival order: everyone who would receive an email.
func (s *Server) Recipients() []Recipient {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Recipient
	for _, rec := range s.records {
		if rec.messageID == "" {
			continue
		}
		r := rec.request()
		for _, p := range r.Personalizations {
			rcpt := Recipient{
				Subject: p.Subject, Substitutions: p.Substitutions, Headers: p.Headers, CustomArgs: p.CustomArgs,
				From: r.From, ReplyTo: r.ReplyTo, Content: r.Content, APIKey: r.APIKey, MessageID: r.MessageID,
			}
			if rcpt.Subject == "" {
				rcpt.Subject = r.Subject
			}
			if len(p.To) > 0 {
				rcpt.Email, rcpt.Name = p.To[0].Email, p.To[0].Name
			}
			out = append(out, rcpt)
		}
	}
	return out
}

// RecipientCount is len(Recipients()) without building them.
func (s *Server) RecipientCount() int { return int(s.accepted.Load()) }

// Reset forgets recorded requests, injected failures, the delay and the
// required key.
func (s *Server) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.records, s.failures, s.delay, s.key = nil, nil, 0, ""
	s.accepted.Store(0)
}

// maxBody is SendGrid's limit for a whole request (30 MB).
const maxBody = 30 << 20

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	// Read the body before anything else: only then does net/http notice a
	// client that goes away, which SetDelay relies on.
	data, readErr := readBody(w, r)
	s.mu.Lock()
	delay, wantKey := s.delay, s.key
	s.mu.Unlock()
	if delay > 0 {
		select {
		case <-time.After(delay):
		case <-r.Context().Done():
			return
		}
	}
	if r.URL.Path == "/v3/scopes" && r.Method == http.MethodGet {
		// What a key may do: the key is checked as for a send; nothing is
		// recorded.
		key, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok || key == "" || (wantKey != "" && key != wantKey) {
			writeErrors(w, http.StatusUnauthorized, "authorization required")
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"scopes":["mail.send","user.profile.read"]}`))
		return
	}
	if r.URL.Path != "/v3/mail/send" {
		writeErrors(w, http.StatusNotFound, "Not Found")
		return
	}
	if r.Method != http.MethodPost {
		writeErrors(w, http.StatusMethodNotAllowed, "Method Not Allowed")
		return
	}

	key, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	rec := &record{apiKey: key, body: data}
	if !ok || key == "" || (wantKey != "" && key != wantKey) {
		s.finish(w, rec, http.StatusUnauthorized, "The provided authorization grant is invalid, expired, or revoked")
		return
	}
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		s.finish(w, rec, http.StatusBadRequest, "Content-Type should be application/json.")
		return
	}
	if readErr != nil {
		s.finish(w, rec, readErr.status, readErr.message)
		return
	}
	var env envelope
	if err := json.Unmarshal(data, &env); err != nil {
		s.finish(w, rec, http.StatusBadRequest, "Bad Request")
		return
	}
	if msgs := validate(&env); len(msgs) > 0 {
		s.finish(w, rec, http.StatusBadRequest, msgs...)
		return
	}

	if f, ok := s.nextFailure(); ok {
		rec.status = f.status
		s.record(rec)
		if f.status == 0 {
			dropConnection(w)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(f.status)
		_, _ = io.WriteString(w, f.body)
		return
	}

	rec.status = http.StatusAccepted
	rec.messageID = s.idPrefix + "." + strconv.FormatInt(s.seq.Add(1), 10)
	s.accepted.Add(int64(len(env.Personalizations)))
	s.record(rec)
	w.Header().Set("X-Message-Id", rec.messageID)
	w.WriteHeader(http.StatusAccepted)
}

type bodyError struct {
	status  int
	message string
}

// readBody reads the request body, gunzipping it when it says so.
func readBody(w http.ResponseWriter, r *http.Request) ([]byte, *bodyError) {
	var body io.Reader = http.MaxBytesReader(w, r.Body, maxBody)
	if r.Header.Get("Content-Encoding") == "gzip" {
		gz, err := gzip.NewReader(body)
		if err != nil {
			return nil, &bodyError{http.StatusBadRequest, "The gzip body could not be decompressed."}
		}
		body = gz
	}
	data, err := io.ReadAll(body)
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return nil, &bodyError{http.StatusRequestEntityTooLarge, "The request is too large."}
		}
		return nil, &bodyError{http.StatusBadRequest, "The body could not be read."}
	}
	return data, nil
}

// envelope is what validation needs of a request. The per-recipient maps
// are only shape-checked (objectShape), which makes validating a
// 1,000-recipient batch several times cheaper than decoding it in full.
type envelope struct {
	From             Address   `json:"from"`
	ReplyTo          *Address  `json:"reply_to"`
	Subject          string    `json:"subject"`
	Content          []Content `json:"content"`
	TemplateID       string    `json:"template_id"`
	Personalizations []struct {
		To            []Address     `json:"to"`
		Subject       string        `json:"subject"`
		Substitutions substitutions `json:"substitutions"`
		Headers       objectShape   `json:"headers"`
		CustomArgs    objectShape   `json:"custom_args"`
	} `json:"personalizations"`
}

// objectShape accepts null or a JSON object without decoding it; the
// decoder hands UnmarshalJSON a slice of the body, so nothing is copied.
type objectShape struct{}

func (objectShape) UnmarshalJSON(b []byte) error {
	if string(b) == "null" || b[0] == '{' {
		return nil
	}
	return errors.New("not an object")
}

// substitutions records whether SendGrid's limits of 100 substitutions and
// 10,000 bytes hold. An object under 600 bytes cannot break either (every
// entry takes at least 6 bytes and decoding never makes text longer), so
// only larger ones are decoded.
type substitutions struct{ tooLarge bool }

func (s *substitutions) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		return nil
	}
	if b[0] != '{' {
		return errors.New("not an object")
	}
	if len(b) < 600 {
		return nil
	}
	var m map[string]string
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	size := 0
	for k, v := range m {
		size += len(k) + len(v)
	}
	s.tooLarge = len(m) > 100 || size > 10000
	return nil
}

// validate applies SendGrid's checks of a mail/send body, with its wording.
func validate(r *envelope) []string {
	var msgs []string
	if r.From.Email == "" || !strings.Contains(r.From.Email, "@") {
		msgs = append(msgs, "The from object must be provided for every email send. It is an object that requires the email parameter, but may also contain a name parameter.")
	}
	if r.ReplyTo != nil && !strings.Contains(r.ReplyTo.Email, "@") {
		msgs = append(msgs, "The reply_to email does not contain a valid address.")
	}
	if n := len(r.Personalizations); n == 0 || n > 1000 {
		msgs = append(msgs, "The personalizations field is required and must have at least one personalization, and no more than 1000.")
	}
	if r.TemplateID == "" {
		okContent := len(r.Content) > 0
		for _, c := range r.Content {
			if c.Type == "" || c.Value == "" {
				okContent = false
			}
		}
		if !okContent {
			msgs = append(msgs, "Unless a valid template_id is provided, the content parameter is required. There must be at least one defined content block. We typically suggest both text/plain and text/html blocks are included, but only one block is required.")
		}
	}
	recipients := 0
	for i, p := range r.Personalizations {
		if len(p.To) == 0 {
			msgs = append(msgs, fmt.Sprintf("The to array is required for all personalization objects, and must have at least one email object with a valid email address. (personalizations.%d.to)", i))
		}
		for j, a := range p.To {
			if !validAddress(a.Email) {
				msgs = append(msgs, fmt.Sprintf("Does not contain a valid address. (personalizations.%d.to.%d.email)", i, j))
			}
		}
		recipients += len(p.To)
		if p.Subject == "" && r.Subject == "" && r.TemplateID == "" {
			msgs = append(msgs, fmt.Sprintf("The subject is required. You can get around this requirement if you use a template with a subject defined or if every single personalization has a subject defined. (personalizations.%d.subject)", i))
		}
		if p.Substitutions.tooLarge {
			msgs = append(msgs, fmt.Sprintf("The substitutions for a personalization may not exceed 100 substitutions or 10000 bytes in total. (personalizations.%d.substitutions)", i))
		}
	}
	if recipients > 1000 {
		msgs = append(msgs, "The total number of recipients must be no more than 1000.")
	}
	return msgs
}

// validAddress is a cheap version of SendGrid's address check: something,
// one "@", a domain with a dot, no spaces.
func validAddress(a string) bool {
	at := strings.IndexByte(a, '@')
	return at > 0 && at == strings.LastIndexByte(a, '@') && strings.Contains(a[at+1:], ".") &&
		!strings.ContainsAny(a, " \t\r\n<>,;") && !strings.HasSuffix(a, ".")
}

func (s *Server) nextFailure() (failure, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.failures) == 0 {
		return failure{}, false
	}
	f := s.failures[0]
	s.failures[0].left--
	if s.failures[0].left == 0 {
		s.failures = s.failures[1:]
	}
	return f, true
}

func (s *Server) record(r *record) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.records = append(s.records, r)
}

// finish records a rejected request and answers SendGrid's error document.
func (s *Server) finish(w http.ResponseWriter, r *record, status int, msgs ...string) {
	r.status = status
	s.record(r)
	writeErrors(w, status, msgs...)
}

func writeErrors(w http.ResponseWriter, status int, msgs ...string) {
	type item struct {
		Message string  `json:"message"`
		Field   *string `json:"field"`
		Help    *string `json:"help"`
	}
	doc := struct {
		Errors []item `json:"errors"`
	}{}
	for _, m := range msgs {
		it := item{Message: m}
		// "text (personalizations.0.to)" carries the field, as SendGrid's
		// "field" member does.
		if i := strings.LastIndex(m, " ("); i > 0 && strings.HasSuffix(m, ")") {
			field := m[i+2 : len(m)-1]
			it.Message, it.Field = m[:i], &field
		}
		doc.Errors = append(doc.Errors, it)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(doc)
}

func dropConnection(w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		panic("mailertest: cannot drop the connection")
	}
	conn, _, err := hj.Hijack()
	if err != nil {
		panic("mailertest: " + err.Error())
	}
	_ = conn.Close()
}
