package delivery

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"testing"
	"time"
)

// SendGrid's published test vector (sendgrid-go, helpers/eventwebhook):
// the key, signature and timestamp of a one-event dropped batch, whose
// body ends with CR LF.
const (
	vectorKey       = "MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE83T4O/n84iotIvIW4mdBgQ/7dAfSmpqIM8kF9mN1flpVKS3GRqe62gw+2fNNRaINXvVpiglSI8eNEc6wEA3F+g=="
	vectorSignature = "MEUCIGHQVtGj+Y3LkG9fLcxf3qfI10QysgDWmMOVmxG0u6ZUAiEAyBiXDWzM+uOe5W0JuG+luQAbPIqHh89M15TluLtEZtM="
	vectorTimestamp = "1600112502"
	vectorBody      = `[{"email":"hello@world.com","event":"dropped","reason":"Bounced Address","sg_event_id":"ZHJvcC0xMDk5NDkxOS1MUnpYbF9OSFN0T0doUTRrb2ZTbV9BLTA","sg_message_id":"LRzXl_NHStOGhQ4kofSm_A.filterdrecv-p3mdw1-756b745b58-kmzbl-18-5F5FC76C-9.0","smtp-id":"<LRzXl_NHStOGhQ4kofSm_A@ismtpd0039p1iad1.sendgrid.net>","timestamp":1600112492}]` + "\r\n"
)

func TestVerifyAcceptsSendGridsTestVector(t *testing.T) {
	key, err := ParsePublicKey(vectorKey)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Unix(1600112502, 0).Add(time.Minute)
	if !verify(key, vectorSignature, vectorTimestamp, []byte(vectorBody), at) {
		t.Fatal("the published vector does not verify")
	}
	for name, tc := range map[string]struct {
		sig, ts, body string
		at            time.Time
	}{
		"body changed":      {vectorSignature, vectorTimestamp, vectorBody[:len(vectorBody)-2], at},
		"timestamp changed": {vectorSignature, "1600112503", vectorBody, at},
		"no signature":      {"", vectorTimestamp, vectorBody, at},
		"not base64":        {"%%%", vectorTimestamp, vectorBody, at},
		"stale":             {vectorSignature, vectorTimestamp, vectorBody, time.Unix(1600112502, 0).Add(11 * time.Minute)},
		"from the future":   {vectorSignature, vectorTimestamp, vectorBody, time.Unix(1600112502, 0).Add(-6 * time.Minute)},
	} {
		if verify(key, tc.sig, tc.ts, []byte(tc.body), tc.at) {
			t.Errorf("%s: verified", name)
		}
	}
}

func TestParsePublicKeyRefusesOtherKeys(t *testing.T) {
	rsaKey, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		t.Fatal(err)
	}
	p384, err := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	for name, k := range map[string]any{"rsa": &rsaKey.PublicKey, "p384": &p384.PublicKey} {
		der, err := x509.MarshalPKIXPublicKey(k)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ParsePublicKey(base64.StdEncoding.EncodeToString(der)); err == nil {
			t.Errorf("%s key accepted", name)
		}
	}
	for _, s := range []string{"", "not base64!", base64.StdEncoding.EncodeToString([]byte("junk"))} {
		if _, err := ParsePublicKey(s); err == nil {
			t.Errorf("%q accepted", s)
		}
	}
}

// A batch signed with a generated key the way SendGrid signs verifies.
func TestVerifyGeneratedKey(t *testing.T) {
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, _ := x509.MarshalPKIXPublicKey(&priv.PublicKey)
	key, err := ParsePublicKey(base64.StdEncoding.EncodeToString(der))
	if err != nil {
		t.Fatal(err)
	}
	body, ts := []byte(`[{"event":"open"}]`), "1700000000"
	sum := sha256.Sum256(append([]byte(ts), body...))
	sig, err := ecdsa.SignASN1(rand.Reader, priv, sum[:])
	if err != nil {
		t.Fatal(err)
	}
	if !verify(key, base64.StdEncoding.EncodeToString(sig), ts, body, time.Unix(1700000000, 0)) {
		t.Fatal("a correctly signed batch does not verify")
	}
}

func TestClassify(t *testing.T) {
	ids := `"campaign_id":"6c8e0a2b-4d6f-4a8c-9e1b-3d5f7a9c1e3b","step_id":"9d2a4c6e-8f0b-4d1a-b3c5-e7f9a1b2c3d4","participant_id":"4b6d8f0a-2c4e-4a6c-8e0a-2c4e6a8c0e2a"`
	body := `[{"event":"bounce","type":"blocked",` + ids + `,"sg_event_id":"a"},
		{"event":"bounce","type":"bounce","email":"X@Example.com",` + ids + `,"sg_event_id":"b"},
		{"event":"open","sg_machine_open":true,` + ids + `,"sg_event_id":"c"},
		{"event":"dropped","reason":"Bounced Address","email":"x@example.com",` + ids + `,"sg_event_id":"d"},
		{"event":"dropped","reason":"Invalid SMTPAPI header","email":"x@example.com",` + ids + `,"sg_event_id":"e"},
		{"event":"delivered","sg_event_id":"f"},
		{"event":"delivered",` + ids + `,"sg_event_id":"b"},
		{"event":"group_resubscribe",` + ids + `,"sg_event_id":"g"}]`
	p, err := parseBatch([]byte(body), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if p.received != 8 || p.duplicates != 1 || p.ignored != 3 || len(p.events) != 4 {
		t.Fatalf("received %d, duplicates %d, ignored %d, events %d", p.received, p.duplicates, p.ignored, len(p.events))
	}
	want := []struct{ kind, suppress, email string }{
		{kindBlocked, "", ""}, {kindBounced, "bounce", "x@example.com"}, {kindDropped, "dropped", "x@example.com"}, {kindDropped, "", "x@example.com"},
	}
	for i, w := range want {
		if e := p.events[i]; e.kind != w.kind || string(e.suppress) != w.suppress || e.email != w.email {
			t.Errorf("event %d: %+v, want %+v", i, e, w)
		}
	}
	for _, bad := range []string{`{}`, `[1]`, `["x"]`, `not json`} {
		if _, err := parseBatch([]byte(bad), time.Now()); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}
