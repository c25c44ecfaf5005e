// Package accounts owns users, teams, team membership and roles,
// invitations, login sessions, passwords and their resets, team API keys
// and the team's Campaigns add-on state. It signs people up, logs them in
// (throttling failed attempts), tells whether a login token's session is
// still open, authenticates API keys, and answers "which role does this
// user hold in that team" for every other domain.
package accounts

import (
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/contactbook/contactbook/internal/apperr"
	"github.com/contactbook/contactbook/internal/auth"
	"github.com/contactbook/contactbook/internal/enum"
)

// User is a person who can log in.
type User struct {
	ID        uuid.UUID `json:"id"`
	Email     string    `json:"email"`
	Name      string    `json:"name"`
	CreatedAt time.Time `json:"created_at"`
	// TwoFactorEnabled tells whether the user signs in with a TOTP code
	// besides the password.
	TwoFactorEnabled bool `json:"two_factor_enabled"`
}

// AddonState is the state of a team's Campaigns add-on.
type AddonState string

// Add-on states.
const (
	AddonNone     AddonState = "none"
	AddonTrial    AddonState = "trial"
	AddonActive   AddonState = "active"
	AddonCanceled AddonState = "canceled"
)

// AddonStates is every add-on state.
var AddonStates = []AddonState{AddonNone, AddonTrial, AddonActive, AddonCanceled}

// ParseAddonState reads an add-on state (operators name it on the command line).
func ParseAddonState(s string) (AddonState, error) {
	return enum.Parse(AddonStates, "The add-on status", s)
}

// TrialLength is how long the one free trial lasts.
const TrialLength = 14 * 24 * time.Hour

// Team owns books, members, keys and webhooks.
type Team struct {
	ID            uuid.UUID  `json:"id"`
	Name          string     `json:"name"`
	CampaignAddon AddonState `json:"campaign_addon"`
	TrialEndsAt   *time.Time `json:"trial_ends_at"`
	// RequireTwoFactor refuses the team's resources to members without
	// two-factor sign-in.
	RequireTwoFactor bool      `json:"require_two_factor"`
	CreatedAt        time.Time `json:"created_at"`
	UpdatedAt        time.Time `json:"updated_at"`
}

// effectiveAddon treats a trial past its end as no add-on.
func effectiveAddon(state AddonState, trialEnds *time.Time, now time.Time) AddonState {
	if state == AddonTrial && trialEnds != nil && !now.Before(*trialEnds) {
		return AddonNone
	}
	return state
}

// Addon is a team's add-on state as the campaign rules need it.
type Addon struct {
	State AddonState
}

// Enabled reports whether campaign features are open (trial or paid).
func (a Addon) Enabled() bool { return a.State == AddonTrial || a.State == AddonActive }

// Paid reports whether campaigns may run (paid add-on only).
func (a Addon) Paid() bool { return a.State == AddonActive }

// TeamRole is one of a user's teams.
type TeamRole struct {
	ID   uuid.UUID `json:"id"`
	Name string    `json:"name"`
	Role string    `json:"role"`
}

// Member is a user's membership of a team.
type Member struct {
	UserID   uuid.UUID `json:"user_id"`
	Email    string    `json:"email"`
	Name     string    `json:"name"`
	Role     string    `json:"role"`
	JoinedAt time.Time `json:"joined_at"`
}

// APIKey is a team key as listed: never the secret.
type APIKey struct {
	ID         uuid.UUID  `json:"id"`
	Name       string     `json:"name"`
	Prefix     string     `json:"prefix"`
	CreatedAt  time.Time  `json:"created_at"`
	LastUsedAt *time.Time `json:"last_used_at"`
	// Scope is full, or read: a read key may only GET and HEAD.
	Scope auth.KeyScope `json:"scope"`
	// ExpiresAt is when the key stops working; null for never.
	ExpiresAt *time.Time `json:"expires_at"`
}

// SignupInput is a new account with its first team.
type SignupInput struct {
	Email    string `json:"email" validate:"required,email,max=254"`
	Password string `json:"password" validate:"required,min=8,max=72"`
	Name     string `json:"name" validate:"required,max=200"`
	TeamName string `json:"team_name" validate:"required,max=200"`
}

func (in *SignupInput) normalize() {
	in.Email = strings.TrimSpace(in.Email)
	in.Name = strings.TrimSpace(in.Name)
	in.TeamName = strings.TrimSpace(in.TeamName)
}

// Session is a logged-in user's token.
type Session struct {
	// Token is empty in cookie mode: the cookie carries it instead.
	Token     string    `json:"token,omitempty"`
	ExpiresAt time.Time `json:"expires_at"`
	// SessionID is the token's session (the cookie session's CSRF token
	// derives from it); never in an answer.
	SessionID uuid.UUID `json:"-"`
}

// SignupResult is what signup answers.
type SignupResult struct {
	Session
	User User      `json:"user"`
	Team TeamBrief `json:"team"`
}

// TeamBrief names a team.
type TeamBrief struct {
	ID   uuid.UUID `json:"id"`
	Name string    `json:"name"`
}

// TeamPatch changes a team; absent fields stay as they are.
type TeamPatch struct {
	Name             *string `json:"name"`
	RequireTwoFactor *bool   `json:"require_two_factor"`
}

func (p *TeamPatch) check() error {
	if p.Name != nil {
		n := strings.TrimSpace(*p.Name)
		if n == "" || utf8.RuneCountInString(n) > 200 {
			return apperr.Invalidf("`name` must be 1 to 200 characters.")
		}
		p.Name = &n
	}
	if p.Name == nil && p.RequireTwoFactor == nil {
		return apperr.Invalidf("Send `name` or `require_two_factor` to change.")
	}
	return nil
}

// RoleInput changes a member's role.
type RoleInput struct {
	Role auth.RoleName `json:"role" validate:"required,enum"`
}

// KeyInput names a new API key, its scope (full when empty) and when it
// expires (never when nil).
type KeyInput struct {
	Name      string     `json:"name" validate:"required,max=200"`
	Scope     string     `json:"scope"`
	ExpiresAt *time.Time `json:"expires_at"`
}

// NewKey is a freshly created key: Key is shown this once.
type NewKey struct {
	APIKey APIKey `json:"api_key"`
	Key    string `json:"key"`
}

func parseRole(s string) auth.Role {
	r, _ := auth.ParseRole(s)
	return r
}
