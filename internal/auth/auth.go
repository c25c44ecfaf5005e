// Package auth knows who is calling and what they may do: roles and their
// order, the Actor of a request (a user behind a JWT or a team API key),
// token issuing and parsing, API key material and password hashing. Domain
// services ask the Actor for permission; nothing here knows about HTTP.
package auth

import (
	"context"
	"slices"
	"sync"

	"github.com/google/uuid"

	"github.com/contactbook/contactbook/internal/apperr"
	"github.com/contactbook/contactbook/internal/enum"
)

// Role is a team member's role. Each role includes the ones below it.
type Role int

const (
	RoleNone Role = iota
	RoleViewer
	RoleMember
	RoleAdmin
	RoleOwner
)

var roleNames = [...]string{"none", "viewer", "member", "admin", "owner"}

func (r Role) String() string {
	if r < 0 || int(r) >= len(roleNames) {
		return "none"
	}
	return roleNames[r]
}

// Roles is every role a member can hold, lowest first.
var Roles = []Role{RoleViewer, RoleMember, RoleAdmin, RoleOwner}

// RoleName is a role as the API spells it; input fields that name a role
// have this type so the `enum` validation tag accepts only Roles.
type RoleName string

// RoleNames spells Roles, in their order.
var RoleNames = []RoleName{"viewer", "member", "admin", "owner"}

// OneOf lists the names of Roles for the `enum` validation tag.
func (RoleName) OneOf() []string { return enum.Strings(RoleNames) }

// ParseRole parses a team role name; "none" is not a role one can hold.
func ParseRole(s string) (Role, error) {
	n, err := enum.Parse(RoleNames, "`role`", s)
	if err != nil {
		return RoleNone, err
	}
	return Roles[slices.Index(RoleNames, n)], nil
}

// KeyRole is what a team API key may do in its team: read and write the
// team's data, but not administer the team (keys, members, webhooks).
const KeyRole = RoleMember

// KeyScope is what a team API key may do: everything a key may
// (ScopeFull), or only read (ScopeRead).
type KeyScope string

// The key scopes.
const (
	ScopeFull KeyScope = "full"
	ScopeRead KeyScope = "read"
)

// KeyScopes lists the scopes, for validation and the API document.
var KeyScopes = []KeyScope{ScopeFull, ScopeRead}

// ParseKeyScope parses a scope name; "" is ScopeFull.
func ParseKeyScope(s string) (KeyScope, error) {
	if s == "" {
		return ScopeFull, nil
	}
	return enum.Parse(KeyScopes, "`scope`", s)
}

// RoleLookup tells a user's role in a team (RoleNone when not a member).
type RoleLookup interface {
	MemberRole(ctx context.Context, teamID, userID uuid.UUID) (Role, error)
}

// SessionRoleLookup is a RoleLookup that also weighs how the session
// started: ssoTeam is the team whose single sign-on started it (uuid.Nil
// for a password login), which a team that enforces single sign-on asks
// for and which spares the team's two-factor requirement.
type SessionRoleLookup interface {
	SessionRole(ctx context.Context, teamID, userID, ssoTeam uuid.UUID) (Role, error)
}

// Actor is the caller of one request. It memoises role lookups, so asking
// twice in a request costs one query.
type Actor struct {
	UserID    uuid.UUID // set for users (JWT)
	SessionID uuid.UUID // the login session of a user's token
	SSOTeamID uuid.UUID // the team whose single sign-on started the session, if any
	KeyID     uuid.UUID // set for API keys
	KeyTeamID uuid.UUID // the team an API key belongs to
	KeyScope  KeyScope  // what an API key may do

	lookup RoleLookup
	mu     sync.Mutex
	roles  map[uuid.UUID]Role
}

// UserActor is a logged-in user.
func UserActor(userID uuid.UUID, lookup RoleLookup) *Actor {
	return &Actor{UserID: userID, lookup: lookup}
}

// KeyActor is a team API key of scope.
func KeyActor(keyID, teamID uuid.UUID, scope KeyScope) *Actor {
	return &Actor{KeyID: keyID, KeyTeamID: teamID, KeyScope: scope}
}

// ReadOnly reports whether the actor is a key that may only read.
func (a *Actor) ReadOnly() bool { return a.IsKey() && a.KeyScope == ScopeRead }

// IsKey reports whether the actor is an API key.
func (a *Actor) IsKey() bool { return a.KeyID != uuid.Nil }

// CreatedBy is the user to record as author: nil for API keys.
func (a *Actor) CreatedBy() *uuid.UUID {
	if a.UserID == uuid.Nil {
		return nil
	}
	id := a.UserID
	return &id
}

// RoleIn is the actor's role in teamID.
func (a *Actor) RoleIn(ctx context.Context, teamID uuid.UUID) (Role, error) {
	if a.IsKey() {
		// A read key has the role of a full key, KeyRole, so it may do
		// every read a member may (exports included); the key policy
		// refuses its every write before a service sees it.
		if teamID == a.KeyTeamID {
			return KeyRole, nil
		}
		return RoleNone, nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if r, ok := a.roles[teamID]; ok {
		return r, nil
	}
	if a.lookup == nil {
		return RoleNone, nil
	}
	var r Role
	var err error
	if sl, ok := a.lookup.(SessionRoleLookup); ok {
		r, err = sl.SessionRole(ctx, teamID, a.UserID, a.SSOTeamID)
	} else {
		r, err = a.lookup.MemberRole(ctx, teamID, a.UserID)
	}
	if err != nil {
		return RoleNone, err
	}
	if a.roles == nil {
		a.roles = map[uuid.UUID]Role{}
	}
	a.roles[teamID] = r
	return r, nil
}

// Require checks that the actor holds at least min in teamID. An actor
// outside the team gets outsider, which the caller picks: NOT_FOUND for a
// resource addressed by id (its existence is not revealed), FORBIDDEN for a
// book named in X-Book-ID. A role too low is FORBIDDEN.
func (a *Actor) Require(ctx context.Context, teamID uuid.UUID, min Role, outsider error) error {
	r, err := a.RoleIn(ctx, teamID)
	if err != nil {
		return err
	}
	if r == RoleNone {
		return outsider
	}
	if r < min {
		if a.IsKey() {
			return apperr.Forbiddenf("API keys cannot do this; sign in as a team %s.", min)
		}
		return apperr.Forbiddenf("This needs the %s role in the team; you are %s.", min, r)
	}
	return nil
}

// RequireAdminOrKey is Require of RoleAdmin that also lets the team's own
// API key act: on the public API, where only keys come, "admin" operations
// on the team's data (a suppression lifted, a person's data exported or
// erased) are the key holder's to do. A read key is refused like any
// write by it.
func (a *Actor) RequireAdminOrKey(ctx context.Context, teamID uuid.UUID, outsider error) error {
	if a.IsKey() && a.KeyTeamID == teamID && !a.ReadOnly() {
		return nil
	}
	return a.Require(ctx, teamID, RoleAdmin, outsider)
}

type actorKey struct{}

// WithActor stores the actor in ctx.
func WithActor(ctx context.Context, a *Actor) context.Context {
	return context.WithValue(ctx, actorKey{}, a)
}

// FromContext returns the request's actor.
func FromContext(ctx context.Context) (*Actor, error) {
	a, ok := ctx.Value(actorKey{}).(*Actor)
	if !ok || a == nil {
		return nil, apperr.New(apperr.Unauthorized, "Authentication is required.")
	}
	return a, nil
}
