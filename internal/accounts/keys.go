package accounts

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/contactbook/contactbook/internal/access"
	"github.com/contactbook/contactbook/internal/apperr"
	"github.com/contactbook/contactbook/internal/auth"
	"github.com/contactbook/contactbook/internal/postgres"
	"github.com/contactbook/contactbook/internal/validate"
)

// CreateKey creates a team API key (admin); the secret is returned once,
// and never recorded anywhere else (the audit entry names the key only).
func (s *Service) CreateKey(ctx context.Context, sc access.Scope, in KeyInput) (NewKey, error) {
	if err := sc.Require(ctx, auth.RoleAdmin); err != nil {
		return NewKey{}, err
	}
	if err := validate.Struct(in); err != nil {
		return NewKey{}, err
	}
	scope, err := auth.ParseKeyScope(in.Scope)
	if err != nil {
		return NewKey{}, err
	}
	if in.ExpiresAt != nil && !in.ExpiresAt.After(s.now()) {
		return NewKey{}, apperr.Invalidf("`expires_at` must be in the future.")
	}
	key, prefix, hash, err := auth.NewAPIKey()
	if err != nil {
		return NewKey{}, err
	}
	var k APIKey
	err = postgres.InTx(ctx, s.db, func(tx *postgres.Tx) error {
		if k, err = s.st.insertKey(ctx, tx, sc.Team, newKeyRow{name: in.Name, prefix: prefix, hash: hash, by: sc.Actor.CreatedBy(), scope: scope, expiresAt: in.ExpiresAt}); err != nil {
			return err
		}
		return s.record(ctx, tx, sc.Actor, sc.Team, "api_key.created", "api_key", k.ID.String(),
			map[string]any{"name": k.Name, "prefix": k.Prefix, "scope": k.Scope, "expires_at": k.ExpiresAt})
	})
	if err != nil {
		return NewKey{}, err
	}
	return NewKey{APIKey: k, Key: key}, nil
}

// Keys lists the team's keys without secrets (admin).
func (s *Service) Keys(ctx context.Context, sc access.Scope) ([]APIKey, error) {
	if err := sc.Require(ctx, auth.RoleAdmin); err != nil {
		return nil, err
	}
	return s.st.keys(ctx, s.db, sc.Team)
}

// RevokeKey deletes a key (admin). This instance forgets it at once;
// other instances within the cache lifetime (one second).
func (s *Service) RevokeKey(ctx context.Context, sc access.Scope, keyID uuid.UUID) error {
	if err := sc.Require(ctx, auth.RoleAdmin); err != nil {
		return err
	}
	err := postgres.InTx(ctx, s.db, func(tx *postgres.Tx) error {
		k, err := s.st.deleteKey(ctx, tx, sc.Team, keyID)
		if err != nil {
			return err
		}
		return s.record(ctx, tx, sc.Actor, sc.Team, "api_key.deleted", "api_key", keyID.String(),
			map[string]any{"name": k.Name, "prefix": k.Prefix})
	})
	if err != nil {
		return err
	}
	s.keys.forget(keyID)
	return nil
}

var (
	errBadKey     = apperr.New(apperr.Unauthorized, "The API key is invalid or has been revoked.")
	errExpiredKey = apperr.New(apperr.Unauthorized, "The API key has expired; create a new one.")
)

// AuthenticateKey turns a presented key into its actor. An expired key is
// refused.
func (s *Service) AuthenticateKey(ctx context.Context, key string) (*auth.Actor, error) {
	hash := auth.HashAPIKey(key)
	now := s.now()
	if k, ok := s.keys.get(hash, now); ok {
		return auth.KeyActor(k.id, k.teamID, k.scope), nil
	}
	row, err := s.st.keyByHash(ctx, s.db, hash)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, errBadKey
	}
	if err != nil {
		return nil, err
	}
	if row.expiresAt != nil && !now.Before(*row.expiresAt) {
		return nil, errExpiredKey
	}
	until := now.Add(keyCacheTTL)
	if row.expiresAt != nil && row.expiresAt.Before(until) {
		until = *row.expiresAt
	}
	s.keys.put(hash, cachedKey{id: row.id, teamID: row.teamID, scope: row.scope, expires: until})
	// last_used_at is kept to the minute: a write per request would cost
	// more than the lookup itself.
	if row.lastUsed == nil || now.Sub(*row.lastUsed) > time.Minute {
		if err := s.st.touchKey(ctx, s.db, row.id, now); err != nil {
			s.log.WarnContext(ctx, "record api key use", "key_id", row.id, "err", err)
		}
	}
	return auth.KeyActor(row.id, row.teamID, row.scope), nil
}

// keyCacheTTL bounds how long a revoked key may still work on another
// instance.
const keyCacheTTL = time.Second

type cachedKey struct {
	id, teamID uuid.UUID
	scope      auth.KeyScope
	// expires is the end of the cache entry: at most keyCacheTTL, and never
	// past the key's own expiry.
	expires time.Time
}

// keyCache remembers authenticated keys for a second: at thousands of
// requests a second it saves most lookups, and revocation still wins fast.
type keyCache struct {
	mu      sync.Mutex
	entries map[string]cachedKey
}

const keyCacheMax = 10000

func (c *keyCache) get(hash []byte, now time.Time) (cachedKey, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	k, ok := c.entries[string(hash)]
	if !ok || !now.Before(k.expires) {
		return cachedKey{}, false
	}
	return k, true
}

func (c *keyCache) put(hash []byte, k cachedKey) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.entries) >= keyCacheMax {
		clear(c.entries)
	}
	c.entries[string(hash)] = k
}

func (c *keyCache) forget(id uuid.UUID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for h, k := range c.entries {
		if k.id == id {
			delete(c.entries, h)
		}
	}
}
