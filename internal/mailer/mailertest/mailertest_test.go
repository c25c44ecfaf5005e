package mailertest

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func fullBatch(n int) []byte {
	type p struct {
		To            []Address         `json:"to"`
		Subject       string            `json:"subject"`
		Substitutions map[string]string `json:"substitutions"`
		Headers       map[string]string `json:"headers"`
		CustomArgs    map[string]string `json:"custom_args"`
	}
	body := struct {
		From             Address   `json:"from"`
		Content          []Content `json:"content"`
		Personalizations []p       `json:"personalizations"`
	}{From: Address{Email: "a@x.example"}, Content: []Content{{"text/html", "<p>&cbm0;</p>"}}}
	for i := range n {
		body.Personalizations = append(body.Personalizations, p{
			To:            []Address{{Email: fmt.Sprintf("r%d@example.com", i), Name: "R"}},
			Subject:       "Hello",
			Substitutions: map[string]string{"&cbm0;": "Ann", "&cbm1;": "https://u.example/?t=abcdefghijklmnop&amp;c=1"},
			Headers:       map[string]string{"List-Unsubscribe": "<https://u.example/?t=abcdefghijklmnop&c=1>", "List-Unsubscribe-Post": "List-Unsubscribe=One-Click"},
			CustomArgs:    map[string]string{"participant_id": "0b6d4f0e-8f0e-4c59-9b43-3d0f2a7f5f11", "step_id": "1f0e8f0e-8f0e-4c59-9b43-3d0f2a7f5f11"},
		})
	}
	data, _ := json.Marshal(body)
	return data
}

func BenchmarkServe1000(b *testing.B) {
	s := &Server{idPrefix: "x"}
	data := fullBatch(1000)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		r := httptest.NewRequest(http.MethodPost, "/v3/mail/send", bytes.NewReader(data))
		r.Header.Set("Authorization", "Bearer k")
		r.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		s.serve(w, r)
		if w.Code != 202 {
			b.Fatal(w.Code, w.Body.String())
		}
	}
}

func post(t *testing.T, s *Server, path string, header map[string]string, body []byte) (*http.Response, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, s.URL+path, bytes.NewReader(body))
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var doc map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&doc)
	return resp, doc
}

var jsonAuth = map[string]string{"Authorization": "Bearer SG.k", "Content-Type": "application/json"}

func firstMessage(doc map[string]any) string {
	errs, _ := doc["errors"].([]any)
	if len(errs) == 0 {
		return ""
	}
	m, _ := errs[0].(map[string]any)
	s, _ := m["message"].(string)
	return s
}

func TestServerAnswers(t *testing.T) {
	t.Parallel()
	s := NewServer(t)
	ok := fullBatch(2)

	resp, _ := post(t, s, "/v3/mail/send", jsonAuth, ok)
	if resp.StatusCode != 202 || resp.Header.Get("X-Message-Id") == "" {
		t.Errorf("valid request: %d %v", resp.StatusCode, resp.Header)
	}

	var gz bytes.Buffer
	w := gzip.NewWriter(&gz)
	_, _ = w.Write(ok)
	_ = w.Close()
	resp, _ = post(t, s, "/v3/mail/send", map[string]string{"Authorization": "Bearer SG.k", "Content-Type": "application/json", "Content-Encoding": "gzip"}, gz.Bytes())
	if resp.StatusCode != 202 {
		t.Errorf("gzip body: %d", resp.StatusCode)
	}

	cases := []struct {
		name   string
		path   string
		header map[string]string
		body   []byte
		status int
		msg    string
	}{
		{"no auth", "/v3/mail/send", map[string]string{"Content-Type": "application/json"}, ok, 401, "The provided authorization grant is invalid, expired, or revoked"},
		{"basic auth", "/v3/mail/send", map[string]string{"Authorization": "Basic eDp5", "Content-Type": "application/json"}, ok, 401, "The provided authorization grant is invalid, expired, or revoked"},
		{"form body", "/v3/mail/send", map[string]string{"Authorization": "Bearer k", "Content-Type": "text/plain"}, ok, 400, "Content-Type should be application/json."},
		{"wrong path", "/v3/mail/sendx", jsonAuth, ok, 404, "Not Found"},
		{"not json", "/v3/mail/send", jsonAuth, []byte("{"), 400, "Bad Request"},
		{"headers not an object", "/v3/mail/send", jsonAuth, []byte(`{"from":{"email":"a@b.co"},"content":[{"type":"text/html","value":"x"}],"personalizations":[{"to":[{"email":"c@d.co"}],"subject":"s","headers":"x"}]}`), 400, "Bad Request"},
		{"no from", "/v3/mail/send", jsonAuth, []byte(`{"content":[{"type":"text/html","value":"x"}],"personalizations":[{"to":[{"email":"c@d.co"}],"subject":"s"}]}`), 400, "The from object must be provided for every email send. It is an object that requires the email parameter, but may also contain a name parameter."},
		{"no content", "/v3/mail/send", jsonAuth, []byte(`{"from":{"email":"a@b.co"},"personalizations":[{"to":[{"email":"c@d.co"}],"subject":"s"}]}`), 400, "Unless a valid template_id is provided, the content parameter is required. There must be at least one defined content block. We typically suggest both text/plain and text/html blocks are included, but only one block is required."},
		{"no personalizations", "/v3/mail/send", jsonAuth, []byte(`{"from":{"email":"a@b.co"},"content":[{"type":"text/html","value":"x"}],"personalizations":[]}`), 400, "The personalizations field is required and must have at least one personalization, and no more than 1000."},
		{"too many personalizations", "/v3/mail/send", jsonAuth, fullBatch(1001), 400, "The personalizations field is required and must have at least one personalization, and no more than 1000."},
		{"no to", "/v3/mail/send", jsonAuth, []byte(`{"from":{"email":"a@b.co"},"content":[{"type":"text/html","value":"x"}],"personalizations":[{"subject":"s"}]}`), 400, "The to array is required for all personalization objects, and must have at least one email object with a valid email address."},
		{"substitutions too large", "/v3/mail/send", jsonAuth, []byte(`{"from":{"email":"a@b.co"},"content":[{"type":"text/html","value":"x"}],"personalizations":[{"to":[{"email":"c@d.co"}],"subject":"s","substitutions":{"k":"` + strings.Repeat("v", 10000) + `"}}]}`), 400, "The substitutions for a personalization may not exceed 100 substitutions or 10000 bytes in total."},
	}
	for _, c := range cases {
		resp, doc := post(t, s, c.path, c.header, c.body)
		if resp.StatusCode != c.status || firstMessage(doc) != c.msg {
			t.Errorf("%s: %d %v, want %d %q", c.name, resp.StatusCode, doc, c.status, c.msg)
		}
	}
	if got := s.RecipientCount(); got != 4 {
		t.Errorf("delivered %d, want 4", got)
	}
	reqs := s.Requests()
	if len(reqs) != 2+len(cases)-1 { // the wrong path is not a mail/send request
		t.Errorf("recorded %d requests", len(reqs))
	}
	if reqs[2].Status != 401 || reqs[2].APIKey != "" || len(reqs[2].Personalizations) != 2 {
		t.Errorf("rejected request recorded as %+v", reqs[2])
	}
	if len(s.Recipients()) != 4 {
		t.Errorf("recipients %d", len(s.Recipients()))
	}
}

func TestServerInjection(t *testing.T) {
	t.Parallel()
	s := NewServer(t)
	s.RequireAPIKey("SG.k")
	s.FailNext(500, `{"errors":[{"message":"boom"}]}`, 2)
	s.FailNext(0, "", 1)
	for i, want := range []int{500, 500} {
		resp, doc := post(t, s, "/v3/mail/send", jsonAuth, fullBatch(1))
		if resp.StatusCode != want || firstMessage(doc) != "boom" {
			t.Errorf("request %d: %d %v", i, resp.StatusCode, doc)
		}
	}
	req, _ := http.NewRequest(http.MethodPost, s.URL+"/v3/mail/send", bytes.NewReader(fullBatch(1)))
	req.Header = http.Header{"Authorization": {"Bearer SG.k"}, "Content-Type": {"application/json"}}
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
		t.Error("status 0 should drop the connection")
	}
	resp, _ := post(t, s, "/v3/mail/send", map[string]string{"Authorization": "Bearer other", "Content-Type": "application/json"}, fullBatch(1))
	if resp.StatusCode != 401 {
		t.Errorf("wrong key: %d", resp.StatusCode)
	}
	resp, _ = post(t, s, "/v3/mail/send", jsonAuth, fullBatch(3))
	if resp.StatusCode != 202 || s.RecipientCount() != 3 || len(s.Recipients()) != 3 {
		t.Errorf("after the failures: %d, delivered %d", resp.StatusCode, s.RecipientCount())
	}
	rec := s.Recipients()[2]
	if rec.Email != "r2@example.com" || rec.Headers["List-Unsubscribe-Post"] != "List-Unsubscribe=One-Click" || rec.CustomArgs["step_id"] == "" || rec.HTML() != "<p>Ann</p>" {
		t.Errorf("recipient %+v html %q", rec, rec.HTML())
	}
	s.Reset()
	if s.RequestCount() != 0 || s.RecipientCount() != 0 {
		t.Error("Reset kept requests")
	}
	resp, _ = post(t, s, "/v3/mail/send", map[string]string{"Authorization": "Bearer other", "Content-Type": "application/json"}, fullBatch(1))
	if resp.StatusCode != 202 {
		t.Errorf("Reset kept the required key: %d", resp.StatusCode)
	}
}
