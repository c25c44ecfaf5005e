// Package delivery closes the loop with the email provider: it takes
// SendGrid's signed Event Webhook batches, applies them to the campaign
// emails they name (delivery state, engagement, suppressions) and reports
// what became of a book's emails (deliverability) and of a contact's
// (activity).
package delivery

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/sendgrid/sendgrid-go/helpers/eventwebhook"
)

// The headers of a signed Event Webhook request.
const (
	SignatureHeader = eventwebhook.VerificationHTTPHeader
	TimestampHeader = eventwebhook.TimestampHTTPHeader
)

// How far a batch's timestamp may be from the clock: older batches are
// refused as replays of a captured request, and SendGrid signs each
// delivery attempt anew, so its retries are not stale.
const (
	maxAge    = 10 * time.Minute
	maxFuture = 5 * time.Minute
)

// ErrPublicKey says a key is not a base64 P-256 public key.
var ErrPublicKey = errors.New("not a base64 P-256 public key")

// ParsePublicKey reads the verification key as SendGrid shows it: base64
// of the DER (PKIX) encoding of an ECDSA P-256 public key. The helper of
// sendgrid-go panics on a key of another type, so the standard library
// parses it here.
func ParsePublicKey(b64 string) (*ecdsa.PublicKey, error) {
	der, err := base64.StdEncoding.DecodeString(strings.TrimSpace(b64))
	if err != nil {
		return nil, ErrPublicKey
	}
	k, err := x509.ParsePKIXPublicKey(der)
	if err != nil {
		return nil, ErrPublicKey
	}
	ek, ok := k.(*ecdsa.PublicKey)
	if !ok || ek.Curve != elliptic.P256() {
		return nil, ErrPublicKey
	}
	return ek, nil
}

// verify checks a batch's signature (base64 DER ECDSA over SHA-256 of the
// timestamp followed by the raw body, checked by sendgrid-go's helper)
// and that its timestamp (Unix seconds) is recent.
func verify(key *ecdsa.PublicKey, signature, timestamp string, body []byte, now time.Time) bool {
	if signature == "" || timestamp == "" {
		return false
	}
	sec, err := strconv.ParseInt(timestamp, 10, 64)
	if err != nil {
		return false
	}
	at := time.Unix(sec, 0)
	if now.Sub(at) > maxAge || at.Sub(now) > maxFuture {
		return false
	}
	ok, err := eventwebhook.VerifySignature(key, body, signature, timestamp)
	return err == nil && ok
}
