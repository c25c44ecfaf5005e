package auth

import (
	"errors"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/google/uuid"

	"github.com/contactbook/contactbook/internal/apperr"
)

// Tokens issues and verifies the dashboard's JWTs: HS256 only.
type Tokens struct {
	secret []byte
	ttl    time.Duration
	issuer string
	now    func() time.Time
}

// NewTokens returns a token issuer; now is injectable for expiry tests.
func NewTokens(secret []byte, ttl time.Duration, issuer string, now func() time.Time) *Tokens {
	if now == nil {
		now = time.Now
	}
	return &Tokens{secret: secret, ttl: ttl, issuer: issuer, now: now}
}

// Issue signs a token for userID.
func (t *Tokens) Issue(userID uuid.UUID) (string, time.Time, error) {
	now := t.now()
	exp := now.Add(t.ttl).UTC().Truncate(time.Second)
	claims := jwt.RegisteredClaims{
		Subject:   userID.String(),
		Issuer:    t.issuer,
		IssuedAt:  jwt.NewNumericDate(now),
		ExpiresAt: jwt.NewNumericDate(exp),
	}
	s, err := jwt.NewWithClaims(jwt.SigningMethodHS256, claims).SignedString(t.secret)
	if err != nil {
		return "", time.Time{}, apperr.Wrap(err, apperr.Internal, "sign token")
	}
	return s, exp, nil
}

var errBadToken = apperr.New(apperr.Unauthorized, "The token is invalid or expired; log in again.")

// Parse verifies a token and returns its user. Any algorithm but HS256,
// a wrong signature, a wrong issuer or an expired token is UNAUTHORIZED.
func (t *Tokens) Parse(token string) (uuid.UUID, error) {
	var claims jwt.RegisteredClaims
	_, err := jwt.ParseWithClaims(token, &claims, func(*jwt.Token) (any, error) { return t.secret, nil },
		jwt.WithValidMethods([]string{jwt.SigningMethodHS256.Alg()}),
		jwt.WithIssuer(t.issuer),
		jwt.WithExpirationRequired(),
		jwt.WithIssuedAt(),
		jwt.WithTimeFunc(t.now),
	)
	if err != nil {
		return uuid.Nil, errBadToken
	}
	id, err := uuid.Parse(claims.Subject)
	if err != nil {
		return uuid.Nil, errors.Join(errBadToken, err)
	}
	return id, nil
}
