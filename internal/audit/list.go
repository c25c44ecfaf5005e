package audit

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/contactbook/contactbook/internal/apperr"
	"github.com/contactbook/contactbook/internal/auth"
	"github.com/contactbook/contactbook/internal/postgres"
)

// Service reads a team's audit log for its admins. It has no operation
// that changes or deletes an entry.
type Service struct {
	db postgres.DB
}

// NewService returns the reader over db.
func NewService(db postgres.DB) *Service { return &Service{db: db} }

// ActorView is who acted, as the API shows it.
type ActorView struct {
	Type ActorType  `json:"type"`
	ID   *uuid.UUID `json:"id"`
	Name string     `json:"name"`
}

// TargetView is what an action was done to.
type TargetView struct {
	Type string `json:"type"`
	ID   string `json:"id"`
}

// View is one entry as the API shows it.
type View struct {
	ID        uuid.UUID       `json:"id"`
	At        time.Time       `json:"at"`
	Actor     ActorView       `json:"actor"`
	Action    string          `json:"action"`
	Target    TargetView      `json:"target"`
	IP        string          `json:"ip"`
	UserAgent string          `json:"user_agent"`
	Details   json.RawMessage `json:"details"`
}

// Filter narrows a team's log. Zero fields filter nothing.
type Filter struct {
	Action  string
	ActorID uuid.UUID
	Since   time.Time // inclusive
	Until   time.Time // exclusive
	Limit   int       // 1..MaxLimit; 0 is DefaultLimit
	Cursor  string    // meta.next_cursor of the previous page
}

// Page sizes of the list.
const (
	DefaultLimit = 50
	MaxLimit     = 200
)

// cursor is the position after the last entry of a page, newest first:
// its time and id. The client gets it opaque.
type cursor struct {
	At time.Time `json:"a"`
	ID uuid.UUID `json:"i"`
}

var errBadCursor = apperr.Invalidf("`cursor` is not valid: send back meta.next_cursor of the previous page as it was given.")

func (c cursor) encode() string {
	b, _ := json.Marshal(c)
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodeCursor(s string) (cursor, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return cursor{}, errBadCursor
	}
	var c cursor
	if err := json.Unmarshal(b, &c); err != nil || c.ID == uuid.Nil {
		return cursor{}, errBadCursor
	}
	return c, nil
}

var teamNotFound = apperr.NotFoundf("No team with this id.")

// List returns a page of teamID's entries matching f, newest first, and
// the cursor of the next page ("" on the last). Admins only.
func (s *Service) List(ctx context.Context, actor *auth.Actor, teamID uuid.UUID, f Filter) ([]View, string, error) {
	if err := actor.Require(ctx, teamID, auth.RoleAdmin, teamNotFound); err != nil {
		return nil, "", err
	}
	if f.Limit <= 0 {
		f.Limit = DefaultLimit
	}
	f.Limit = min(f.Limit, MaxLimit)
	where, args, err := f.where(teamID)
	if err != nil {
		return nil, "", err
	}
	args["limit"] = f.Limit + 1
	rows, err := s.db.Query(ctx, selectEntries+where+` ORDER BY at DESC, id DESC LIMIT @limit`, args)
	if err != nil {
		return nil, "", err
	}
	out, err := pgx.CollectRows(rows, scanView)
	if err != nil {
		return nil, "", err
	}
	next := ""
	if len(out) > f.Limit {
		out = out[:f.Limit]
		last := out[len(out)-1]
		next = cursor{At: last.At, ID: last.ID}.encode()
	}
	return out, next, nil
}

// Export calls each for every entry of teamID matching f (limit and cursor
// aside), newest first, streaming from one query. Admins only; the check
// happens before each is first called, so an export that is refused has
// written nothing.
func (s *Service) Export(ctx context.Context, actor *auth.Actor, teamID uuid.UUID, f Filter, each func(View) error) error {
	if err := actor.Require(ctx, teamID, auth.RoleAdmin, teamNotFound); err != nil {
		return err
	}
	f.Cursor = ""
	where, args, err := f.where(teamID)
	if err != nil {
		return err
	}
	rows, err := s.db.Query(ctx, selectEntries+where+` ORDER BY at DESC, id DESC`, args)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		v, err := scanView(rows)
		if err != nil {
			return err
		}
		if err := each(v); err != nil {
			return err
		}
	}
	return rows.Err()
}

const selectEntries = `
	SELECT id, at, actor_type, actor_id, actor_name, action, target_type, target_id, ip, user_agent, details
	FROM audit_log `

func scanView(row pgx.CollectableRow) (View, error) {
	var v View
	var details []byte
	err := row.Scan(&v.ID, &v.At, &v.Actor.Type, &v.Actor.ID, &v.Actor.Name, &v.Action,
		&v.Target.Type, &v.Target.ID, &v.IP, &v.UserAgent, &details)
	v.Details = details
	return v, err
}

// where is the WHERE clause of f in teamID, with its named arguments.
func (f Filter) where(teamID uuid.UUID) (string, pgx.NamedArgs, error) {
	conds := []string{"team_id = @team_id"}
	args := pgx.NamedArgs{"team_id": teamID}
	if f.Action != "" {
		conds = append(conds, "action = @action")
		args["action"] = f.Action
	}
	if f.ActorID != uuid.Nil {
		conds = append(conds, "actor_id = @actor_id")
		args["actor_id"] = f.ActorID
	}
	if !f.Since.IsZero() {
		conds = append(conds, "at >= @since")
		args["since"] = f.Since
	}
	if !f.Until.IsZero() {
		conds = append(conds, "at < @until")
		args["until"] = f.Until
	}
	if f.Cursor != "" {
		c, err := decodeCursor(f.Cursor)
		if err != nil {
			return "", nil, err
		}
		conds = append(conds, "(at, id) < (@cursor_at, @cursor_id)")
		args["cursor_at"], args["cursor_id"] = c.At, c.ID
	}
	return "WHERE " + strings.Join(conds, " AND "), args, nil
}
