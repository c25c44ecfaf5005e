package mailertest

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha1" //nolint:gosec // SNS SignatureVersion 1 is SHA1withRSA
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
)

// SNS is a stand-in for Amazon SNS's HTTPS deliveries: it signs messages
// as SNS does (SignatureVersion 1, SHA1withRSA, or 2, SHA256withRSA, over
// the canonical string Amazon documents) with a certificate it serves
// over TLS at SigningCertURL, and answers the SubscribeURL of the
// subscription confirmations it makes, recording which were fetched.
type SNS struct {
	// Host is host:port of the TLS server (what SNS_CERT_HOSTS lists).
	Host     string
	TopicARN string
	// TLS is the server's certificate (trust TLS.Roots, or its CAPEM).
	TLS *Cert

	server  *httptest.Server
	key     *rsa.PrivateKey
	certPEM []byte

	mu        sync.Mutex
	confirmed []string // tokens whose SubscribeURL was fetched
}

// NewSNS starts the certificate and subscription server.
func NewSNS(t TB) *SNS {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(7), Subject: pkix.Name{CommonName: "sns.amazonaws.com"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	s := &SNS{TopicARN: "arn:aws:sns:us-east-1:123456789012:ses-feedback", key: key, TLS: NewCert(t),
		certPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /SimpleNotificationService-test.pem", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/x-pem-file")
		_, _ = w.Write(s.certPEM)
	})
	mux.HandleFunc("GET /confirm", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("Action") != "ConfirmSubscription" {
			http.Error(w, "bad action", http.StatusBadRequest)
			return
		}
		s.mu.Lock()
		s.confirmed = append(s.confirmed, r.URL.Query().Get("Token"))
		s.mu.Unlock()
		_, _ = w.Write([]byte(`<ConfirmSubscriptionResponse><ConfirmSubscriptionResult><SubscriptionArn>` + s.TopicARN + `:1</SubscriptionArn></ConfirmSubscriptionResult></ConfirmSubscriptionResponse>`))
	})
	srv := httptest.NewUnstartedServer(mux)
	srv.TLS = s.TLS.ServerConfig()
	srv.StartTLS()
	t.Cleanup(srv.Close)
	s.server = srv
	s.Host = strings.TrimPrefix(srv.URL, "https://")
	return s
}

// HTTPClient trusts the server's certificate.
func (s *SNS) HTTPClient() *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.TLSClientConfig = s.TLS.ServerConfig().Clone()
	t.TLSClientConfig.Certificates = nil
	t.TLSClientConfig.RootCAs = s.TLS.Roots
	return &http.Client{Transport: t, Timeout: 10 * time.Second}
}

// Confirmed are the tokens of the subscriptions confirmed so far.
func (s *SNS) Confirmed() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.confirmed...)
}

// SNSMessage is an SNS HTTPS delivery body.
type SNSMessage struct {
	Type             string
	MessageID        string `json:"MessageId"`
	Token            string `json:",omitempty"`
	TopicArn         string
	Subject          string `json:",omitempty"`
	Message          string
	SubscribeURL     string `json:",omitempty"`
	Timestamp        string
	SignatureVersion string
	Signature        string
	SigningCertURL   string `json:"SigningCertURL"`
}

// Notification is a signed Notification carrying message (e.g. an SES
// bounce notification's JSON), with signature version 1 or 2.
func (s *SNS) Notification(message string, version int) []byte {
	m := SNSMessage{Type: "Notification", MessageID: uuid.NewString(), TopicArn: s.TopicARN, Message: message,
		Timestamp: time.Now().UTC().Format("2006-01-02T15:04:05.000Z")}
	return s.sign(m, version)
}

// SubscriptionConfirmation is a signed confirmation request whose
// SubscribeURL this server answers.
func (s *SNS) SubscriptionConfirmation(version int) []byte {
	token := strings.ReplaceAll(uuid.NewString(), "-", "")
	m := SNSMessage{Type: "SubscriptionConfirmation", MessageID: uuid.NewString(), Token: token, TopicArn: s.TopicARN,
		Message:      "You have chosen to subscribe to the topic " + s.TopicARN + ".",
		SubscribeURL: "https://" + s.Host + "/confirm?Action=ConfirmSubscription&TopicArn=" + url.QueryEscape(s.TopicARN) + "&Token=" + token,
		Timestamp:    time.Now().UTC().Format("2006-01-02T15:04:05.000Z")}
	return s.sign(m, version)
}

// Resign signs m again (after a test changed it) and encodes it.
func (s *SNS) Resign(m SNSMessage, version int) []byte { return s.sign(m, version) }

func (s *SNS) sign(m SNSMessage, version int) []byte {
	m.SigningCertURL = "https://" + s.Host + "/SimpleNotificationService-test.pem"
	var sig []byte
	var err error
	if version == 2 {
		m.SignatureVersion = "2"
		sum := sha256.Sum256([]byte(StringToSign(m)))
		sig, err = rsa.SignPKCS1v15(rand.Reader, s.key, crypto.SHA256, sum[:])
	} else {
		m.SignatureVersion = "1"
		sum := sha1.Sum([]byte(StringToSign(m))) //nolint:gosec
		sig, err = rsa.SignPKCS1v15(rand.Reader, s.key, crypto.SHA1, sum[:])
	}
	if err != nil {
		panic(err)
	}
	m.Signature = base64.StdEncoding.EncodeToString(sig)
	b, _ := json.Marshal(m)
	return b
}

// StringToSign is SNS's canonical string of a message: the names and
// values of its signed fields, each followed by a newline, in byte order.
func StringToSign(m SNSMessage) string {
	var b strings.Builder
	add := func(k, v string) { b.WriteString(k + "\n" + v + "\n") }
	add("Message", m.Message)
	add("MessageId", m.MessageID)
	if m.Type == "Notification" {
		if m.Subject != "" {
			add("Subject", m.Subject)
		}
		add("Timestamp", m.Timestamp)
		add("TopicArn", m.TopicArn)
		add("Type", m.Type)
		return b.String()
	}
	add("SubscribeURL", m.SubscribeURL)
	add("Timestamp", m.Timestamp)
	add("Token", m.Token)
	add("TopicArn", m.TopicArn)
	add("Type", m.Type)
	return b.String()
}

// SESBounce is an SES bounce notification for the message id.
func SESBounce(messageID, bounceType string, recipients ...string) string {
	rs := make([]map[string]string, len(recipients))
	for i, r := range recipients {
		rs[i] = map[string]string{"emailAddress": r, "status": "5.1.1", "diagnosticCode": "smtp; 550 5.1.1 user unknown"}
	}
	return sesNotification("Bounce", messageID, map[string]any{"bounce": map[string]any{
		"bounceType": bounceType, "bounceSubType": "General", "bouncedRecipients": rs,
		"timestamp": time.Now().UTC().Format(time.RFC3339Nano), "feedbackId": uuid.NewString(),
	}})
}

// SESComplaint is an SES complaint notification for the message id.
func SESComplaint(messageID string, recipients ...string) string {
	rs := make([]map[string]string, len(recipients))
	for i, r := range recipients {
		rs[i] = map[string]string{"emailAddress": r}
	}
	return sesNotification("Complaint", messageID, map[string]any{"complaint": map[string]any{
		"complainedRecipients": rs, "timestamp": time.Now().UTC().Format(time.RFC3339Nano), "complaintFeedbackType": "abuse",
	}})
}

// SESDelivery is an SES delivery notification for the message id.
func SESDelivery(messageID string, recipients ...string) string {
	return sesNotification("Delivery", messageID, map[string]any{"delivery": map[string]any{
		"recipients": recipients, "timestamp": time.Now().UTC().Format(time.RFC3339Nano), "smtpResponse": "250 ok",
	}})
}

// SESOpen and SESClick are SES event-publishing records.
func SESOpen(messageID string) string {
	return sesEvent("Open", messageID, map[string]any{"open": map[string]any{"timestamp": time.Now().UTC().Format(time.RFC3339Nano), "userAgent": "Mozilla/5.0"}})
}

// SESClick is a click on link.
func SESClick(messageID, link string) string {
	return sesEvent("Click", messageID, map[string]any{"click": map[string]any{"timestamp": time.Now().UTC().Format(time.RFC3339Nano), "link": link}})
}

func sesNotification(kind, messageID string, body map[string]any) string {
	body["notificationType"] = kind
	body["mail"] = map[string]any{"messageId": messageID, "timestamp": time.Now().UTC().Format(time.RFC3339Nano), "source": "news@acme.example"}
	b, _ := json.Marshal(body)
	return string(b)
}

func sesEvent(kind, messageID string, body map[string]any) string {
	body["eventType"] = kind
	body["mail"] = map[string]any{"messageId": messageID, "timestamp": time.Now().UTC().Format(time.RFC3339Nano), "source": "news@acme.example"}
	b, _ := json.Marshal(body)
	return string(b)
}
