package accounts

import (
	"context"
	"log/slog"
	"time"

	"github.com/google/uuid"

	"github.com/contactbook/contactbook/internal/access"
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
	// appPasswords remembers app passwords that just worked (CardDAV).
	appPasswords appPasswordCache
	// mail queues invitations, reset links and password notices.
	mail     *accountmail.Composer
	sessions sessionCache
	// passwordCost is the bcrypt cost of new password hashes.
	passwordCost int
	// unknownHash is what a login for an unknown email compares against
	// (auth.UnknownAccountHash), at passwordCost.
	unknownHash string
	// secrets seals the users' TOTP secrets.
	secrets auth.SecretBox
}

// Deps are what the service works with.
type Deps struct {
	DB     postgres.Pool
	Tokens *auth.Tokens
	Outbox *events.Outbox
	// Mail queues invitations, reset links and password notices.
	Mail *accountmail.Composer
	// SecretKey (32 bytes, the settings key) seals the users' TOTP
	// secrets.
	SecretKey []byte
	// PasswordCost is the bcrypt cost of new password hashes.
	PasswordCost int
	Now          func() time.Time // nil: time.Now; injectable for trial and expiry tests
	Log          *slog.Logger
}

// NewService wires the service.
func NewService(d Deps) *Service {
	if d.Now == nil {
		d.Now = time.Now
	}
	return &Service{
		db: d.DB, tokens: d.Tokens, outbox: d.Outbox, mail: d.Mail, secrets: auth.NewSecretBox(d.SecretKey),
		passwordCost: d.PasswordCost, unknownHash: auth.UnknownAccountHash(d.PasswordCost), now: d.Now, log: d.Log,
		keys: keyCache{entries: map[string]cachedKey{}},
	}
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

// LoginResult is what a right password gives: a session, or for an
// account with two-factor sign-in the challenge of the second step
// (MFA set, no session).
type LoginResult struct {
	Session Session
	MFA     *MFAChallenge
}

// Login checks credentials and starts a session, or for an account with
// two-factor sign-in a challenge for the second step (LoginSecondStep).
// Unknown email and wrong password answer the same, and take the same
// time. Attempts are throttled per email and per clientIP (see
// throttle.go): over the limit the answer is RATE_LIMITED whether the
// password is right or not. Only failures count: a right password gives
// its attempt back, and clears the email's count once the login is
// complete (a pending second step keeps the failures counted so far).
func (s *Service) Login(ctx context.Context, in LoginInput, clientIP string) (LoginResult, error) {
	if err := validate.Struct(in); err != nil {
		return LoginResult{}, err
	}
	emailKey, ipKey := loginEmailKey(in.Email), loginIPKey(clientIP)
	wait, err := s.take(ctx, loginWindow, throttleKey{emailKey, loginPerEmail}, throttleKey{ipKey, loginPerClientIP})
	if err != nil {
		return LoginResult{}, err
	}
	if wait > 0 {
		return LoginResult{}, throttled(wait, "Too many failed logins for this account or from your address; wait (see Retry-After) and try again, or reset your password.")
	}
	id, hash, err := s.st.credentials(ctx, s.db, in.Email)
	if err != nil && !apperr.Is(err, apperr.NotFound) {
		return LoginResult{}, err
	}
	known := hash != ""
	if !known {
		hash = s.unknownHash
	}
	if !auth.CheckPassword(hash, in.Password) || !known {
		return LoginResult{}, errBadCredentials
	}
	var res LoginResult
	err = postgres.InTx(ctx, s.db, func(tx *postgres.Tx) error {
		mfa, err := s.challengeIfTwoFactor(ctx, tx, id)
		if err != nil {
			return err
		}
		if mfa != nil {
			res.MFA = mfa
			return s.st.giveBack(ctx, tx, emailKey, ipKey)
		}
		if err := s.st.loginSucceeded(ctx, tx, emailKey, ipKey); err != nil {
			return err
		}
		res.Session, err = s.startSession(ctx, tx, id)
		return err
	})
	return res, err
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

var errTwoFactorRequired = apperr.New(apperr.TwoFactorRequired, "This team requires two-factor sign-in; turn it on under Security (POST /api/auth/2fa/setup, then /api/auth/2fa/enable) and try again.")

// MemberRole implements auth.RoleLookup. Every check of a user's role in
// a team passes here, so a team that requires two-factor sign-in refuses a
// member without it (TWO_FACTOR_REQUIRED) on all of its resources at once;
// the routes that do not concern a team (/api/me, /api/auth/*) never ask.
func (s *Service) MemberRole(ctx context.Context, teamID, userID uuid.UUID) (auth.Role, error) {
	return s.SessionRole(ctx, teamID, userID, uuid.Nil)
}

var errSSORequired = apperr.New(apperr.SSORequired, "This team signs in through its identity provider: log out and use \"Sign in with SSO\" (GET /api/auth/sso/start) with your work address.")

// SessionRole implements auth.SessionRoleLookup: MemberRole for a session
// that ssoTeam's single sign-on started (uuid.Nil: a password login). A
// team that enforces single sign-on refuses other sessions
// (SSO_REQUIRED) except its owners', who keep a password login to repair
// the setting. A session from the team's own single sign-on is not held
// to its two-factor requirement: the identity provider is responsible
// for how people sign in. Another team's requirement still applies, since
// that team did not choose this provider.
func (s *Service) SessionRole(ctx context.Context, teamID, userID, ssoTeam uuid.UUID) (auth.Role, error) {
	m, err := s.st.role(ctx, s.db, teamID, userID)
	if err != nil {
		return auth.RoleNone, err
	}
	r := parseRole(m.role)
	if r == auth.RoleNone {
		return r, nil
	}
	viaTeamSSO := ssoTeam != uuid.Nil && ssoTeam == teamID
	if m.ssoEnforced && !viaTeamSSO && r != auth.RoleOwner {
		return auth.RoleNone, errSSORequired
	}
	if m.teamRequires2FA && !m.userHas2FA && !viaTeamSSO {
		return auth.RoleNone, errTwoFactorRequired
	}
	return r, nil
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
func (s *Service) Team(ctx context.Context, sc access.Scope) (Team, error) {
	if err := sc.Require(ctx, auth.RoleViewer); err != nil {
		return Team{}, err
	}
	t, err := s.st.team(ctx, s.db, sc.Team)
	t.CampaignAddon = effectiveAddon(t.CampaignAddon, t.TrialEndsAt, s.now())
	return t, err
}

// UpdateTeam changes the team's name (admin) and whether it requires
// two-factor sign-in (owner; an owner must have it on to require it, so the
// team keeps someone who can change it back).
func (s *Service) UpdateTeam(ctx context.Context, sc access.Scope, in TeamPatch) (Team, error) {
	if err := sc.Require(ctx, auth.RoleAdmin); err != nil {
		return Team{}, err
	}
	if err := in.check(); err != nil {
		return Team{}, err
	}
	if in.RequireTwoFactor != nil {
		if err := sc.Require(ctx, auth.RoleOwner); err != nil {
			return Team{}, err
		}
	}
	var t Team
	err := postgres.InTx(ctx, s.db, func(tx *postgres.Tx) error {
		before, err := s.st.team(ctx, tx, sc.Team)
		if err != nil {
			return err
		}
		if t, err = s.st.updateTeam(ctx, tx, sc.Team, in); err != nil {
			return err
		}
		if in.Name != nil && *in.Name != before.Name {
			if err := s.record(ctx, tx, sc.Actor, sc.Team, "team.updated", "team", sc.Team.String(),
				map[string]any{"name": t.Name, "previous_name": before.Name}); err != nil {
				return err
			}
		}
		if in.RequireTwoFactor != nil && *in.RequireTwoFactor != before.RequireTwoFactor {
			return s.record(ctx, tx, sc.Actor, sc.Team, "security.2fa_required", "team", sc.Team.String(),
				map[string]any{"required": t.RequireTwoFactor})
		}
		return nil
	})
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
func (s *Service) StartTrial(ctx context.Context, sc access.Scope) (Team, error) {
	if err := sc.Require(ctx, auth.RoleAdmin); err != nil {
		return Team{}, err
	}
	var t Team
	err := postgres.InTx(ctx, s.db, func(tx *postgres.Tx) error {
		var err error
		if t, err = s.st.startTrial(ctx, tx, sc.Team, s.now()); err != nil {
			return err
		}
		return s.record(ctx, tx, sc.Actor, sc.Team, "addon.changed", "team", sc.Team.String(),
			map[string]any{"addon": "campaigns", "state": AddonTrial, "trial_ends_at": t.TrialEndsAt})
	})
	return t, err
}

// SetAddon sets the add-on state: operators (CLI) and the payment webhook.
func (s *Service) SetAddon(ctx context.Context, teamID uuid.UUID, state AddonState) (Team, error) {
	if _, err := ParseAddonState(string(state)); err != nil {
		return Team{}, err
	}
	var t Team
	err := postgres.InTx(ctx, s.db, func(tx *postgres.Tx) error {
		var err error
		if t, err = s.st.setAddon(ctx, tx, teamID, state, s.now()); err != nil {
			return err
		}
		return s.record(ctx, tx, nil, teamID, "addon.changed", "team", teamID.String(),
			map[string]any{"addon": "campaigns", "state": state, "by": "operator"})
	})
	if apperr.Is(err, apperr.NotFound) {
		return Team{}, teamNotFound
	}
	return t, err
}

// Members lists the team's members.
func (s *Service) Members(ctx context.Context, sc access.Scope) ([]Member, error) {
	if err := sc.Require(ctx, auth.RoleViewer); err != nil {
		return nil, err
	}
	return s.st.members(ctx, s.db, sc.Team)
}

// requireGrant checks an admin may touch a membership: only owners grant,
// change or take away the owner role.
func requireGrant(ctx context.Context, sc access.Scope, roles ...string) error {
	for _, r := range roles {
		if r == auth.RoleOwner.String() {
			return sc.Require(ctx, auth.RoleOwner)
		}
	}
	return nil
}

// ChangeRole changes a member's role (admin); the last owner stays owner.
func (s *Service) ChangeRole(ctx context.Context, sc access.Scope, userID uuid.UUID, in RoleInput) (Member, error) {
	if err := sc.Require(ctx, auth.RoleAdmin); err != nil {
		return Member{}, err
	}
	if err := validate.Struct(in); err != nil {
		return Member{}, err
	}
	role := string(in.Role)
	var m Member
	err := postgres.InTx(ctx, s.db, func(tx *postgres.Tx) error {
		if err := s.st.lockTeam(ctx, tx, sc.Team); err != nil {
			return err
		}
		cur, err := s.st.member(ctx, tx, sc.Team, userID)
		if err != nil {
			return err
		}
		if err := requireGrant(ctx, sc, cur.Role, role); err != nil {
			return err
		}
		if cur.Role == auth.RoleOwner.String() && role != cur.Role {
			if err := s.keepAnOwner(ctx, tx, sc.Team, "demoted"); err != nil {
				return err
			}
		}
		if err := s.st.setRole(ctx, tx, sc.Team, userID, role); err != nil {
			return err
		}
		previous := cur.Role
		cur.Role = role
		m = cur
		return s.record(ctx, tx, sc.Actor, sc.Team, "member.role_changed", "user", userID.String(),
			map[string]any{"email": cur.Email, "role": role, "previous_role": previous})
	})
	return m, err
}

// RemoveMember removes a member (admin); never the last owner.
func (s *Service) RemoveMember(ctx context.Context, sc access.Scope, userID uuid.UUID) error {
	if err := sc.Require(ctx, auth.RoleAdmin); err != nil {
		return err
	}
	return postgres.InTx(ctx, s.db, func(tx *postgres.Tx) error {
		if err := s.st.lockTeam(ctx, tx, sc.Team); err != nil {
			return err
		}
		cur, err := s.st.member(ctx, tx, sc.Team, userID)
		if err != nil {
			return err
		}
		if err := requireGrant(ctx, sc, cur.Role); err != nil {
			return err
		}
		if cur.Role == auth.RoleOwner.String() {
			if err := s.keepAnOwner(ctx, tx, sc.Team, "removed"); err != nil {
				return err
			}
		}
		if err := s.st.deleteMember(ctx, tx, sc.Team, userID); err != nil {
			return err
		}
		if err := s.record(ctx, tx, sc.Actor, sc.Team, "member.removed", "user", userID.String(),
			map[string]any{"email": cur.Email, "role": cur.Role}); err != nil {
			return err
		}
		return s.outbox.Append(ctx, tx, s.now(), memberEvent(events.MemberRemoved, sc.Team, cur))
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
