package accounts

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/contactbook/contactbook/internal/apperr"
	"github.com/contactbook/contactbook/internal/auth"
	"github.com/contactbook/contactbook/internal/postgres/pgtest"
	"github.com/contactbook/contactbook/internal/testclock"
)

func TestAppPasswords(t *testing.T) {
	t.Parallel()
	db := pgtest.Setup(t).DB
	ctx := context.Background()
	clock := testclock.At(time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC))
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	// Two instances of the service on one database.
	deps := Deps{DB: db, SecretKey: make([]byte, 32), PasswordCost: 4, Now: clock.Now, Log: log}
	one, two := NewService(deps), NewService(deps)
	u, err := one.st.insertUser(ctx, db, "Ann@Example.com", "Ann", "x")
	if err != nil {
		t.Fatal(err)
	}
	ann := auth.UserActor(u.ID, one)
	if _, err := one.CreateAppPassword(ctx, ann, AppPasswordInput{Name: "  "}); !apperr.Is(err, apperr.InvalidInput) {
		t.Fatalf("blank name: %v", err)
	}
	if _, err := one.CreateAppPassword(ctx, auth.KeyActor(u.ID, u.ID, auth.ScopeFull), AppPasswordInput{Name: "x"}); !apperr.Is(err, apperr.Unauthorized) {
		t.Fatalf("an API key created an app password: %v", err)
	}
	p, err := one.CreateAppPassword(ctx, ann, AppPasswordInput{Name: " iPhone "})
	if err != nil {
		t.Fatal(err)
	}
	if p.Name != "iPhone" || len(p.Password) != 23 || strings.Count(p.Password, "-") != 3 {
		t.Fatalf("created %+v", p)
	}
	var stored int
	if err := db.QueryRow(ctx, `SELECT count(*) FROM app_passwords WHERE password_hash = $1`, auth.HashAppPassword(p.Password)).Scan(&stored); err != nil || stored != 1 {
		t.Fatalf("stored hashes matching: %d, %v", stored, err)
	}
	if err := db.QueryRow(ctx, `SELECT count(*) FROM app_passwords WHERE position($1 in encode(password_hash, 'escape')) > 0`, p.Password).Scan(&stored); err != nil || stored != 0 {
		t.Fatalf("the password is stored in the clear: %d, %v", stored, err)
	}

	// The email is compared case-insensitively; case, spaces and dashes
	// of the password are forgiven.
	a, err := two.AuthenticateAppPassword(ctx, "ann@example.com", strings.ToUpper(strings.ReplaceAll(p.Password, "-", " ")), "203.0.113.7")
	if err != nil || a.UserID != u.ID {
		t.Fatalf("right credentials: %v, %v", a, err)
	}
	list, err := one.AppPasswords(ctx, ann)
	if err != nil || len(list) != 1 || list[0].LastUsedAt == nil || !list[0].LastUsedAt.Equal(clock.Now()) {
		t.Fatalf("list after use: %+v, %v", list, err)
	}
	// Another account's email with this password is refused.
	if _, err := one.AuthenticateAppPassword(ctx, "bob@example.com", p.Password, "203.0.113.7"); !apperr.Is(err, apperr.Unauthorized) {
		t.Fatalf("another email: %v", err)
	}
	// The account password is no app password.
	if _, err := one.AuthenticateAppPassword(ctx, "ann@example.com", "x", "203.0.113.7"); !apperr.Is(err, apperr.Unauthorized) {
		t.Fatalf("a wrong password: %v", err)
	}

	// Revoked on one instance: refused there at once, and on the other
	// (which has it cached) within a second.
	if err := one.RevokeAppPassword(ctx, ann, p.ID); err != nil {
		t.Fatal(err)
	}
	if err := one.RevokeAppPassword(ctx, ann, p.ID); !apperr.Is(err, apperr.NotFound) {
		t.Fatalf("revoking twice: %v", err)
	}
	if _, err := one.AuthenticateAppPassword(ctx, "ann@example.com", p.Password, "203.0.113.8"); !apperr.Is(err, apperr.Unauthorized) {
		t.Fatalf("revoked, same instance: %v", err)
	}
	clock.Advance(time.Second)
	if _, err := two.AuthenticateAppPassword(ctx, "ann@example.com", p.Password, "203.0.113.8"); !apperr.Is(err, apperr.Unauthorized) {
		t.Fatalf("revoked, other instance a second later: %v", err)
	}
}

func TestAppPasswordsCountInTheLoginThrottle(t *testing.T) {
	t.Parallel()
	db := pgtest.Setup(t).DB
	ctx := context.Background()
	clock := testclock.At(time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC))
	s := NewService(Deps{DB: db, SecretKey: make([]byte, 32), PasswordCost: 4, Now: clock.Now, Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	u, err := s.st.insertUser(ctx, db, "ann@example.com", "Ann", "x")
	if err != nil {
		t.Fatal(err)
	}
	p, err := s.CreateAppPassword(ctx, auth.UserActor(u.ID, s), AppPasswordInput{Name: "Phone"})
	if err != nil {
		t.Fatal(err)
	}
	for i := range loginPerEmail {
		if _, err := s.AuthenticateAppPassword(ctx, "ann@example.com", "wrong-guess", "203.0.113.7"); !apperr.Is(err, apperr.Unauthorized) {
			t.Fatalf("guess %d: %v", i+1, err)
		}
	}
	// Over the limit, the right password is refused too, with a wait.
	_, err = s.AuthenticateAppPassword(ctx, "ann@example.com", p.Password, "198.51.100.1")
	var th *ThrottledError
	if !errors.As(err, &th) || th.RetryAfter() <= 0 || th.RetryAfter() > loginWindow {
		t.Fatalf("right password over the limit: %v", err)
	}
	// The form login shares the count.
	if _, err := s.Login(ctx, LoginInput{Email: "ann@example.com", Password: "x"}, "198.51.100.2"); !errors.As(err, &th) {
		t.Fatalf("login after failed Basic sign-ins: %v", err)
	}
	clock.Advance(loginWindow)
	if _, err := s.AuthenticateAppPassword(ctx, "ann@example.com", p.Password, "198.51.100.1"); err != nil {
		t.Fatalf("after the window: %v", err)
	}
	var n int
	if err := db.QueryRow(ctx, `SELECT count(*) FROM auth_throttles WHERE key = $1`, loginEmailKey("ann@example.com")).Scan(&n); err != nil || n != 0 {
		t.Fatalf("a success leaves the email's count: %d, %v", n, err)
	}
}
