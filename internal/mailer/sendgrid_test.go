package mailer_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/contactbook/contactbook/internal/mailer"
	"github.com/contactbook/contactbook/internal/mailer/mailertest"
)

func batch(n int) mailer.Batch {
	b := mailer.Batch{
		APIKey:    "SG.key-1",
		FromEmail: "news@acme.example",
		FromName:  "Acme News",
		ReplyTo:   "help@acme.example",
		HTML:      `<p>Hi &cbm0;</p><a href="&cbm1;">Unsubscribe</a>`,
	}
	for i := range n {
		b.Personalizations = append(b.Personalizations, mailer.Personalization{
			To:            fmt.Sprintf("r%d@example.com", i),
			ToName:        fmt.Sprintf("Recipient %d", i),
			Subject:       fmt.Sprintf("Hello %d", i),
			Substitutions: map[string]string{"&cbm0;": fmt.Sprintf("R%d", i), "&cbm1;": fmt.Sprintf("https://u.example/?t=%d&amp;c=1", i)},
			Headers: map[string]string{
				"List-Unsubscribe":      fmt.Sprintf("<https://u.example/?t=%d&c=1>", i),
				"List-Unsubscribe-Post": "List-Unsubscribe=One-Click",
			},
			CustomArgs: map[string]string{"participant_id": fmt.Sprint("p", i), "step_id": "s1"},
		})
	}
	return b
}

func asError(t *testing.T, err error) *mailer.Error {
	t.Helper()
	var e *mailer.Error
	if !errors.As(err, &e) {
		t.Fatalf("want *mailer.Error, got %T %v", err, err)
	}
	return e
}

func TestSendBatch(t *testing.T) {
	t.Parallel()
	srv := mailertest.NewServer(t)
	sender := mailer.NewSender(srv.URL+"/", nil) // a trailing slash is tolerated
	b := batch(3)
	id, err := sender.Send(context.Background(), b)
	if err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("want one request for the batch, got %d", len(reqs))
	}
	r := reqs[0]
	if id == "" || id != r.MessageID {
		t.Errorf("message id %q, server answered %q", id, r.MessageID)
	}
	if r.APIKey != "SG.key-1" || r.Status != http.StatusAccepted {
		t.Errorf("api key %q status %d", r.APIKey, r.Status)
	}
	if r.From != (mailertest.Address{Email: "news@acme.example", Name: "Acme News"}) {
		t.Errorf("from = %+v", r.From)
	}
	if r.ReplyTo == nil || r.ReplyTo.Email != "help@acme.example" {
		t.Errorf("reply_to = %+v", r.ReplyTo)
	}
	if len(r.Content) != 1 || r.Content[0].Type != "text/html" || r.Content[0].Value != b.HTML {
		t.Errorf("content = %+v", r.Content)
	}
	if len(r.Personalizations) != 3 {
		t.Fatalf("want 3 personalizations, got %d", len(r.Personalizations))
	}
	for i, p := range r.Personalizations {
		want := b.Personalizations[i]
		if len(p.To) != 1 || p.To[0].Email != want.To || p.To[0].Name != want.ToName {
			t.Errorf("personalization %d to = %+v", i, p.To)
		}
		if p.Subject != want.Subject {
			t.Errorf("personalization %d subject = %q", i, p.Subject)
		}
		for name, m := range map[string][2]map[string]string{
			"substitutions": {p.Substitutions, want.Substitutions},
			"headers":       {p.Headers, want.Headers},
			"custom_args":   {p.CustomArgs, want.CustomArgs},
		} {
			if fmt.Sprint(m[0]) != fmt.Sprint(m[1]) {
				t.Errorf("personalization %d %s = %v, want %v", i, name, m[0], m[1])
			}
		}
	}

	recipients := srv.Recipients()
	if len(recipients) != 3 || srv.RecipientCount() != 3 {
		t.Fatalf("recipients %d, count %d", len(recipients), srv.RecipientCount())
	}
	if got := recipients[2].HTML(); got != `<p>Hi R2</p><a href="https://u.example/?t=2&amp;c=1">Unsubscribe</a>` {
		t.Errorf("recipient html = %q", got)
	}
	if recipients[2].Email != "r2@example.com" || recipients[2].MessageID != id {
		t.Errorf("recipient = %+v", recipients[2])
	}
}

func TestSendWithoutOptionalFields(t *testing.T) {
	t.Parallel()
	srv := mailertest.NewServer(t)
	b := batch(1)
	b.ReplyTo, b.FromName = "", ""
	b.Personalizations[0].ToName = ""
	b.Personalizations[0].Substitutions, b.Personalizations[0].Headers, b.Personalizations[0].CustomArgs = nil, nil, nil
	if _, err := mailer.NewSender(srv.URL, nil).Send(context.Background(), b); err != nil {
		t.Fatal(err)
	}
	r := srv.Requests()[0]
	if r.ReplyTo != nil || r.From.Name != "" || r.Personalizations[0].To[0].Name != "" || r.Personalizations[0].Substitutions != nil {
		t.Errorf("optional fields sent: %+v", r)
	}
}

func TestSendAuthentication(t *testing.T) {
	t.Parallel()
	srv := mailertest.NewServer(t)
	srv.RequireAPIKey("SG.right")
	_, err := mailer.NewSender(srv.URL, nil).Send(context.Background(), batch(1))
	e := asError(t, err)
	if !e.Permanent || e.Status != 401 || e.Message != "The provided authorization grant is invalid, expired, or revoked" {
		t.Errorf("got %+v", e)
	}
	if srv.RecipientCount() != 0 {
		t.Error("rejected request counted as delivered")
	}
}

func TestSendPermanentFailure(t *testing.T) {
	t.Parallel()
	srv := mailertest.NewServer(t)
	sender := mailer.NewSender(srv.URL, nil)
	srv.FailNext(403, `{"errors":[{"message":"The from address does not match a verified Sender Identity.","field":null,"help":"https://sendgrid.com/docs"}]}`, 1)
	_, err := sender.Send(context.Background(), batch(2))
	e := asError(t, err)
	if !e.Permanent || e.Status != 403 || e.Message != "The from address does not match a verified Sender Identity." {
		t.Errorf("got %+v", e)
	}
	if !strings.Contains(e.Error(), "HTTP 403") {
		t.Errorf("Error() = %q", e.Error())
	}

	// The fake rejects what SendGrid rejects; messages name the field and
	// repeated ones are joined once.
	b := batch(3)
	b.Personalizations[1].To = "not-an-address"
	b.Personalizations[2].Subject = ""
	_, err = sender.Send(context.Background(), b)
	e = asError(t, err)
	want := "Does not contain a valid address. (personalizations.1.to.0.email); The subject is required."
	if !e.Permanent || e.Status != 400 || !strings.HasPrefix(e.Message, want) || !strings.HasSuffix(e.Message, "(personalizations.2.subject)") {
		t.Errorf("got %+v", e)
	}

	// A 4xx without SendGrid's error document still explains itself.
	srv.FailNext(413, "<html>too big</html>", 1)
	_, err = sender.Send(context.Background(), batch(1))
	e = asError(t, err)
	if !e.Permanent || e.Message != "email provider rejected the request (413 Request Entity Too Large)" {
		t.Errorf("got %+v", e)
	}
	if srv.RecipientCount() != 0 {
		t.Errorf("rejected requests counted as delivered: %d", srv.RecipientCount())
	}
}

func TestSendTransientFailure(t *testing.T) {
	t.Parallel()
	srv := mailertest.NewServer(t)
	sender := mailer.NewSender(srv.URL, nil)
	cases := []struct {
		status int
		body   string
		want   string
	}{
		{503, "", "email provider error (503 Service Unavailable)"},
		{500, `{"errors":[{"message":"internal error"}]}`, "email provider error (500 Internal Server Error): internal error"},
		{429, `{"errors":[{"field":null,"message":"too many requests"}]}`, "email provider rate limit reached (429 Too Many Requests): too many requests"},
		{0, "", "email provider unreachable: "},
	}
	for _, c := range cases {
		srv.FailNext(c.status, c.body, 1)
		_, err := sender.Send(context.Background(), batch(1))
		e := asError(t, err)
		if e.Permanent || e.Status != c.status || !strings.HasPrefix(e.Message, c.want) {
			t.Errorf("status %d: got %+v, want transient %q", c.status, e, c.want)
		}
	}
	// The failures were used up: the retry goes through.
	if _, err := sender.Send(context.Background(), batch(1)); err != nil {
		t.Fatal(err)
	}
	if got := len(srv.Requests()); got != 5 {
		t.Errorf("server saw %d requests, want 5", got)
	}
	if srv.RecipientCount() != 1 {
		t.Errorf("delivered %d, want 1", srv.RecipientCount())
	}
}

func TestSendUnreachable(t *testing.T) {
	t.Parallel()
	srv := mailertest.NewServer(t)
	url := srv.URL
	srv.Close()
	_, err := mailer.NewSender(url, nil).Send(context.Background(), batch(1))
	e := asError(t, err)
	if e.Permanent || e.Status != 0 || !strings.HasPrefix(e.Message, "email provider unreachable: ") || errors.Unwrap(e) == nil {
		t.Errorf("got %+v", e)
	}
}

func TestSendContextCanceled(t *testing.T) {
	t.Parallel()
	srv := mailertest.NewServer(t)
	srv.SetDelay(10 * time.Second)
	sender := mailer.NewSender(srv.URL, nil)

	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	start := time.Now()
	_, err := sender.Send(ctx, batch(1))
	if time.Since(start) > 5*time.Second {
		t.Errorf("Send ignored the cancellation for %s", time.Since(start))
	}
	e := asError(t, err)
	if e.Permanent || !errors.Is(err, context.Canceled) || e.Message != "sending stopped: context canceled" {
		t.Errorf("got %+v", e)
	}

}

// countingTransport counts the requests handed to it before passing them on.
type countingTransport struct{ calls atomic.Int64 }

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.calls.Add(1)
	return http.DefaultTransport.RoundTrip(r)
}

// A send on a context that is already canceled stops before building or
// handing a request to the HTTP client. The count is taken at the transport:
// net/http itself refuses a canceled request before writing it, so counting
// what reaches the server could not tell a sender that checks from one that
// does not.
func TestSendAlreadyCanceledSendsNothing(t *testing.T) {
	t.Parallel()
	srv := mailertest.NewServer(t)
	transport := &countingTransport{}
	sender := mailer.NewSender(srv.URL, &http.Client{Transport: transport})

	// The transport does count requests, so a zero below means something.
	if _, err := sender.Send(context.Background(), batch(1)); err != nil {
		t.Fatal(err)
	}
	if got := transport.calls.Load(); got != 1 {
		t.Fatalf("transport saw %d requests for one send, want 1", got)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := sender.Send(ctx, batch(1))
	e := asError(t, err)
	if e.Permanent || !errors.Is(err, context.Canceled) || e.Message != "sending stopped: context canceled" {
		t.Errorf("got %+v", e)
	}
	if got := transport.calls.Load(); got != 1 {
		t.Errorf("a canceled send reached the HTTP transport (%d requests, want 1)", got)
	}
	if got := srv.RequestCount(); got != 1 {
		t.Errorf("server saw %d requests, want 1", got)
	}
}

func TestSendBatchSize(t *testing.T) {
	t.Parallel()
	srv := mailertest.NewServer(t)
	sender := mailer.NewSender(srv.URL, nil)
	for _, n := range []int{0, mailer.MaxBatch + 1} {
		_, err := sender.Send(context.Background(), batch(n))
		if e := asError(t, err); !e.Permanent || e.Status != 0 {
			t.Errorf("%d recipients: %+v", n, e)
		}
	}
	if len(srv.Requests()) != 0 {
		t.Error("an invalid batch reached the provider")
	}
	if _, err := sender.Send(context.Background(), batch(mailer.MaxBatch)); err != nil {
		t.Fatalf("a full batch: %v", err)
	}
	if srv.RecipientCount() != mailer.MaxBatch {
		t.Errorf("delivered %d", srv.RecipientCount())
	}
}

func TestSendConcurrent(t *testing.T) {
	t.Parallel()
	srv := mailertest.NewServer(t)
	sender := mailer.NewSender(srv.URL, nil)
	srv.FailNext(500, "", 3)
	var mu sync.Mutex
	ids := map[string]bool{}
	failed := 0
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 5 {
				id, err := sender.Send(context.Background(), batch(10))
				mu.Lock()
				if err != nil {
					failed++
				} else {
					ids[id] = true
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if failed != 3 || len(ids) != 37 || srv.RecipientCount() != 370 || len(srv.Recipients()) != 370 {
		t.Errorf("failed %d, distinct ids %d, delivered %d", failed, len(ids), srv.RecipientCount())
	}
}

// BenchmarkSend1000 sends full batches of 1,000 recipients to the fake
// provider: client encoding, HTTP and the fake's parsing together.
func BenchmarkSend1000(b *testing.B) {
	srv := mailertest.NewServer(b)
	sender := mailer.NewSender(srv.URL, nil)
	bt := batch(mailer.MaxBatch)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := sender.Send(context.Background(), bt); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*mailer.MaxBatch)/b.Elapsed().Seconds(), "emails/s")
}

// Header-borne values never carry a line break to the provider, whatever
// their source: control characters and line separators fold to one space.
func TestSendFoldsLineBreaksInHeaders(t *testing.T) {
	t.Parallel()
	srv := mailertest.NewServer(t)
	b := batch(1)
	b.FromName = "Acme\r\nBcc: victim@example.com"
	b.ReplyTo = "help@acme.example\nBcc: x@example.com"
	p := &b.Personalizations[0]
	p.ToName = "\r\nAnn \u2028 Lee\x00\t \u0085"
	p.Subject = "Hi\rthere\n\nyou"
	p.Headers["List-Unsubscribe"] = "<https://u.example/>\r\nX-Evil: 1"
	p.Substitutions["&cbm0;"] = "line\nbreak" // body content: left alone
	if _, err := mailer.NewSender(srv.URL, nil).Send(context.Background(), b); err != nil {
		t.Fatal(err)
	}
	req := srv.Requests()[0]
	got := req.Personalizations[0]
	for name, c := range map[string]struct{ got, want string }{
		"from name":    {req.From.Name, "Acme Bcc: victim@example.com"},
		"reply-to":     {req.ReplyTo.Email, "help@acme.example Bcc: x@example.com"},
		"to name":      {got.To[0].Name, "Ann Lee"},
		"subject":      {got.Subject, "Hi there you"},
		"header":       {got.Headers["List-Unsubscribe"], "<https://u.example/> X-Evil: 1"},
		"substitution": {got.Substitutions["&cbm0;"], "line\nbreak"},
		"to":           {got.To[0].Email, "r0@example.com"},
	} {
		if c.got != c.want {
			t.Errorf("%s = %q, want %q", name, c.got, c.want)
		}
	}
}
