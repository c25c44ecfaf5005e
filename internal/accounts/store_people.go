package accounts

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/contactbook/contactbook/internal/apperr"
	"github.com/contactbook/contactbook/internal/postgres"
)

// Sessions.

func (store) insertSession(ctx context.Context, db postgres.DB, sid, userID uuid.UUID, now, exp time.Time, ip, userAgent string) error {
	_, err := db.Exec(ctx, `
		INSERT INTO sessions (id, user_id, created_at, expires_at, last_seen_at, ip, user_agent) VALUES ($1, $2, $3, $4, $3, $5, $6)`,
		sid, userID, now, exp, ip, userAgent)
	return err
}

// sessionSeen is the authentication path's one lookup, by primary key: it
// reports whether the session is open and when it was last seen.
func (store) sessionSeen(ctx context.Context, db postgres.DB, sid, userID uuid.UUID) (bool, *time.Time, error) {
	var seen *time.Time
	err := db.QueryRow(ctx, `SELECT last_seen_at FROM sessions WHERE id = $1 AND user_id = $2`, sid, userID).Scan(&seen)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil, nil
	}
	return err == nil, seen, err
}

func (store) touchSession(ctx context.Context, db postgres.DB, sid uuid.UUID, now time.Time) error {
	_, err := db.Exec(ctx, `UPDATE sessions SET last_seen_at = $2 WHERE id = $1`, sid, now)
	return err
}

func (store) sessionsOf(ctx context.Context, db postgres.DB, userID uuid.UUID, now time.Time) ([]SessionInfo, error) {
	rows, err := db.Query(ctx, `
		SELECT id, created_at, COALESCE(last_seen_at, created_at), ip, user_agent FROM sessions
		WHERE user_id = $1 AND expires_at > $2 ORDER BY COALESCE(last_seen_at, created_at) DESC, id`, userID, now)
	if err != nil {
		return nil, err
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (SessionInfo, error) {
		var si SessionInfo
		return si, r.Scan(&si.ID, &si.CreatedAt, &si.LastSeenAt, &si.IP, &si.UserAgent)
	})
	return out, err
}

// deleteSessionOf ends one session of the user; false when the user has
// no such session.
func (store) deleteSessionOf(ctx context.Context, db postgres.DB, sid, userID uuid.UUID) (bool, error) {
	tag, err := db.Exec(ctx, `DELETE FROM sessions WHERE id = $1 AND user_id = $2`, sid, userID)
	if err != nil {
		return false, err
	}
	return tag.RowsAffected() == 1, nil
}

func (store) deleteSession(ctx context.Context, db postgres.DB, sid uuid.UUID) error {
	_, err := db.Exec(ctx, `DELETE FROM sessions WHERE id = $1`, sid)
	return err
}

func (store) endSessions(ctx context.Context, db postgres.DB, userID uuid.UUID) error {
	_, err := db.Exec(ctx, `DELETE FROM sessions WHERE user_id = $1`, userID)
	return err
}

// Throttles.

type attemptCount struct {
	n           int
	windowStart time.Time
}

// countAttempts counts one attempt of each key (sorted) and returns the
// counts. A key whose window has passed starts a new window at now.
func (store) countAttempts(ctx context.Context, db postgres.DB, keys []string, now time.Time, window time.Duration) (map[string]attemptCount, error) {
	rows, err := db.Query(ctx, `
		INSERT INTO auth_throttles AS t (key, window_start, n)
		SELECT k, $2, 1 FROM unnest($1::text[]) WITH ORDINALITY AS u (k, i) ORDER BY i
		ON CONFLICT (key) DO UPDATE SET
			n = CASE WHEN t.window_start <= $3 THEN 1 ELSE t.n + 1 END,
			window_start = CASE WHEN t.window_start <= $3 THEN $2 ELSE t.window_start END
		RETURNING key, n, window_start`, keys, now, now.Add(-window))
	if err != nil {
		return nil, err
	}
	out := make(map[string]attemptCount, len(keys))
	var key string
	var c attemptCount
	_, err = pgx.ForEachRow(rows, []any{&key, &c.n, &c.windowStart}, func() error {
		out[key] = c
		return nil
	})
	return out, err
}

// loginSucceeded clears the email's failures and gives the client IP its
// attempt back.
func (store) loginSucceeded(ctx context.Context, db postgres.DB, emailKey, ipKey string) error {
	_, err := db.Exec(ctx, `
		WITH cleared AS (DELETE FROM auth_throttles WHERE key = $1)
		UPDATE auth_throttles SET n = n - 1 WHERE key = $2 AND n > 0`, emailKey, ipKey)
	return err
}

// giveBack returns one attempt to each key: a right password is not a
// failure, so the attempt counted before the check is undone.
func (store) giveBack(ctx context.Context, db postgres.DB, keys ...string) error {
	_, err := db.Exec(ctx, `UPDATE auth_throttles SET n = n - 1 WHERE key = ANY($1) AND n > 0`, keys)
	return err
}

// Invitations.

const invitationColumns = `id, team_id, email, role, invited_by, created_at, expires_at`

func scanInvitation(row pgx.Row) (Invitation, error) {
	var i Invitation
	err := row.Scan(&i.ID, &i.TeamID, &i.Email, &i.Role, &i.InvitedBy, &i.CreatedAt, &i.ExpiresAt)
	return i, err
}

func (store) isMemberByEmail(ctx context.Context, db postgres.DB, teamID uuid.UUID, email string) (bool, error) {
	var ok bool
	err := db.QueryRow(ctx, `
		SELECT EXISTS (SELECT 1 FROM team_members m JOIN users u ON u.id = m.user_id
		               WHERE m.team_id = $1 AND lower(u.email) = lower($2))`, teamID, email).Scan(&ok)
	return ok, err
}

// replaceInvitation deletes the address's pending invitation, if any, and
// inserts inv with the token hash.
func (store) replaceInvitation(ctx context.Context, db postgres.DB, inv Invitation, hash []byte) (Invitation, error) {
	if _, err := db.Exec(ctx, `DELETE FROM invitations WHERE team_id = $1 AND lower(email) = lower($2) AND accepted_at IS NULL`,
		inv.TeamID, inv.Email); err != nil {
		return Invitation{}, err
	}
	out, err := scanInvitation(db.QueryRow(ctx, `
		INSERT INTO invitations (team_id, email, role, token_hash, invited_by, created_at, expires_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING `+invitationColumns,
		inv.TeamID, inv.Email, inv.Role, hash, inv.InvitedBy, inv.CreatedAt, inv.ExpiresAt))
	return out, err
}

func (store) pendingInvitations(ctx context.Context, db postgres.DB, teamID uuid.UUID, now time.Time) ([]Invitation, error) {
	rows, err := db.Query(ctx, `
		SELECT `+invitationColumns+` FROM invitations
		WHERE team_id = $1 AND accepted_at IS NULL AND expires_at > $2
		ORDER BY created_at DESC, email`, teamID, now)
	if err != nil {
		return nil, err
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Invitation, error) { return scanInvitation(r) })
	return out, err
}

// deleteInvitation deletes a pending invitation and returns its address.
func (store) deleteInvitation(ctx context.Context, db postgres.DB, teamID, id uuid.UUID) (string, error) {
	var email string
	err := db.QueryRow(ctx, `DELETE FROM invitations WHERE team_id = $1 AND id = $2 AND accepted_at IS NULL RETURNING email`, teamID, id).Scan(&email)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", apperr.NotFoundf("No pending invitation with this id in the team.")
	}
	return email, err
}

// invitationByHash returns the pending, unexpired invitation of a token;
// lock takes its row lock for accepting it.
func (store) invitationByHash(ctx context.Context, db postgres.DB, hash []byte, now time.Time, lock bool) (Invitation, error) {
	q := `SELECT ` + invitationColumns + ` FROM invitations WHERE token_hash = $1 AND accepted_at IS NULL AND expires_at > $2`
	if lock {
		q += ` FOR UPDATE`
	}
	inv, err := scanInvitation(db.QueryRow(ctx, q, hash, now))
	if errors.Is(err, pgx.ErrNoRows) {
		return Invitation{}, errInvitationGone
	}
	return inv, err
}

func (store) invitationView(ctx context.Context, db postgres.DB, hash []byte, now time.Time) (InvitationView, error) {
	var v InvitationView
	err := db.QueryRow(ctx, `
		SELECT t.id, t.name, i.email, i.role, i.expires_at,
		       EXISTS (SELECT 1 FROM users u WHERE lower(u.email) = lower(i.email))
		FROM invitations i JOIN teams t ON t.id = i.team_id
		WHERE i.token_hash = $1 AND i.accepted_at IS NULL AND i.expires_at > $2`, hash, now).
		Scan(&v.Team.ID, &v.Team.Name, &v.Email, &v.Role, &v.ExpiresAt, &v.AccountExists)
	return v, err
}

func (store) markAccepted(ctx context.Context, db postgres.DB, id uuid.UUID, now time.Time) error {
	_, err := db.Exec(ctx, `UPDATE invitations SET accepted_at = $2 WHERE id = $1`, id, now)
	return err
}

// Passwords.

func (store) passwordHash(ctx context.Context, db postgres.DB, userID uuid.UUID) (string, error) {
	var hash string
	err := db.QueryRow(ctx, `SELECT password_hash FROM users WHERE id = $1`, userID).Scan(&hash)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", apperr.New(apperr.Unauthorized, "The account of this token no longer exists.")
	}
	return hash, err
}

// setPassword stores a new password hash and drops any pending reset.
func (store) setPassword(ctx context.Context, db postgres.DB, userID uuid.UUID, hash string) (User, error) {
	var u User
	err := db.QueryRow(ctx, `
		WITH resets AS (DELETE FROM password_resets WHERE user_id = $1)
		UPDATE users SET password_hash = $2, updated_at = now() WHERE id = $1
		RETURNING id, email, name, created_at`, userID, hash).Scan(&u.ID, &u.Email, &u.Name, &u.CreatedAt)
	return u, err
}

// replaceReset stores the user's one live reset token.
func (store) replaceReset(ctx context.Context, db postgres.DB, userID uuid.UUID, hash []byte, now, exp time.Time) error {
	_, err := db.Exec(ctx, `
		INSERT INTO password_resets (user_id, token_hash, created_at, expires_at) VALUES ($1, $2, $3, $4)
		ON CONFLICT (user_id) DO UPDATE SET token_hash = EXCLUDED.token_hash, created_at = EXCLUDED.created_at, expires_at = EXCLUDED.expires_at`,
		userID, hash, now, exp)
	return err
}

// resetUser returns the user of a live reset token; consume deletes the
// token in the same statement, so it works once.
func (store) resetUser(ctx context.Context, db postgres.DB, hash []byte, now time.Time, consume bool) (uuid.UUID, error) {
	q := `SELECT user_id FROM password_resets WHERE token_hash = $1 AND expires_at > $2`
	if consume {
		q = `DELETE FROM password_resets WHERE token_hash = $1 AND expires_at > $2 RETURNING user_id`
	}
	var id uuid.UUID
	err := db.QueryRow(ctx, q, hash, now).Scan(&id)
	if errors.Is(err, pgx.ErrNoRows) {
		return uuid.Nil, errResetGone
	}
	return id, err
}

// prune deletes what can no longer be used: ended sessions, used or dead
// links, single sign-ons never completed, throttle windows that have
// passed.
func (store) prune(ctx context.Context, db postgres.DB, now time.Time) error {
	_, err := db.Exec(ctx, `
		WITH s AS (DELETE FROM sessions WHERE expires_at < $1),
		     i AS (DELETE FROM invitations WHERE expires_at < $2 OR accepted_at < $2),
		     r AS (DELETE FROM password_resets WHERE expires_at < $1),
		     c AS (DELETE FROM mfa_challenges WHERE expires_at < $1),
		     o AS (DELETE FROM sso_states WHERE expires_at < $1)
		DELETE FROM auth_throttles WHERE window_start < $3`,
		now, now.Add(-30*24*time.Hour), now.Add(-max(loginWindow, resetWindow)))
	return err
}
