package mailer

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The request on the wire, byte for byte as SendGrid documents it, without
// going through the fake's parser.
func TestWireFormat(t *testing.T) {
	t.Parallel()
	var got struct {
		method, path, auth, contentType string
		body                            map[string]any
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		data, _ := io.ReadAll(r.Body)
		got.method, got.path = r.Method, r.URL.Path
		got.auth, got.contentType = r.Header.Get("Authorization"), r.Header.Get("Content-Type")
		if err := json.Unmarshal(data, &got.body); err != nil {
			t.Errorf("body is not JSON: %v", err)
		}
		w.Header().Set("X-Message-Id", "msg-1")
		w.WriteHeader(http.StatusAccepted)
	}))
	defer srv.Close()

	id, err := NewSender(srv.URL, srv.Client()).Send(context.Background(), Batch{
		APIKey: "SG.k", FromEmail: "a@x.example", FromName: "A", ReplyTo: "r@x.example", HTML: "<p>-x-</p>",
		Personalizations: []Personalization{{
			To: "b@y.example", ToName: "B", Subject: "S",
			Substitutions: map[string]string{"-x-": "v"},
			Headers:       map[string]string{"List-Unsubscribe-Post": "List-Unsubscribe=One-Click"},
			CustomArgs:    map[string]string{"step_id": "1"},
		}},
	})
	if err != nil || id != "msg-1" {
		t.Fatalf("id %q err %v", id, err)
	}
	if got.method != "POST" || got.path != "/v3/mail/send" || got.auth != "Bearer SG.k" || got.contentType != "application/json" {
		t.Errorf("request line/headers: %+v", got)
	}
	body, _ := json.Marshal(got.body)
	want := `{"content":[{"type":"text/html","value":"\u003cp\u003e-x-\u003c/p\u003e"}],` +
		`"from":{"email":"a@x.example","name":"A"},` +
		`"personalizations":[{"custom_args":{"step_id":"1"},"headers":{"List-Unsubscribe-Post":"List-Unsubscribe=One-Click"},` +
		`"subject":"S","substitutions":{"-x-":"v"},"to":[{"email":"b@y.example","name":"B"}]}],` +
		`"reply_to":{"email":"r@x.example"}}`
	if string(body) != want {
		t.Errorf("body\n got %s\nwant %s", body, want)
	}
}

func TestRequestTimeout(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)

	s := NewSender(srv.URL, nil).(*sendGridSender)
	s.timeout = 50 * time.Millisecond
	_, err := s.Send(context.Background(), Batch{APIKey: "k", Personalizations: []Personalization{{To: "a@b.c"}}})
	var e *Error
	if !errors.As(err, &e) || e.Permanent || e.Status != 0 || e.Message != "email provider did not answer within 50ms" {
		t.Errorf("got %#v", err)
	}
}

func TestProviderMessages(t *testing.T) {
	t.Parallel()
	cases := []struct{ body, want string }{
		{`{"errors":[{"message":"a","field":null},{"message":"b","field":"from.email"},{"message":"a"}]}`, "a; b (from.email)"},
		{`{"errors":[]}`, ""},
		{`not json`, ""},
		{`{"errors":[{"message":"  "}]}`, ""},
	}
	for _, c := range cases {
		if got := providerMessages(c.body); got != c.want {
			t.Errorf("providerMessages(%s) = %q, want %q", c.body, got, c.want)
		}
	}
	var many strings.Builder
	many.WriteString(`{"errors":[`)
	for i := range 500 {
		if i > 0 {
			many.WriteString(",")
		}
		many.WriteString(`{"message":"Does not contain a valid address.","field":"personalizations.` + strconv.Itoa(i) + `é.to.0.email"}`)
	}
	many.WriteString(`]}`)
	got := providerMessages(many.String())
	if len(got) > maxMessageLen+len("…") || !strings.HasSuffix(got, "…") {
		t.Errorf("long message not capped: %d bytes", len(got))
	}
}
