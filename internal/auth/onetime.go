package auth

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"

	"github.com/contactbook/contactbook/internal/apperr"
)

// NewLinkToken returns a single-use token for an emailed link (invitation,
// password reset) and the hash to store: 256 random bits, so a fast hash
// is safe and the lookup is one indexed equality.
func NewLinkToken() (token string, hash []byte, err error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", nil, apperr.Wrap(err, apperr.Internal, "generate token")
	}
	token = base64.RawURLEncoding.EncodeToString(b)
	return token, HashLinkToken(token), nil
}

// HashLinkToken is the stored form of a link token.
func HashLinkToken(token string) []byte {
	sum := sha256.Sum256([]byte(token))
	return sum[:]
}
