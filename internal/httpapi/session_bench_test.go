package httpapi

import (
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/contactbook/contactbook/internal/accountmail"
	"github.com/contactbook/contactbook/internal/accounts"
	"github.com/contactbook/contactbook/internal/auth"
	"github.com/contactbook/contactbook/internal/events"
	"github.com/contactbook/contactbook/internal/postgres"
	"github.com/contactbook/contactbook/internal/postgres/pgtest"
)

// BenchmarkAuthenticate isolates what authenticating a login token costs a
// request: TokenOnly is the signature and claims check alone; Session adds
// the check that the token's session is still open, as every /api request
// now does (a cache hit nearly always: one query per session and half
// second); SessionUncached is the price of the query itself, paid on a
// cache miss.
func BenchmarkAuthenticate(b *testing.B) {
	pool := pgtest.Setup(b).Pool
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	tokens := auth.NewTokens([]byte("bench-secret-0123456789"), time.Hour, "contactbook", nil)
	acc := accounts.NewService(accounts.Deps{
		DB: postgres.Wrap(pool), Tokens: tokens, Outbox: events.NewOutbox(nil), Mail: accountmail.NewComposer("http://localhost", nil),
		SecretKey: make([]byte, 32), PasswordCost: 4, Log: log,
	})
	res, err := acc.Signup(context.Background(), accounts.SignupInput{Email: "bench@example.com", Password: "long enough", Name: "B", TeamName: "T"})
	if err != nil {
		b.Fatal(err)
	}
	s := &Server{log: log, tokens: tokens, accounts: acc}
	req := httptest.NewRequest("GET", "/api/contacts/x", nil)
	req.Header.Set("Authorization", "Bearer "+res.Token)

	b.Run("TokenOnly", func(b *testing.B) {
		for b.Loop() {
			if _, err := tokens.Parse(res.Token); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Session", func(b *testing.B) {
		for b.Loop() {
			if _, err := s.authenticateUser(req); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("SessionUncached", func(b *testing.B) {
		claims, err := tokens.Parse(res.Token)
		if err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			// A fresh service has an empty cache: every check queries.
			fresh := accounts.NewService(accounts.Deps{DB: postgres.Wrap(pool), Tokens: tokens, SecretKey: make([]byte, 32), PasswordCost: 4, Log: log})
			if err := fresh.CheckSession(context.Background(), claims); err != nil {
				b.Fatal(err)
			}
		}
	})
}
