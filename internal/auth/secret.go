package auth

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"strings"

	"golang.org/x/crypto/bcrypt"

	"github.com/contactbook/contactbook/internal/apperr"
)

// KeyPrefix marks contactbook API keys, so leaked keys are easy to spot.
const KeyPrefix = "cbk_"

// NewAPIKey returns a fresh key (32 random bytes), the prefix shown in
// listings, and the hash that is stored. The key itself is never stored.
func NewAPIKey() (key, visible string, hash []byte, err error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", "", nil, apperr.Wrap(err, apperr.Internal, "generate key")
	}
	key = KeyPrefix + base64.RawURLEncoding.EncodeToString(b)
	return key, key[:len(KeyPrefix)+8], HashAPIKey(key), nil
}

// HashAPIKey hashes a key for storage and lookup. Keys carry 256 bits of
// entropy, so a fast hash is safe here and keeps authentication cheap.
func HashAPIKey(key string) []byte {
	sum := sha256.Sum256([]byte(key))
	return sum[:]
}

// LooksLikeAPIKey tells keys from JWTs without a database round trip.
func LooksLikeAPIKey(s string) bool { return strings.HasPrefix(s, KeyPrefix) }

// HashPassword hashes a password with bcrypt at cost (bcrypt.DefaultCost
// in production; tests lower it, since bcrypt dominates their run time).
func HashPassword(password string, cost int) (string, error) {
	h, err := bcrypt.GenerateFromPassword([]byte(password), cost)
	if err != nil {
		return "", apperr.Wrap(err, apperr.Internal, "hash password")
	}
	return string(h), nil
}

// dummyHash is compared against when the email is unknown, so a login
// takes as long whether or not the account exists.
var dummyHash = []byte("$2a$10$7EqJtq98hPqEX7fNZaFWoOhi5BWX4Z3KKKzJCBU1X3Lk6h/ZPVU5W")

// CheckPassword reports whether password matches hash; an empty hash
// (unknown account) still costs one bcrypt comparison.
func CheckPassword(hash, password string) bool {
	if hash == "" {
		_ = bcrypt.CompareHashAndPassword(dummyHash, []byte(password))
		return false
	}
	return bcrypt.CompareHashAndPassword([]byte(hash), []byte(password)) == nil
}
