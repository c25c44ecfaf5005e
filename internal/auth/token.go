package auth

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
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

// Claims are what a verified token says: its user and its session. The
// session is what logout and a password change end.
type Claims struct {
	UserID    uuid.UUID
	SessionID uuid.UUID
	// SSOTeamID is the team whose single sign-on started the session
	// (uuid.Nil for a password login).
	SSOTeamID uuid.UUID
}

// claims is the JWT body: the registered claims plus sid, the session id.
type claims struct {
	jwt.RegisteredClaims
	SessionID string `json:"sid"`
	// SSOTeam is the team whose single sign-on started the session.
	SSOTeam string `json:"sso,omitempty"`
}

// Expiry is when a token issued now would expire.
func (t *Tokens) Expiry() time.Time { return t.now().Add(t.ttl).UTC().Truncate(time.Second) }

// Issue signs a token of session sid for userID, expiring at exp (Expiry).
func (t *Tokens) Issue(userID, sid uuid.UUID, exp time.Time) (string, error) {
	return t.IssueSSO(userID, sid, uuid.Nil, exp)
}

// IssueSSO is Issue for a session that team ssoTeam's single sign-on
// started (uuid.Nil: none); the claim is signed, so it cannot be added to
// a password session's token.
func (t *Tokens) IssueSSO(userID, sid, ssoTeam uuid.UUID, exp time.Time) (string, error) {
	c := claims{
		RegisteredClaims: jwt.RegisteredClaims{
			Subject:   userID.String(),
			Issuer:    t.issuer,
			IssuedAt:  jwt.NewNumericDate(t.now()),
			ExpiresAt: jwt.NewNumericDate(exp),
		},
		SessionID: sid.String(),
	}
	if ssoTeam != uuid.Nil {
		c.SSOTeam = ssoTeam.String()
	}
	s, err := jwt.NewWithClaims(jwt.SigningMethodHS256, c).SignedString(t.secret)
	if err != nil {
		return "", apperr.Wrap(err, apperr.Internal, "sign token")
	}
	return s, nil
}

var errBadToken = apperr.New(apperr.Unauthorized, "The token is invalid or expired; log in again.")

// Parse verifies a token and returns its claims. Any algorithm but HS256,
// a wrong signature, a wrong issuer, an expired token or one without a
// session is UNAUTHORIZED. Whether the session still exists is the
// caller's question (accounts.Service.CheckSession).
func (t *Tokens) Parse(token string) (Claims, error) {
	var c claims
	_, err := jwt.ParseWithClaims(token, &c, func(*jwt.Token) (any, error) { return t.secret, nil },
		jwt.WithValidMethods([]string{jwt.SigningMethodHS256.Alg()}),
		jwt.WithIssuer(t.issuer),
		jwt.WithExpirationRequired(),
		jwt.WithIssuedAt(),
		jwt.WithTimeFunc(t.now),
	)
	if err != nil {
		return Claims{}, errBadToken
	}
	id, err := uuid.Parse(c.Subject)
	if err != nil {
		return Claims{}, errors.Join(errBadToken, err)
	}
	sid, err := uuid.Parse(c.SessionID)
	if err != nil {
		return Claims{}, errors.Join(errBadToken, err)
	}
	out := Claims{UserID: id, SessionID: sid}
	if c.SSOTeam != "" {
		if out.SSOTeamID, err = uuid.Parse(c.SSOTeam); err != nil {
			return Claims{}, errors.Join(errBadToken, err)
		}
	}
	return out, nil
}

// CSRFToken is the anti-forgery token of a cookie session: an HMAC of the
// session id under the token secret. The server needs to store nothing, and
// a token planted by another site cannot match a session it does not know.
func (t *Tokens) CSRFToken(sid uuid.UUID) string {
	m := hmac.New(sha256.New, t.secret)
	m.Write([]byte("csrf:"))
	m.Write(sid[:])
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// CheckCSRF reports whether token is the CSRF token of session sid.
func (t *Tokens) CheckCSRF(sid uuid.UUID, token string) bool {
	return hmac.Equal([]byte(t.CSRFToken(sid)), []byte(token))
}
