package mailer

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/sendgrid/rest"
	"github.com/sendgrid/sendgrid-go"
)

// RequestTimeout bounds one provider request, the upload of a full batch
// included.
const RequestTimeout = 30 * time.Second

// maxMessageLen caps Message: a batch with many bad addresses gets one
// provider error per address, and the text is stored per recipient.
const maxMessageLen = 1000

// sendGridSender is the Sender for SendGrid's v3 API.
type sendGridSender struct {
	baseURL string
	http    *http.Client
	timeout time.Duration
}

// NewSender returns a Sender posting to baseURL + "/v3/mail/send" (baseURL is
// config.MailerBaseURL, e.g. https://api.sendgrid.com). A nil httpClient gets
// a client of its own that keeps enough idle connections for concurrent
// batches.
func NewSender(baseURL string, httpClient *http.Client) Sender {
	if httpClient == nil {
		transport := http.DefaultTransport.(*http.Transport).Clone()
		transport.MaxIdleConnsPerHost = 32
		httpClient = &http.Client{Transport: transport}
	}
	return &sendGridSender{baseURL: strings.TrimRight(baseURL, "/"), http: httpClient, timeout: RequestTimeout}
}

// Send posts the batch as one mail/send request.
func (s *sendGridSender) Send(ctx context.Context, b Batch) (string, error) {
	if n := len(b.Personalizations); n == 0 || n > MaxBatch {
		return "", &Error{Permanent: true, Message: fmt.Sprintf("a batch needs 1 to %d recipients, this one has %d", MaxBatch, n)}
	}
	if err := ctx.Err(); err != nil {
		return "", &Error{Message: "sending stopped: " + err.Error(), cause: err}
	}

	request := sendgrid.GetRequest(b.APIKey, "/v3/mail/send", s.baseURL)
	request.Method = rest.Post
	request.Body = encodeMail(b)

	reqCtx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	// A rest.Client per send: sendgrid clients carry per-request state and
	// are not safe for concurrent use; the http.Client underneath is shared.
	client := &rest.Client{HTTPClient: s.http}
	resp, err := client.SendWithContext(reqCtx, request)
	if resp != nil && resp.StatusCode >= 200 && resp.StatusCode < 300 {
		// Accepted, even if reading the (empty) body failed afterwards.
		return header(resp.Headers, "X-Message-Id"), nil
	}
	if err != nil {
		return "", networkError(ctx, reqCtx, s.timeout, err)
	}
	return "", statusError(resp.StatusCode, resp.Body)
}

func networkError(parent, reqCtx context.Context, timeout time.Duration, err error) *Error {
	switch {
	case parent.Err() != nil:
		return &Error{Message: "sending stopped: " + parent.Err().Error(), cause: parent.Err()}
	case reqCtx.Err() != nil:
		return &Error{Message: fmt.Sprintf("email provider did not answer within %s", timeout), cause: err}
	}
	return &Error{Message: "email provider unreachable: " + err.Error(), cause: err}
}

// statusError classifies a non-2xx answer. SendGrid explains failures as
// {"errors":[{"message":"...","field":"...","help":...}]}.
func statusError(status int, body string) *Error {
	detail := providerMessages(body)
	e := &Error{Status: status}
	switch {
	case status == http.StatusTooManyRequests:
		e.Message = "email provider rate limit reached (" + statusText(status) + ")"
	case status == http.StatusRequestTimeout:
		e.Message = "email provider timed out reading the request (" + statusText(status) + ")"
	case status >= 400 && status < 500:
		e.Permanent = true
		if detail != "" {
			e.Message = detail
			return e
		}
		e.Message = "email provider rejected the request (" + statusText(status) + ")"
	default:
		e.Message = "email provider error (" + statusText(status) + ")"
	}
	if detail != "" {
		e.Message += ": " + detail
	}
	return e
}

// providerMessages joins the distinct errors[].message texts of a SendGrid
// error body, each with its field when the provider names one, capped at
// maxMessageLen. It returns "" when the body is not such a document.
func providerMessages(body string) string {
	var doc struct {
		Errors []struct {
			Message string `json:"message"`
			Field   any    `json:"field"` // a string or null
		} `json:"errors"`
	}
	if json.Unmarshal([]byte(body), &doc) != nil {
		return ""
	}
	seen := map[string]bool{}
	var b strings.Builder
	for _, e := range doc.Errors {
		msg := strings.TrimSpace(e.Message)
		if field, ok := e.Field.(string); ok && field != "" {
			msg += " (" + field + ")"
		}
		if msg == "" || seen[msg] {
			continue
		}
		seen[msg] = true
		if b.Len() > 0 {
			b.WriteString("; ")
		}
		b.WriteString(msg)
		if b.Len() > maxMessageLen {
			break
		}
	}
	return truncate(b.String(), maxMessageLen)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[:n]
	for !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s + "…"
}

func header(h map[string][]string, name string) string {
	if v := http.Header(h).Values(name); len(v) > 0 {
		return v[0]
	}
	return ""
}

// Verify proves the key with SendGrid's GET /v3/scopes, which needs no
// particular permission and sends nothing; a key without mail.send is
// reported as such.
func (s *sendGridSender) Verify(ctx context.Context, apiKey string) (bool, string) {
	request := sendgrid.GetRequest(apiKey, "/v3/scopes", s.baseURL)
	request.Method = rest.Get
	reqCtx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	client := &rest.Client{HTTPClient: s.http}
	resp, err := client.SendWithContext(reqCtx, request)
	if err != nil {
		return false, networkError(ctx, reqCtx, s.timeout, err).Message
	}
	switch {
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		return false, "SendGrid refused the key (" + statusText(resp.StatusCode) + ")"
	case resp.StatusCode < 200 || resp.StatusCode >= 300:
		return false, statusError(resp.StatusCode, resp.Body).Message
	}
	var doc struct {
		Scopes []string `json:"scopes"`
	}
	if json.Unmarshal([]byte(resp.Body), &doc) == nil && doc.Scopes != nil {
		for _, sc := range doc.Scopes {
			if sc == "mail.send" {
				return true, "SendGrid accepted the key; it may send mail"
			}
		}
		return false, "the SendGrid key lacks the mail.send permission"
	}
	return true, "SendGrid accepted the key"
}
