package campaigns

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"net/url"

	"github.com/google/uuid"
)

// links builds the public URLs that emails carry.
type links struct {
	base string // PUBLIC_BASE_URL without its trailing slash
}

// unsubscribePageURL is the visible link in the footer: a page that lists
// the contact's campaigns and changes nothing by itself.
func (l links) unsubscribePageURL(token string) string {
	return l.base + "/api/unsubscribe?token=" + url.QueryEscape(token)
}

// oneClickURL is the RFC 8058 List-Unsubscribe target.
func (l links) oneClickURL(token string, campaignID uuid.UUID) string {
	return l.base + "/api/unsubscribe/confirm?token=" + url.QueryEscape(token) + "&campaign_id=" + campaignID.String()
}

// eventWebhookURL is where the provider posts the book's event batches.
func (l links) eventWebhookURL(bookID uuid.UUID) string {
	return l.base + "/api/mailer/events/" + bookID.String()
}

// sesNotificationURL is where Amazon SNS posts the book's SES feedback.
func (l links) sesNotificationURL(bookID uuid.UUID) string {
	return l.base + "/api/mailer/ses/" + bookID.String()
}

// Unsubscribe tokens are the step id, the participant id (which name the
// completion row of the email) and a 256-bit random secret, URL-safe
// base64 encoded; the database keeps only the SHA-256 of the secret.
const (
	secretSize = 32
	tokenSize  = 16 + 16 + secretSize
)

// newSecrets makes n token secrets and their SHA-256 hashes.
func newSecrets(n int) (secrets, hashes [][]byte) {
	buf := make([]byte, secretSize*n)
	if _, err := rand.Read(buf); err != nil {
		panic(fmt.Sprintf("crypto/rand failed: %v", err)) // the platform is broken; never continue without randomness
	}
	secrets, hashes = make([][]byte, n), make([][]byte, n)
	for i := range n {
		secrets[i] = buf[i*secretSize : (i+1)*secretSize]
		sum := sha256.Sum256(secrets[i])
		hashes[i] = sum[:]
	}
	return secrets, hashes
}

// makeToken builds the token of one email.
func makeToken(stepID, participantID uuid.UUID, secret []byte) string {
	var raw [tokenSize]byte
	copy(raw[:16], stepID[:])
	copy(raw[16:32], participantID[:])
	copy(raw[32:], secret)
	return base64.RawURLEncoding.EncodeToString(raw[:])
}

// parseToken splits a token into the key of its completion row and the
// SHA-256 of its secret; ok is false for anything that is not a token.
func parseToken(token string) (stepID, participantID uuid.UUID, secretHash []byte, ok bool) {
	raw, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil || len(raw) != tokenSize {
		return uuid.Nil, uuid.Nil, nil, false
	}
	copy(stepID[:], raw[:16])
	copy(participantID[:], raw[16:32])
	sum := sha256.Sum256(raw[32:])
	return stepID, participantID, sum[:], true
}

// confirmURL is where the unsubscribe page's forms post.
func (l links) confirmURL() string { return l.base + "/api/unsubscribe/confirm" }
