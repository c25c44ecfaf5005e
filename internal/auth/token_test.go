package auth

import (
	"bytes"
	"testing"
	"time"

	"github.com/google/uuid"
)

func TestTokenCarriesSession(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	tokens := NewTokens([]byte("test-secret-0123456789"), time.Hour, "contactbook", func() time.Time { return now })
	user, sid := uuid.New(), uuid.New()
	exp := tokens.Expiry()
	if !exp.Equal(now.Add(time.Hour)) {
		t.Fatalf("expiry %s", exp)
	}
	tok, err := tokens.Issue(user, sid, exp)
	if err != nil {
		t.Fatal(err)
	}
	c, err := tokens.Parse(tok)
	if err != nil || c.UserID != user || c.SessionID != sid {
		t.Fatalf("parse: %+v %v", c, err)
	}
}

func TestCSRFTokenIsBoundToTheSession(t *testing.T) {
	t.Parallel()
	tokens := NewTokens([]byte("test-secret-0123456789"), time.Hour, "contactbook", nil)
	other := NewTokens([]byte("another-secret-0123456789"), time.Hour, "contactbook", nil)
	a, b := uuid.New(), uuid.New()
	ta := tokens.CSRFToken(a)
	if !tokens.CheckCSRF(a, ta) {
		t.Fatal("own token refused")
	}
	for name, ok := range map[string]bool{
		"other session": tokens.CheckCSRF(b, ta),
		"other secret":  other.CheckCSRF(a, ta),
		"empty":         tokens.CheckCSRF(a, ""),
		"truncated":     tokens.CheckCSRF(a, ta[:len(ta)-1]),
	} {
		if ok {
			t.Errorf("%s accepted", name)
		}
	}
}

func TestLinkTokens(t *testing.T) {
	t.Parallel()
	tok, hash, err := NewLinkToken()
	if err != nil {
		t.Fatal(err)
	}
	tok2, _, _ := NewLinkToken()
	if len(tok) < 43 || tok == tok2 || !bytes.Equal(hash, HashLinkToken(tok)) || bytes.Equal(hash, HashLinkToken(tok2)) {
		t.Fatalf("token %q, hash %x", tok, hash)
	}
}
