package accounts

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/contactbook/contactbook/internal/apperr"
	"github.com/contactbook/contactbook/internal/auth"
	"github.com/contactbook/contactbook/internal/postgres"
)

// AppPassword is an app password as listed: never the secret.
type AppPassword struct {
	ID         uuid.UUID  `json:"id"`
	Name       string     `json:"name"`
	CreatedAt  time.Time  `json:"created_at"`
	LastUsedAt *time.Time `json:"last_used_at"`
}

// NewAppPassword is a freshly created app password: Password is shown
// this once.
type NewAppPassword struct {
	ID        uuid.UUID `json:"id"`
	Name      string    `json:"name"`
	CreatedAt time.Time `json:"created_at"`
	Password  string    `json:"password"`
}

// AppPasswordInput names a new app password (the device it is for).
type AppPasswordInput struct {
	Name string `json:"name"`
}

// maxAppPasswords bounds one account's app passwords: one per device is
// plenty, and an unbounded list is a table anyone logged in could fill.
const maxAppPasswords = 50

// CreateAppPassword creates an app password for the actor's own account
// (a logged-in user; API keys have no account).
func (s *Service) CreateAppPassword(ctx context.Context, actor *auth.Actor, in AppPasswordInput) (NewAppPassword, error) {
	if actor.IsKey() {
		return NewAppPassword{}, errKeyHasNoAccount
	}
	name := strings.TrimSpace(in.Name)
	if name == "" || utf8.RuneCountInString(name) > 200 {
		return NewAppPassword{}, apperr.Invalidf("`name` must be 1 to 200 characters, for example the device it is for.")
	}
	password, hash, err := auth.NewAppPassword()
	if err != nil {
		return NewAppPassword{}, err
	}
	var out NewAppPassword
	err = postgres.InTx(ctx, s.db, func(tx *postgres.Tx) error {
		n, err := s.st.countAppPasswords(ctx, tx, actor.UserID)
		if err != nil {
			return err
		}
		if n >= maxAppPasswords {
			return apperr.New(apperr.Conflict, "An account may have at most %d app passwords; revoke one you no longer use.", maxAppPasswords)
		}
		p, err := s.st.insertAppPassword(ctx, tx, actor.UserID, name, hash)
		out = NewAppPassword{ID: p.ID, Name: p.Name, CreatedAt: p.CreatedAt, Password: password}
		return err
	})
	return out, err
}

var errKeyHasNoAccount = apperr.New(apperr.Unauthorized, "API keys have no account; log in to manage app passwords.")

// AppPasswords lists the actor's app passwords, newest first.
func (s *Service) AppPasswords(ctx context.Context, actor *auth.Actor) ([]AppPassword, error) {
	if actor.IsKey() {
		return nil, errKeyHasNoAccount
	}
	return s.st.appPasswords(ctx, s.db, actor.UserID)
}

// RevokeAppPassword deletes one of the actor's app passwords. This
// instance forgets it at once; other instances within the cache lifetime
// (one second).
func (s *Service) RevokeAppPassword(ctx context.Context, actor *auth.Actor, id uuid.UUID) error {
	if actor.IsKey() {
		return errKeyHasNoAccount
	}
	if err := s.st.deleteAppPassword(ctx, s.db, actor.UserID, id); err != nil {
		return err
	}
	s.appPasswords.forget(func(p cachedAppPassword) bool { return p.id == id })
	return nil
}

var errBadBasic = apperr.New(apperr.Unauthorized, "The email or app password is wrong; create an app password in the dashboard (your account password does not work here).")

// AuthenticateAppPassword turns HTTP Basic credentials (the account's
// email and one of its app passwords) into the user's actor. An attempt
// this instance has not just seen succeed counts in the login throttle
// (per email and per clientIP, before the password is checked, as a
// login does); over the limit the answer is RATE_LIMITED, right password
// or not. A success clears the email's count like a login.
func (s *Service) AuthenticateAppPassword(ctx context.Context, email, password, clientIP string) (*auth.Actor, error) {
	hash := auth.HashAppPassword(password)
	now := s.now()
	if p, ok := s.appPasswords.get(hash, now); ok && strings.EqualFold(p.email, email) {
		return auth.UserActor(p.userID, s), nil
	}
	emailKey, ipKey := loginEmailKey(email), loginIPKey(clientIP)
	wait, err := s.take(ctx, loginWindow, throttleKey{emailKey, loginPerEmail}, throttleKey{ipKey, loginPerClientIP})
	if err != nil {
		return nil, err
	}
	if wait > 0 {
		return nil, throttled(wait, "Too many failed sign-ins for this account or from your address; wait (see Retry-After) and try again.")
	}
	row, err := s.st.appPasswordByHash(ctx, s.db, hash)
	if errors.Is(err, pgx.ErrNoRows) || (err == nil && !strings.EqualFold(row.email, email)) {
		return nil, errBadBasic
	}
	if err != nil {
		return nil, err
	}
	if err := s.st.loginSucceeded(ctx, s.db, emailKey, ipKey); err != nil {
		return nil, err
	}
	s.appPasswords.put(hash, cachedAppPassword{id: row.id, userID: row.userID, email: row.email, expires: now.Add(appPasswordCacheTTL)})
	if row.lastUsed == nil || now.Sub(*row.lastUsed) > time.Minute {
		if err := s.st.touchAppPassword(ctx, s.db, row.id, now); err != nil {
			s.log.WarnContext(ctx, "record app password use", "app_password_id", row.id, "err", err)
		}
	}
	return auth.UserActor(row.userID, s), nil
}

// appPasswordCacheTTL bounds how long a revoked app password may still
// work on another instance.
const appPasswordCacheTTL = time.Second

type cachedAppPassword struct {
	id, userID uuid.UUID
	email      string
	expires    time.Time
}

// appPasswordCache remembers app passwords that just worked, for a
// second: a sync is a burst of requests, each with the same credentials.
type appPasswordCache struct {
	mu      sync.Mutex
	entries map[string]cachedAppPassword
}

func (c *appPasswordCache) get(hash []byte, now time.Time) (cachedAppPassword, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	p, ok := c.entries[string(hash)]
	if !ok || !now.Before(p.expires) {
		return cachedAppPassword{}, false
	}
	return p, true
}

func (c *appPasswordCache) put(hash []byte, p cachedAppPassword) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil || len(c.entries) >= keyCacheMax {
		c.entries = map[string]cachedAppPassword{}
	}
	c.entries[string(hash)] = p
}

func (c *appPasswordCache) forget(match func(cachedAppPassword) bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for h, p := range c.entries {
		if match(p) {
			delete(c.entries, h)
		}
	}
}
