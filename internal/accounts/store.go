package accounts

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/contactbook/contactbook/internal/apperr"
	"github.com/contactbook/contactbook/internal/auth"
	"github.com/contactbook/contactbook/internal/postgres"
)

// store is the accounts SQL. Every method takes the DB to run on, so the
// service decides what shares a transaction.
type store struct{}

func (store) insertUser(ctx context.Context, db postgres.DB, email, name, hash string) (User, error) {
	var u User
	err := db.QueryRow(ctx, `
		INSERT INTO users (email, name, password_hash) VALUES ($1, $2, $3)
		RETURNING id, email, name, created_at`, email, name, hash).
		Scan(&u.ID, &u.Email, &u.Name, &u.CreatedAt)
	if postgres.IsUniqueViolation(err, "users_email_key") {
		return User{}, apperr.New(apperr.Conflict, "An account with this email already exists; log in instead.")
	}
	return u, err
}

// credentials returns the user's id and password hash by email.
func (store) credentials(ctx context.Context, db postgres.DB, email string) (uuid.UUID, string, error) {
	var id uuid.UUID
	var hash string
	err := db.QueryRow(ctx, `SELECT id, password_hash FROM users WHERE lower(email) = lower($1)`, email).Scan(&id, &hash)
	return id, hash, err
}

func (store) user(ctx context.Context, db postgres.DB, id uuid.UUID) (User, error) {
	var u User
	err := db.QueryRow(ctx, `SELECT id, email, name, created_at, totp_enabled_at IS NOT NULL FROM users WHERE id = $1`, id).
		Scan(&u.ID, &u.Email, &u.Name, &u.CreatedAt, &u.TwoFactorEnabled)
	return u, err
}

func (store) userByEmail(ctx context.Context, db postgres.DB, email string) (User, error) {
	var u User
	err := db.QueryRow(ctx, `SELECT id, email, name, created_at FROM users WHERE lower(email) = lower($1)`, email).
		Scan(&u.ID, &u.Email, &u.Name, &u.CreatedAt)
	return u, err
}

func (store) insertTeam(ctx context.Context, db postgres.DB, name string) (TeamBrief, error) {
	var t TeamBrief
	err := db.QueryRow(ctx, `INSERT INTO teams (name) VALUES ($1) RETURNING id, name`, name).Scan(&t.ID, &t.Name)
	return t, err
}

// AddonActiveSQL is the SQL test of whether the team whose id is the SQL
// expression team has the campaigns add-on active: the scheduler's
// statement over campaigns reads teams through it.
func AddonActiveSQL(team string) string {
	return `EXISTS (SELECT 1 FROM teams t WHERE t.id = ` + team + ` AND t.campaign_addon = 'active')`
}

const teamColumns = `id, name, campaign_addon, trial_ends_at, require_two_factor, created_at, updated_at`

func scanTeam(row pgx.Row) (Team, error) {
	var t Team
	err := row.Scan(&t.ID, &t.Name, &t.CampaignAddon, &t.TrialEndsAt, &t.RequireTwoFactor, &t.CreatedAt, &t.UpdatedAt)
	return t, err
}

func (store) team(ctx context.Context, db postgres.DB, id uuid.UUID) (Team, error) {
	return scanTeam(db.QueryRow(ctx, `SELECT `+teamColumns+` FROM teams WHERE id = $1`, id))
}

// lockTeam takes the team row lock that serialises membership changes, so
// two concurrent demotions cannot both leave the team without an owner.
func (store) lockTeam(ctx context.Context, db postgres.DB, id uuid.UUID) error {
	var got uuid.UUID
	return db.QueryRow(ctx, `SELECT id FROM teams WHERE id = $1 FOR UPDATE`, id).Scan(&got)
}

func (store) updateTeam(ctx context.Context, db postgres.DB, id uuid.UUID, p TeamPatch) (Team, error) {
	return scanTeam(db.QueryRow(ctx, `
		UPDATE teams SET name = COALESCE($2, name), require_two_factor = COALESCE($3, require_two_factor), updated_at = now()
		WHERE id = $1 RETURNING `+teamColumns, id, p.Name, p.RequireTwoFactor))
}

// setAddon sets the team's add-on state. A trial set this way without one
// running (none yet, or ended) starts a fresh one of TrialLength from now:
// a trial with no end, or one already over, would read as no add-on.
func (store) setAddon(ctx context.Context, db postgres.DB, id uuid.UUID, state AddonState, now time.Time) (Team, error) {
	return scanTeam(db.QueryRow(ctx, `
		UPDATE teams SET campaign_addon = $2, updated_at = now(),
			trial_started_at = CASE WHEN $2 = 'trial' AND (trial_ends_at IS NULL OR trial_ends_at <= $3) THEN $3 ELSE trial_started_at END,
			trial_ends_at = CASE WHEN $2 = 'trial' AND (trial_ends_at IS NULL OR trial_ends_at <= $3) THEN $4 ELSE trial_ends_at END
		WHERE id = $1 RETURNING `+teamColumns, id, state, now, now.Add(TrialLength)))
}

// startTrial starts the trial unless the team has had one or has paid.
func (store) startTrial(ctx context.Context, db postgres.DB, id uuid.UUID, now time.Time) (Team, error) {
	t, err := scanTeam(db.QueryRow(ctx, `
		UPDATE teams SET campaign_addon = 'trial', trial_started_at = $2, trial_ends_at = $3, updated_at = now()
		WHERE id = $1 AND trial_started_at IS NULL AND campaign_addon <> 'active'
		RETURNING `+teamColumns, id, now, now.Add(TrialLength)))
	if apperr.Is(err, apperr.NotFound) {
		return Team{}, apperr.New(apperr.Conflict, "This team has already used its Campaigns trial or has the paid add-on.")
	}
	return t, err
}

func (store) insertMember(ctx context.Context, db postgres.DB, teamID, userID uuid.UUID, role string) (Member, error) {
	_, err := db.Exec(ctx, `INSERT INTO team_members (team_id, user_id, role) VALUES ($1, $2, $3)`, teamID, userID, role)
	if postgres.IsUniqueViolation(err, "") {
		return Member{}, apperr.New(apperr.Conflict, "This user is already a member of the team; change their role instead.")
	}
	if err != nil {
		return Member{}, err
	}
	return store{}.member(ctx, db, teamID, userID)
}

const memberSelect = `
	SELECT m.user_id, u.email, u.name, m.role, m.joined_at
	FROM team_members m JOIN users u ON u.id = m.user_id`

func scanMember(row pgx.Row) (Member, error) {
	var m Member
	err := row.Scan(&m.UserID, &m.Email, &m.Name, &m.Role, &m.JoinedAt)
	return m, err
}

func (store) member(ctx context.Context, db postgres.DB, teamID, userID uuid.UUID) (Member, error) {
	m, err := scanMember(db.QueryRow(ctx, memberSelect+` WHERE m.team_id = $1 AND m.user_id = $2`, teamID, userID))
	if errors.Is(err, pgx.ErrNoRows) {
		return Member{}, apperr.NotFoundf("No member with this user id in the team.")
	}
	return m, err
}

func (store) members(ctx context.Context, db postgres.DB, teamID uuid.UUID) ([]Member, error) {
	rows, err := db.Query(ctx, memberSelect+` WHERE m.team_id = $1 ORDER BY m.joined_at, u.email`, teamID)
	if err != nil {
		return nil, err
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Member, error) { return scanMember(r) })
	return out, err
}

func (store) setRole(ctx context.Context, db postgres.DB, teamID, userID uuid.UUID, role string) error {
	_, err := db.Exec(ctx, `UPDATE team_members SET role = $3 WHERE team_id = $1 AND user_id = $2`, teamID, userID, role)
	return err
}

func (store) deleteMember(ctx context.Context, db postgres.DB, teamID, userID uuid.UUID) error {
	_, err := db.Exec(ctx, `DELETE FROM team_members WHERE team_id = $1 AND user_id = $2`, teamID, userID)
	return err
}

func (store) ownerCount(ctx context.Context, db postgres.DB, teamID uuid.UUID) (int, error) {
	var n int
	err := db.QueryRow(ctx, `SELECT count(*) FROM team_members WHERE team_id = $1 AND role = 'owner'`, teamID).Scan(&n)
	return n, err
}

// membership is a user's role in a team with what the team's two-factor
// requirement needs to know.
type membership struct {
	role            string
	teamRequires2FA bool
	userHas2FA      bool
	ssoEnforced     bool // the team admits sessions of its own single sign-on only
}

// role is the one lookup of every role check: the membership, the team's
// requirement and the user's 2FA state by primary keys.
func (store) role(ctx context.Context, db postgres.DB, teamID, userID uuid.UUID) (membership, error) {
	var m membership
	err := db.QueryRow(ctx, `
		SELECT m.role, t.require_two_factor, u.totp_enabled_at IS NOT NULL,
		       EXISTS (SELECT 1 FROM sso_configs c WHERE c.team_id = m.team_id AND c.enforce)
		FROM team_members m JOIN teams t ON t.id = m.team_id JOIN users u ON u.id = m.user_id
		WHERE m.team_id = $1 AND m.user_id = $2`, teamID, userID).Scan(&m.role, &m.teamRequires2FA, &m.userHas2FA, &m.ssoEnforced)
	if errors.Is(err, pgx.ErrNoRows) {
		return membership{}, nil
	}
	return m, err
}

func (store) teamsOf(ctx context.Context, db postgres.DB, userID uuid.UUID) ([]TeamRole, error) {
	rows, err := db.Query(ctx, `
		SELECT t.id, t.name, m.role FROM team_members m JOIN teams t ON t.id = m.team_id
		WHERE m.user_id = $1 ORDER BY m.joined_at, t.name`, userID)
	if err != nil {
		return nil, err
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (TeamRole, error) {
		var t TeamRole
		return t, r.Scan(&t.ID, &t.Name, &t.Role)
	})
	return out, err
}

// newKeyRow is what insertKey stores of a new key.
type newKeyRow struct {
	name, prefix string
	hash         []byte
	by           *uuid.UUID
	scope        auth.KeyScope
	expiresAt    *time.Time
}

const keyColumns = `id, name, prefix, created_at, last_used_at, scope, expires_at`

func scanKey(row pgx.Row) (APIKey, error) {
	var k APIKey
	err := row.Scan(&k.ID, &k.Name, &k.Prefix, &k.CreatedAt, &k.LastUsedAt, &k.Scope, &k.ExpiresAt)
	return k, err
}

func (store) insertKey(ctx context.Context, db postgres.DB, teamID uuid.UUID, r newKeyRow) (APIKey, error) {
	k, err := scanKey(db.QueryRow(ctx, `
		INSERT INTO api_keys (team_id, name, prefix, key_hash, created_by, scope, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7)
		RETURNING `+keyColumns, teamID, r.name, r.prefix, r.hash, r.by, r.scope, r.expiresAt))
	return k, err
}

func (store) keys(ctx context.Context, db postgres.DB, teamID uuid.UUID) ([]APIKey, error) {
	rows, err := db.Query(ctx, `SELECT `+keyColumns+` FROM api_keys WHERE team_id = $1 ORDER BY created_at DESC`, teamID)
	if err != nil {
		return nil, err
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (APIKey, error) { return scanKey(r) })
	return out, err
}

// deleteKey deletes a key and returns what it was (for the audit entry).
func (store) deleteKey(ctx context.Context, db postgres.DB, teamID, keyID uuid.UUID) (APIKey, error) {
	k, err := scanKey(db.QueryRow(ctx, `DELETE FROM api_keys WHERE team_id = $1 AND id = $2 RETURNING `+keyColumns, teamID, keyID))
	if errors.Is(err, pgx.ErrNoRows) {
		return APIKey{}, apperr.NotFoundf("No API key with this id in the team.")
	}
	return k, err
}

// keyRow is what authenticating a key reads.
type keyRow struct {
	id, teamID uuid.UUID
	lastUsed   *time.Time
	scope      auth.KeyScope
	expiresAt  *time.Time
}

// keyByHash is the one indexed lookup that authenticates a key.
func (store) keyByHash(ctx context.Context, db postgres.DB, hash []byte) (keyRow, error) {
	var k keyRow
	err := db.QueryRow(ctx, `SELECT id, team_id, last_used_at, scope, expires_at FROM api_keys WHERE key_hash = $1`, hash).
		Scan(&k.id, &k.teamID, &k.lastUsed, &k.scope, &k.expiresAt)
	return k, err
}

func (store) touchKey(ctx context.Context, db postgres.DB, id uuid.UUID, now time.Time) error {
	_, err := db.Exec(ctx, `UPDATE api_keys SET last_used_at = $2 WHERE id = $1`, id, now)
	return err
}

// IsMemberEmail reports whether address (case-insensitive) is the email of
// a member of the team, whatever their role.
func IsMemberEmail(ctx context.Context, db postgres.DB, teamID uuid.UUID, address string) (bool, error) {
	var ok bool
	err := db.QueryRow(ctx, `
		SELECT EXISTS (SELECT 1 FROM team_members m JOIN users u ON u.id = m.user_id
		               WHERE m.team_id = $1 AND lower(u.email) = lower($2))`, teamID, address).Scan(&ok)
	return ok, err
}
