package delivery

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/contactbook/contactbook/internal/apperr"
	"github.com/contactbook/contactbook/internal/mailer/mailertest"
)

func TestSNSSignatures(t *testing.T) {
	sns := mailertest.NewSNS(t)
	f := NewSESFeedback(&Service{now: time.Now}, SNSConfig{CertHosts: []string{sns.Host}, HTTP: sns.HTTPClient()})
	read := func(b []byte) snsMessage {
		var m snsMessage
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	for _, v := range []int{1, 2} {
		for _, body := range [][]byte{sns.Notification(mailertest.SESDelivery("id-1", "a@x.example"), v), sns.SubscriptionConfirmation(v)} {
			m := read(body)
			if err := f.verify(context.Background(), m); err != nil {
				t.Fatalf("version %d %s: %v", v, m.Type, err)
			}
			m.Message += " "
			if err := f.verify(context.Background(), m); !apperr.Is(err, apperr.Unauthorized) {
				t.Fatalf("version %d %s tampered: %v", v, m.Type, err)
			}
		}
	}
	m := read(sns.Notification("{}", 2))
	m.SignatureVersion = "3"
	if err := f.verify(context.Background(), m); !apperr.Is(err, apperr.Unauthorized) {
		t.Fatalf("unknown version: %v", err)
	}
}

func TestSNSCertificateHostRule(t *testing.T) {
	f := NewSESFeedback(&Service{now: time.Now}, SNSConfig{})
	for u, ok := range map[string]bool{
		"https://sns.us-east-1.amazonaws.com/SimpleNotificationService-abc.pem": true,
		"https://sns.eu-west-2.amazonaws.com/x.pem":                             true,
		"http://sns.us-east-1.amazonaws.com/x.pem":                              false,
		"https://sns.us-east-1.amazonaws.com:8443/x.pem":                        false,
		"https://sns.us-east-1.amazonaws.com.evil.example/x.pem":                false,
		"https://evil.example/sns.us-east-1.amazonaws.com/x.pem":                false,
		"https://user@sns.us-east-1.amazonaws.com/x.pem":                        false,
		"https://s3.amazonaws.com/x.pem":                                        false,
	} {
		if got := f.allowedURL(u); got != ok {
			t.Errorf("%s: %v, want %v", u, got, ok)
		}
	}
	g := NewSESFeedback(&Service{now: time.Now}, SNSConfig{CertHosts: []string{"127.0.0.1:8443", "localhost"}})
	for u, ok := range map[string]bool{
		"https://127.0.0.1:8443/c.pem":              true,
		"https://127.0.0.1:9999/c.pem":              false,
		"https://localhost/c.pem":                   true,
		"https://sns.us-east-1.amazonaws.com/x.pem": false,
	} {
		if got := g.allowedURL(u); got != ok {
			t.Errorf("hosts set, %s: %v, want %v", u, got, ok)
		}
	}
}

func TestParseDSN(t *testing.T) {
	now := time.Now()
	evs := parseDSN(mailertest.DSN("abc@acme.example", "Bob@Example.com", "5.1.1"), now)
	if len(evs) != 1 || evs[0].kind != kindBounced || evs[0].email != "bob@example.com" || evs[0].messageID != "abc@acme.example" ||
		evs[0].suppress == "" || evs[0].detail == "" {
		t.Fatalf("hard: %+v", evs)
	}
	evs = parseDSN(mailertest.DSN("abc@acme.example", "bob@example.com", "4.2.2"), now)
	if len(evs) != 1 || evs[0].kind != kindBlocked || evs[0].suppress != "" {
		t.Fatalf("soft: %+v", evs)
	}
	if evs := parseDSN([]byte("Subject: hi\r\n\r\nhello\r\n"), now); len(evs) != 0 {
		t.Fatalf("not a DSN: %+v", evs)
	}
}
