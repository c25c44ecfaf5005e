package mailertest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/google/uuid"
)

// SESMessage is one SendEmail the fake accepted.
type SESMessage struct {
	MessageID        string
	From             string
	To               []string
	Raw              []byte // the raw MIME content
	Tags             map[string]string
	ConfigurationSet string
}

// SESServer is a fake Amazon SES v2 API (SendEmail, GetAccount) speaking
// its REST-JSON protocol. Every request must carry a valid AWS
// Signature Version 4 for service "ses", one of the server's access
// keys and its region: the fake signs the request again with the
// AWS SDK's own signer and compares.
type SESServer struct {
	URL    string
	Region string

	mu       sync.Mutex
	keys     map[string]string // access key id -> secret
	messages []SESMessage
	reject   map[string]string // recipient -> MessageRejected text
	fails    []sesFailure
	unsigned int // requests refused for their signature
	paused   bool
}

type sesFailure struct {
	status int
	code   string
	msg    string
}

// NewSESServer starts a fake SES in region that accepts accessKeyID with
// secret.
func NewSESServer(t TB, region, accessKeyID, secret string) *SESServer {
	t.Helper()
	s := &SESServer{Region: region, keys: map[string]string{accessKeyID: secret}, reject: map[string]string{}}
	srv := httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(srv.Close)
	s.URL = srv.URL
	return s
}

// Reject answers MessageRejected for mail to the address.
func (s *SESServer) Reject(addr, msg string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reject[strings.ToLower(addr)] = msg
}

// Throttle answers the next n SendEmail calls with 429 TooManyRequestsException.
func (s *SESServer) Throttle(n int) {
	s.FailNext(http.StatusTooManyRequests, "TooManyRequestsException", "Maximum sending rate exceeded.", n)
}

// FailNext answers the next n SendEmail calls with status and error code.
func (s *SESServer) FailNext(status int, code, msg string, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for range n {
		s.fails = append(s.fails, sesFailure{status, code, msg})
	}
}

// Pause makes GetAccount answer SendingEnabled false.
func (s *SESServer) Pause() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.paused = true
}

// Messages are the accepted emails, in order.
func (s *SESServer) Messages() []SESMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]SESMessage(nil), s.messages...)
}

// Unsigned is how many requests were refused for their signature.
func (s *SESServer) Unsigned() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.unsigned
}

func sesError(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Amzn-ErrorType", code)
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"message": msg})
}

func (s *SESServer) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		sesError(w, 400, "BadRequestException", "unreadable body")
		return
	}
	if msg := s.checkSignature(r, body); msg != "" {
		s.mu.Lock()
		s.unsigned++
		s.mu.Unlock()
		sesError(w, http.StatusForbidden, "SignatureDoesNotMatch", msg)
		return
	}
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/v2/email/account":
		s.mu.Lock()
		paused := s.paused
		s.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"SendingEnabled": !paused, "ProductionAccessEnabled": true, "EnforcementStatus": "HEALTHY",
			"SendQuota": map[string]any{"Max24HourSend": 50000, "MaxSendRate": 14, "SentLast24Hours": 0},
		})
	case r.Method == http.MethodPost && r.URL.Path == "/v2/email/outbound-emails":
		s.send(w, body)
	default:
		sesError(w, http.StatusNotFound, "NotFoundException", "no such operation")
	}
}

func (s *SESServer) send(w http.ResponseWriter, body []byte) {
	var in struct {
		FromEmailAddress string
		Destination      struct{ ToAddresses []string }
		Content          struct {
			Raw *struct{ Data []byte }
		}
		EmailTags            []struct{ Name, Value string }
		ConfigurationSetName string
	}
	if err := json.Unmarshal(body, &in); err != nil || in.Content.Raw == nil || len(in.Destination.ToAddresses) == 0 {
		sesError(w, 400, "BadRequestException", "SendEmail needs raw content and a destination")
		return
	}
	s.mu.Lock()
	if len(s.fails) > 0 {
		f := s.fails[0]
		s.fails = s.fails[1:]
		s.mu.Unlock()
		sesError(w, f.status, f.code, f.msg)
		return
	}
	for _, to := range in.Destination.ToAddresses {
		if msg, ok := s.reject[strings.ToLower(to)]; ok {
			s.mu.Unlock()
			sesError(w, 400, "MessageRejected", msg)
			return
		}
	}
	m := SESMessage{
		MessageID: "0100019" + strings.ReplaceAll(uuid.NewString(), "-", "")[:9] + "-" + uuid.NewString() + "-000000",
		From:      in.FromEmailAddress, To: in.Destination.ToAddresses, Raw: in.Content.Raw.Data,
		Tags: map[string]string{}, ConfigurationSet: in.ConfigurationSetName,
	}
	for _, t := range in.EmailTags {
		m.Tags[t.Name] = t.Value
	}
	s.messages = append(s.messages, m)
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]string{"MessageId": m.MessageID})
}

// checkSignature re-signs the request with the secret of its access key
// and the headers it says it signed; "" when the signatures match.
func (s *SESServer) checkSignature(r *http.Request, body []byte) string {
	auth := r.Header.Get("Authorization")
	if !strings.HasPrefix(auth, "AWS4-HMAC-SHA256 ") {
		return "missing AWS4-HMAC-SHA256 authorization"
	}
	fields := map[string]string{}
	for _, part := range strings.Split(strings.TrimPrefix(auth, "AWS4-HMAC-SHA256 "), ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
		fields[k] = v
	}
	scope := strings.Split(fields["Credential"], "/")
	if len(scope) != 5 || scope[3] != "ses" || scope[4] != "aws4_request" {
		return "credential scope is not ses"
	}
	if scope[2] != s.Region {
		return fmt.Sprintf("credential scope names region %s, not %s", scope[2], s.Region)
	}
	s.mu.Lock()
	secret, ok := s.keys[scope[0]]
	s.mu.Unlock()
	if !ok {
		return "The security token included in the request is invalid."
	}
	at, err := time.Parse("20060102T150405Z", r.Header.Get("X-Amz-Date"))
	if err != nil {
		return "missing X-Amz-Date"
	}
	sum := sha256.Sum256(body)
	payload := hex.EncodeToString(sum[:])
	if h := r.Header.Get("X-Amz-Content-Sha256"); h != "" && h != payload {
		return "payload hash does not match"
	}
	again, _ := http.NewRequest(r.Method, "http://"+r.Host+r.URL.RequestURI(), bytes.NewReader(body))
	again.ContentLength = r.ContentLength
	for _, h := range strings.Split(fields["SignedHeaders"], ";") {
		if h == "host" || h == "content-length" {
			continue
		}
		for _, v := range r.Header.Values(h) {
			again.Header.Add(h, v)
		}
	}
	creds := aws.Credentials{AccessKeyID: scope[0], SecretAccessKey: secret}
	if err := v4.NewSigner().SignHTTP(context.Background(), creds, again, payload, "ses", scope[2], at); err != nil {
		return "cannot sign: " + err.Error()
	}
	want := ""
	for _, part := range strings.Split(strings.TrimPrefix(again.Header.Get("Authorization"), "AWS4-HMAC-SHA256 "), ",") {
		if k, v, _ := strings.Cut(strings.TrimSpace(part), "="); k == "Signature" {
			want = v
		}
	}
	if want == "" || want != fields["Signature"] {
		return "The request signature we calculated does not match the signature you provided."
	}
	return ""
}
