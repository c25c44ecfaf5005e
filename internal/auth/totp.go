package auth

import (
	"bytes"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base32"
	"encoding/base64"
	"image/png"
	"strings"
	"time"

	"github.com/pquerna/otp"
	"github.com/pquerna/otp/totp"

	"github.com/contactbook/contactbook/internal/apperr"
)

// TOTP parameters (RFC 6238 as authenticator apps expect them): SHA-1, six
// digits, 30-second steps, one step of clock drift accepted either way.
const (
	totpPeriod = 30
	totpSkew   = 1
)

var totpOpts = totp.ValidateOpts{Period: totpPeriod, Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1}

// TOTPKey is a new TOTP secret with what an authenticator app needs to
// add it.
type TOTPKey struct {
	Secret string // base32, unpadded
	URL    string // otpauth://totp/...
	// QRCode is the URL as a QR code, a PNG data URL: rendered here so
	// the secret never goes to an outside service.
	QRCode string
}

// NewTOTPKey makes a 160-bit secret for account (an email) at issuer.
func NewTOTPKey(issuer, account string) (TOTPKey, error) {
	key, err := totp.Generate(totp.GenerateOpts{
		Issuer: issuer, AccountName: account, Period: totpPeriod, SecretSize: 20,
		Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1, Rand: rand.Reader,
	})
	if err != nil {
		return TOTPKey{}, apperr.Wrap(err, apperr.Internal, "generate TOTP secret")
	}
	img, err := key.Image(240, 240)
	if err != nil {
		return TOTPKey{}, apperr.Wrap(err, apperr.Internal, "render TOTP QR code")
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		return TOTPKey{}, apperr.Wrap(err, apperr.Internal, "encode TOTP QR code")
	}
	return TOTPKey{
		Secret: key.Secret(), URL: key.URL(),
		QRCode: "data:image/png;base64," + base64.StdEncoding.EncodeToString(buf.Bytes()),
	}, nil
}

// MatchTOTP checks code against secret at now and returns the time step
// it belongs to (0: no match). The caller accepts a step only once and
// only after the last step accepted, so a code cannot be replayed.
func MatchTOTP(secret, code string, now time.Time) int64 {
	code = strings.TrimSpace(code)
	if len(code) != 6 {
		return 0
	}
	step := now.Unix() / totpPeriod
	for off := int64(-totpSkew); off <= totpSkew; off++ {
		at := time.Unix((step+off)*totpPeriod, 0)
		want, err := totp.GenerateCodeCustom(secret, at, totpOpts)
		if err != nil {
			return 0
		}
		if subtle.ConstantTimeCompare([]byte(want), []byte(code)) == 1 {
			return step + off
		}
	}
	return 0
}

// TOTPCode is the code of secret at t (tests and tools).
func TOTPCode(secret string, t time.Time) (string, error) {
	return totp.GenerateCodeCustom(secret, t, totpOpts)
}

// NewRecoveryCodes returns n recovery codes (80 random bits each, written
// as four groups of four base32 letters) and their hashes to store.
func NewRecoveryCodes(n int) ([]string, [][]byte, error) {
	codes := make([]string, n)
	hashes := make([][]byte, n)
	for i := range codes {
		b := make([]byte, 10)
		if _, err := rand.Read(b); err != nil {
			return nil, nil, apperr.Wrap(err, apperr.Internal, "generate recovery code")
		}
		s := strings.ToLower(base32.StdEncoding.EncodeToString(b))
		codes[i] = s[0:4] + "-" + s[4:8] + "-" + s[8:12] + "-" + s[12:16]
		hashes[i] = HashRecoveryCode(codes[i])
	}
	return codes, hashes, nil
}

// HashRecoveryCode is the stored form of a recovery code; case, spaces
// and dashes do not matter, as a person may type them either way.
func HashRecoveryCode(code string) []byte {
	norm := strings.Map(func(r rune) rune {
		if r == '-' || r == ' ' {
			return -1
		}
		return r
	}, strings.ToLower(strings.TrimSpace(code)))
	return HashLinkToken("recovery:" + norm)
}
