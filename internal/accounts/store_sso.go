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

// Single sign-on: sso_configs, sso_domains, sso_states.

const ssoColumns = `c.team_id, c.issuer, c.client_id, c.client_secret_sealed,
	ARRAY(SELECT d.domain FROM sso_domains d WHERE d.team_id = c.team_id ORDER BY d.domain),
	c.default_role, c.groups_claim, c.role_map, c.enforce, c.created_at, c.updated_at`

func scanSSO(row pgx.Row) (ssoConfig, error) {
	var c ssoConfig
	err := row.Scan(&c.TeamID, &c.Issuer, &c.ClientID, &c.SecretSealed, &c.AllowedDomains,
		&c.DefaultRole, &c.GroupsClaim, &c.RoleMap, &c.Enforce, &c.CreatedAt, &c.UpdatedAt)
	return c, err
}

func (store) ssoConfig(ctx context.Context, db postgres.DB, teamID uuid.UUID) (ssoConfig, error) {
	return scanSSO(db.QueryRow(ctx, `SELECT `+ssoColumns+` FROM sso_configs c WHERE c.team_id = $1`, teamID))
}

func (store) ssoConfigByDomain(ctx context.Context, db postgres.DB, domain string) (ssoConfig, error) {
	return scanSSO(db.QueryRow(ctx, `
		SELECT `+ssoColumns+` FROM sso_domains d0 JOIN sso_configs c ON c.team_id = d0.team_id
		WHERE d0.domain = $1`, domain))
}

// saveSSOConfig inserts or replaces the team's configuration and its
// domains. A domain another team already signs in with is a CONFLICT
// naming allowed_domains.
func (store) saveSSOConfig(ctx context.Context, db postgres.DB, c ssoConfig, now time.Time) (ssoConfig, error) {
	_, err := db.Exec(ctx, `
		INSERT INTO sso_configs (team_id, issuer, client_id, client_secret_sealed, default_role, groups_claim, role_map, enforce, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9)
		ON CONFLICT (team_id) DO UPDATE SET issuer = EXCLUDED.issuer, client_id = EXCLUDED.client_id,
			client_secret_sealed = EXCLUDED.client_secret_sealed, default_role = EXCLUDED.default_role,
			groups_claim = EXCLUDED.groups_claim, role_map = EXCLUDED.role_map, enforce = EXCLUDED.enforce,
			updated_at = EXCLUDED.updated_at`,
		c.TeamID, c.Issuer, c.ClientID, c.SecretSealed, c.DefaultRole, c.GroupsClaim, c.RoleMap, c.Enforce, now)
	if err != nil {
		return ssoConfig{}, err
	}
	var taken string
	err = db.QueryRow(ctx, `
		SELECT d.domain FROM sso_domains d WHERE d.domain = ANY($2) AND d.team_id <> $1 LIMIT 1`, c.TeamID, c.AllowedDomains).Scan(&taken)
	if err == nil {
		return ssoConfig{}, apperr.New(apperr.Conflict, "`allowed_domains` holds %s, which another team already signs in with.", taken)
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return ssoConfig{}, err
	}
	_, err = db.Exec(ctx, `
		WITH dropped AS (DELETE FROM sso_domains WHERE team_id = $1 AND NOT (domain = ANY($2)))
		INSERT INTO sso_domains (domain, team_id) SELECT unnest($2::text[]), $1 ON CONFLICT (domain) DO NOTHING`,
		c.TeamID, c.AllowedDomains)
	if postgres.IsUniqueViolation(err, "") {
		return ssoConfig{}, apperr.New(apperr.Conflict, "`allowed_domains` holds a domain another team already signs in with.")
	}
	if err != nil {
		return ssoConfig{}, err
	}
	return scanSSO(db.QueryRow(ctx, `SELECT `+ssoColumns+` FROM sso_configs c WHERE c.team_id = $1`, c.TeamID))
}

func (store) deleteSSOConfig(ctx context.Context, db postgres.DB, teamID uuid.UUID) (bool, error) {
	tag, err := db.Exec(ctx, `DELETE FROM sso_configs WHERE team_id = $1`, teamID)
	return tag.RowsAffected() == 1, err
}

func (store) insertSSOState(ctx context.Context, db postgres.DB, hash []byte, teamID uuid.UUID, nonce, verifier string, now, expires time.Time) error {
	_, err := db.Exec(ctx, `
		INSERT INTO sso_states (state_hash, team_id, nonce, code_verifier, created_at, expires_at)
		VALUES ($1, $2, $3, $4, $5, $6)`, hash, teamID, nonce, verifier, now, expires)
	return err
}

type ssoState struct {
	teamID          uuid.UUID
	nonce, verifier string
}

// takeSSOState deletes the state and returns it when it has not expired:
// a state works once, whichever instance takes it.
func (store) takeSSOState(ctx context.Context, db postgres.DB, hash []byte, now time.Time) (ssoState, error) {
	var st ssoState
	var fresh bool
	err := db.QueryRow(ctx, `
		DELETE FROM sso_states WHERE state_hash = $1 RETURNING team_id, nonce, code_verifier, expires_at > $2`, hash, now).
		Scan(&st.teamID, &st.nonce, &st.verifier, &fresh)
	if err != nil {
		return ssoState{}, err
	}
	if !fresh {
		return ssoState{}, apperr.NotFoundf("This sign-in took longer than 10 minutes; start again.")
	}
	return st, nil
}
