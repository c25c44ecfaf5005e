package accounts

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/contactbook/contactbook/internal/accountmail"
	"github.com/contactbook/contactbook/internal/apperr"
	"github.com/contactbook/contactbook/internal/auth"
	"github.com/contactbook/contactbook/internal/events"
	"github.com/contactbook/contactbook/internal/postgres"
	"github.com/contactbook/contactbook/internal/validate"
)

// Service holds the account rules.
type Service struct {
	db     postgres.Pool
	tokens *auth.Tokens
	outbox *events.Outbox // member.* events
	now    func() time.Time
	log    *slog.Logger
	st     store
	keys   keyCache
	// mail queues invitations, reset links and password notices.
	mail     *accountmail.Composer
	sessions sessionCache
	// passwordCost is the bcrypt cost of new password hashes.
	passwordCost int
	// unknownHash is what a login for an unknown email compares against
	// (auth.UnknownAccountHash), at passwordCost.
	unknownHash string
}

// NewService wires the service; now is injectable for trial and expiry
// tests.
func NewService(db postgres.Pool, tokens *auth.Tokens, outbox *events.Outbox, mail *accountmail.Composer, passwordCost int, now func() time.Time, log *slog.Logger) *Service {
	if now == nil {
		now = time.Now
	}
	return &Service{db: db, tokens: tokens, outbox: outbox, mail: mail, passwordCost: passwordCost, unknownHash: auth.UnknownAccountHash(passwordCost), now: now, log: log, keys: keyCache{entries: map[string]cachedKey{}}}
}

var teamNotFound = apperr.NotFoundf("No team with this id.")

// Signup creates a user, their team and their owner membership at once.
func (s *Service) Signup(ctx context.Context, in SignupInput) (SignupResult, error) {
	in.normalize()
	if err := validate.Struct(in); err != nil {
		return SignupResult{}, err
	}
	hash, err := auth.HashPassword(in.Password, s.passwordCost)
	if err != nil {
		return SignupResult{}, err
	}
	var res SignupResult
	err = postgres.InTx(ctx, s.db, func(tx *postgres.Tx) error {
		u, err := s.st.insertUser(ctx, tx, in.Email, in.Name, hash)
		if err != nil {
			return err
		}
		t, err := s.st.insertTeam(ctx, tx, in.TeamName)
		if err != nil {
			return err
		}
		m, err := s.st.insertMember(ctx, tx, t.ID, u.ID, auth.RoleOwner.String())
		if err != nil {
			return err
		}
		res.User, res.Team = u, t
		if res.Session, err = s.startSession(ctx, tx, u.ID); err != nil {
			return err
		}
		return s.outbox.Append(ctx, tx, s.now(), memberEvent(events.MemberJoined, t.ID, m))
	})
	if err != nil {
		return SignupResult{}, err
	}
	return res, nil
}

// LoginInput is a login attempt.
type LoginInput struct {
	Email    string `json:"email" validate:"required,max=254"`
	Password string `json:"password" validate:"required,max=200"`
}

var errBadCredentials = apperr.New(apperr.Unauthorized, "The email or password is wrong.")

// Login checks credentials and starts a session. Unknown email and wrong
// password answer the same, and take the same time. Attempts are throttled
// per email and per clientIP (see throttle.go): over the limit the answer
// is RATE_LIMITED whether the password is right or not.
func (s *Service) Login(ctx context.Context, in LoginInput, clientIP string) (Session, error) {
	if err := validate.Struct(in); err != nil {
		return Session{}, err
	}
	emailKey, ipKey := loginEmailKey(in.Email), loginIPKey(clientIP)
	wait, err := s.take(ctx, loginWindow, throttleKey{emailKey, loginPerEmail}, throttleKey{ipKey, loginPerClientIP})
	if err != nil {
		return Session{}, err
	}
	if wait > 0 {
		return Session{}, throttled(wait, "Too many failed logins for this account or from your address; wait (see Retry-After) and try again, or reset your password.")
	}
	id, hash, err := s.st.credentials(ctx, s.db, in.Email)
	if err != nil && !apperr.Is(err, apperr.NotFound) {
		return Session{}, err
	}
	known := hash != ""
	if !known {
		hash = s.unknownHash
	}
	if !auth.CheckPassword(hash, in.Password) || !known {
		return Session{}, errBadCredentials
	}
	if err := s.st.loginSucceeded(ctx, s.db, emailKey, ipKey); err != nil {
		return Session{}, err
	}
	return s.startSession(ctx, s.db, id)
}

// Me is the logged-in user and their teams.
func (s *Service) Me(ctx context.Context, actor *auth.Actor) (User, []TeamRole, error) {
	if actor.IsKey() {
		return User{}, nil, apperr.New(apperr.Unauthorized, "API keys have no user; log in with a token.")
	}
	u, err := s.st.user(ctx, s.db, actor.UserID)
	if apperr.Is(err, apperr.NotFound) {
		return User{}, nil, apperr.New(apperr.Unauthorized, "The account of this token no longer exists.")
	}
	if err != nil {
		return User{}, nil, err
	}
	teams, err := s.st.teamsOf(ctx, s.db, actor.UserID)
	return u, teams, err
}

// MemberRole implements auth.RoleLookup.
func (s *Service) MemberRole(ctx context.Context, teamID, userID uuid.UUID) (auth.Role, error) {
	r, err := s.st.role(ctx, s.db, teamID, userID)
	if err != nil {
		return auth.RoleNone, err
	}
	return parseRole(r), nil
}

// Teams lists the teams of a user (the dashboard's team picker).
func (s *Service) Teams(ctx context.Context, userID uuid.UUID) ([]TeamRole, error) {
	return s.st.teamsOf(ctx, s.db, userID)
}

// RequestTeam picks the team a team-level request is about: an API key's
// own team, else the team the request names (given), else the user's only
// team.
func (s *Service) RequestTeam(ctx context.Context, actor *auth.Actor, given uuid.UUID) (uuid.UUID, error) {
	if actor.IsKey() {
		return actor.KeyTeamID, nil
	}
	if given != uuid.Nil {
		return given, nil
	}
	teams, err := s.Teams(ctx, actor.UserID)
	if err != nil {
		return uuid.Nil, err
	}
	if len(teams) != 1 {
		return uuid.Nil, apperr.Invalidf("team_id is required: you belong to %d teams.", len(teams))
	}
	return teams[0].ID, nil
}

// Team returns a team the actor belongs to.
func (s *Service) Team(ctx context.Context, actor *auth.Actor, teamID uuid.UUID) (Team, error) {
	if err := actor.Require(ctx, teamID, auth.RoleViewer, teamNotFound); err != nil {
		return Team{}, err
	}
	t, err := s.st.team(ctx, s.db, teamID)
	t.CampaignAddon = effectiveAddon(t.CampaignAddon, t.TrialEndsAt, s.now())
	return t, err
}

// RenameTeam changes the team's name (admin).
func (s *Service) RenameTeam(ctx context.Context, actor *auth.Actor, teamID uuid.UUID, in TeamPatch) (Team, error) {
	if err := actor.Require(ctx, teamID, auth.RoleAdmin, teamNotFound); err != nil {
		return Team{}, err
	}
	if err := validate.Struct(in); err != nil {
		return Team{}, err
	}
	t, err := s.st.renameTeam(ctx, s.db, teamID, in.Name)
	t.CampaignAddon = effectiveAddon(t.CampaignAddon, t.TrialEndsAt, s.now())
	return t, err
}

// Addon returns the team's effective add-on state.
func (s *Service) Addon(ctx context.Context, teamID uuid.UUID) (Addon, error) {
	t, err := s.st.team(ctx, s.db, teamID)
	if err != nil {
		return Addon{}, err
	}
	return Addon{State: effectiveAddon(t.CampaignAddon, t.TrialEndsAt, s.now())}, nil
}

// StartTrial starts the team's one 14-day Campaigns trial (admin).
func (s *Service) StartTrial(ctx context.Context, actor *auth.Actor, teamID uuid.UUID) (Team, error) {
	if err := actor.Require(ctx, teamID, auth.RoleAdmin, teamNotFound); err != nil {
		return Team{}, err
	}
	return s.st.startTrial(ctx, s.db, teamID, s.now())
}

// SetAddon sets the add-on state: operators (CLI) and the payment webhook.
func (s *Service) SetAddon(ctx context.Context, teamID uuid.UUID, state AddonState) (Team, error) {
	switch state {
	case AddonNone, AddonTrial, AddonActive, AddonCanceled:
	default:
		return Team{}, apperr.Invalidf("The add-on status must be one of none, trial, active, canceled.")
	}
	t, err := s.st.setAddon(ctx, s.db, teamID, state)
	if apperr.Is(err, apperr.NotFound) {
		return Team{}, teamNotFound
	}
	return t, err
}

// Members lists the team's members.
func (s *Service) Members(ctx context.Context, actor *auth.Actor, teamID uuid.UUID) ([]Member, error) {
	if err := actor.Require(ctx, teamID, auth.RoleViewer, teamNotFound); err != nil {
		return nil, err
	}
	return s.st.members(ctx, s.db, teamID)
}

// requireGrant checks an admin may touch a membership: only owners grant,
// change or take away the owner role.
func requireGrant(ctx context.Context, actor *auth.Actor, teamID uuid.UUID, roles ...string) error {
	for _, r := range roles {
		if r == auth.RoleOwner.String() {
			return actor.Require(ctx, teamID, auth.RoleOwner, teamNotFound)
		}
	}
	return nil
}

// ChangeRole changes a member's role (admin); the last owner stays owner.
func (s *Service) ChangeRole(ctx context.Context, actor *auth.Actor, teamID, userID uuid.UUID, in RoleInput) (Member, error) {
	if err := actor.Require(ctx, teamID, auth.RoleAdmin, teamNotFound); err != nil {
		return Member{}, err
	}
	if err := validate.Struct(in); err != nil {
		return Member{}, err
	}
	var m Member
	err := postgres.InTx(ctx, s.db, func(tx *postgres.Tx) error {
		if err := s.st.lockTeam(ctx, tx, teamID); err != nil {
			return err
		}
		cur, err := s.st.member(ctx, tx, teamID, userID)
		if err != nil {
			return err
		}
		if err := requireGrant(ctx, actor, teamID, cur.Role, in.Role); err != nil {
			return err
		}
		if cur.Role == auth.RoleOwner.String() && in.Role != cur.Role {
			if err := s.keepAnOwner(ctx, tx, teamID, "demoted"); err != nil {
				return err
			}
		}
		if err := s.st.setRole(ctx, tx, teamID, userID, in.Role); err != nil {
			return err
		}
		cur.Role = in.Role
		m = cur
		return nil
	})
	return m, err
}

// RemoveMember removes a member (admin); never the last owner.
func (s *Service) RemoveMember(ctx context.Context, actor *auth.Actor, teamID, userID uuid.UUID) error {
	if err := actor.Require(ctx, teamID, auth.RoleAdmin, teamNotFound); err != nil {
		return err
	}
	return postgres.InTx(ctx, s.db, func(tx *postgres.Tx) error {
		if err := s.st.lockTeam(ctx, tx, teamID); err != nil {
			return err
		}
		cur, err := s.st.member(ctx, tx, teamID, userID)
		if err != nil {
			return err
		}
		if err := requireGrant(ctx, actor, teamID, cur.Role); err != nil {
			return err
		}
		if cur.Role == auth.RoleOwner.String() {
			if err := s.keepAnOwner(ctx, tx, teamID, "removed"); err != nil {
				return err
			}
		}
		if err := s.st.deleteMember(ctx, tx, teamID, userID); err != nil {
			return err
		}
		return s.outbox.Append(ctx, tx, s.now(), memberEvent(events.MemberRemoved, teamID, cur))
	})
}

func (s *Service) keepAnOwner(ctx context.Context, tx *postgres.Tx, teamID uuid.UUID, verb string) error {
	n, err := s.st.ownerCount(ctx, tx, teamID)
	if err != nil {
		return err
	}
	if n <= 1 {
		return apperr.New(apperr.Conflict, "The team's last owner cannot be %s; make another member owner first.", verb)
	}
	return nil
}

// memberData is the member.* webhook payload.
type memberData struct {
	UserID uuid.UUID `json:"user_id"`
	Email  string    `json:"email"`
	Name   string    `json:"name"`
	Role   string    `json:"role"`
}

func memberEvent(typ string, teamID uuid.UUID, m Member) events.Event {
	return events.Event{Type: typ, TeamID: teamID, Data: memberData{UserID: m.UserID, Email: m.Email, Name: m.Name, Role: m.Role}}
}

// CreateKey creates a team API key (admin); the secret is returned once.
func (s *Service) CreateKey(ctx context.Context, actor *auth.Actor, teamID uuid.UUID, in KeyInput) (NewKey, error) {
	if err := actor.Require(ctx, teamID, auth.RoleAdmin, teamNotFound); err != nil {
		return NewKey{}, err
	}
	if err := validate.Struct(in); err != nil {
		return NewKey{}, err
	}
	key, prefix, hash, err := auth.NewAPIKey()
	if err != nil {
		return NewKey{}, err
	}
	k, err := s.st.insertKey(ctx, s.db, teamID, in.Name, prefix, hash, actor.CreatedBy())
	return NewKey{APIKey: k, Key: key}, err
}

// Keys lists the team's keys without secrets (admin).
func (s *Service) Keys(ctx context.Context, actor *auth.Actor, teamID uuid.UUID) ([]APIKey, error) {
	if err := actor.Require(ctx, teamID, auth.RoleAdmin, teamNotFound); err != nil {
		return nil, err
	}
	return s.st.keys(ctx, s.db, teamID)
}

// RevokeKey deletes a key (admin). This instance forgets it at once;
// other instances within the cache lifetime (one second).
func (s *Service) RevokeKey(ctx context.Context, actor *auth.Actor, teamID, keyID uuid.UUID) error {
	if err := actor.Require(ctx, teamID, auth.RoleAdmin, teamNotFound); err != nil {
		return err
	}
	if err := s.st.deleteKey(ctx, s.db, teamID, keyID); err != nil {
		return err
	}
	s.keys.forget(keyID)
	return nil
}

var errBadKey = apperr.New(apperr.Unauthorized, "The API key is invalid or has been revoked.")

// AuthenticateKey turns a presented key into its actor.
func (s *Service) AuthenticateKey(ctx context.Context, key string) (*auth.Actor, error) {
	hash := auth.HashAPIKey(key)
	now := s.now()
	if k, ok := s.keys.get(hash, now); ok {
		return auth.KeyActor(k.id, k.teamID), nil
	}
	id, teamID, lastUsed, err := s.st.keyByHash(ctx, s.db, hash)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, errBadKey
	}
	if err != nil {
		return nil, postgres.Translate(err)
	}
	s.keys.put(hash, cachedKey{id: id, teamID: teamID, expires: now.Add(keyCacheTTL)})
	// last_used_at is kept to the minute: a write per request would cost
	// more than the lookup itself.
	if lastUsed == nil || now.Sub(*lastUsed) > time.Minute {
		if err := s.st.touchKey(ctx, s.db, id, now); err != nil {
			s.log.WarnContext(ctx, "record api key use", "key_id", id, "err", err)
		}
	}
	return auth.KeyActor(id, teamID), nil
}

// keyCacheTTL bounds how long a revoked key may still work on another
// instance.
const keyCacheTTL = time.Second

type cachedKey struct {
	id, teamID uuid.UUID
	expires    time.Time
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
