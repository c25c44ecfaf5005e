package auth

import (
	"crypto/hmac"
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

// Passwords are hashed with bcrypt over a pre-hash, so that every
// password the rules allow (up to 72 characters, up to 288 bytes of UTF-8)
// counts in full: bcrypt itself reads at most 72 bytes and refuses longer
// input. The pre-hash is HMAC-SHA256 under a fixed, public key, in
// base64 (44 bytes, never a NUL byte, which bcrypt would stop at). The key
// only keeps the stored value from being a plain SHA-256 of the password,
// which could be matched against other sites' unsalted SHA-256 dumps.
//
// Stored hashes carry their scheme: prehashPrefix + the bcrypt hash. A
// hash without the prefix is plain bcrypt of the password (the earlier
// format); it keeps verifying.
const prehashPrefix = "$cb-hs256$"

var prehashKey = []byte("contactbook password pre-hash v1")

func prehash(password string) []byte {
	mac := hmac.New(sha256.New, prehashKey)
	mac.Write([]byte(password))
	sum := mac.Sum(nil)
	out := make([]byte, base64.StdEncoding.EncodedLen(len(sum)))
	base64.StdEncoding.Encode(out, sum)
	return out
}

// HashPassword hashes a password for storage, with bcrypt at cost
// (bcrypt.DefaultCost in production; tests lower it, since bcrypt
// dominates their run time).
func HashPassword(password string, cost int) (string, error) {
	h, err := bcrypt.GenerateFromPassword(prehash(password), cost)
	if err != nil {
		return "", apperr.Wrap(err, apperr.Internal, "hash password")
	}
	return prehashPrefix + string(h), nil
}

// UnknownAccountHash returns a hash, at the cost new passwords are hashed
// with, of a random password nobody knows. A login for an unknown email
// compares against it, so that it takes as long as one for an account
// that exists: the answer's timing does not tell whether it does. (A
// fixed hash at another cost would: cost 12 takes four times cost 10.)
// A cost outside bcrypt's range is taken as bcrypt's default.
func UnknownAccountHash(cost int) string {
	if cost < bcrypt.MinCost || cost > bcrypt.MaxCost {
		cost = bcrypt.DefaultCost
	}
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand.Read does not fail (Go 1.24+)
	h, _ := HashPassword(base64.RawURLEncoding.EncodeToString(b), cost)
	return h
}

// CheckPassword reports whether password matches a stored hash. An empty
// hash never matches, and costs nothing: a caller that must not reveal
// whether an account exists compares against UnknownAccountHash instead.
func CheckPassword(hash, password string) bool {
	if hash == "" {
		return false
	}
	var err error
	if rest, ok := strings.CutPrefix(hash, prehashPrefix); ok {
		err = bcrypt.CompareHashAndPassword([]byte(rest), prehash(password))
	} else {
		err = bcrypt.CompareHashAndPassword([]byte(hash), []byte(password))
	}
	return err == nil
}

// appPasswordAlphabet has 32 letters and digits without the look-alikes
// 0/o and 1/l, so a password typed into a phone's settings by hand
// comes out right.
const appPasswordAlphabet = "abcdefghijkmnpqrstuvwxyz23456789"

// NewAppPassword returns a fresh app password, four groups of five
// characters ("abcde-fghjk-mnpqr-stuvw", 100 random bits), and the hash that is
// stored.
func NewAppPassword() (password string, hash []byte, err error) {
	b := make([]byte, 20)
	if _, err := rand.Read(b); err != nil {
		return "", nil, apperr.Wrap(err, apperr.Internal, "generate app password")
	}
	var sb strings.Builder
	for i, v := range b {
		if i > 0 && i%5 == 0 {
			sb.WriteByte('-')
		}
		sb.WriteByte(appPasswordAlphabet[int(v)%32])
	}
	password = sb.String()
	return password, HashAppPassword(password), nil
}

// HashAppPassword hashes an app password for storage and lookup. It
// carries 100 random bits, so a fast hash is safe, as for API keys.
// Case, spaces and dashes are forgiven (phones capitalise, and people
// retype what they read).
func HashAppPassword(password string) []byte {
	p := strings.ToLower(strings.NewReplacer(" ", "", "-", "").Replace(password))
	sum := sha256.Sum256([]byte(p))
	return sum[:]
}
