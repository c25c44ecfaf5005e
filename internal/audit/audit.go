// Package audit records who did what in a team: one row per action, written
// through the caller's transaction so that an entry exists exactly when the
// change it describes was committed. Entries are only ever inserted; no
// operation of the service changes or deletes one except retention, which
// removes entries older than the kept period.
package audit

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/contactbook/contactbook/internal/auth"
	"github.com/contactbook/contactbook/internal/postgres"
)

// ActorType says who acted.
type ActorType string

// The kinds of actor.
const (
	ActorUser   ActorType = "user"
	ActorAPIKey ActorType = "api_key"
	ActorSystem ActorType = "system"
)

// ActorTypes is every kind of actor an entry may name.
var ActorTypes = []ActorType{ActorUser, ActorAPIKey, ActorSystem}

// Actor is who acted: a user, an API key or the service itself.
type Actor struct {
	Type ActorType
	ID   uuid.UUID // uuid.Nil for the system
	Name string    // a user's email or a key's name, when known
}

// System is the service acting on its own (a periodic job, an automatic
// switch-off).
func System() Actor { return Actor{Type: ActorSystem} }

// From is the actor of an authenticated request.
func From(a *auth.Actor) Actor {
	switch {
	case a == nil:
		return System()
	case a.IsKey():
		return Actor{Type: ActorAPIKey, ID: a.KeyID}
	default:
		return Actor{Type: ActorUser, ID: a.UserID}
	}
}

// Origin is where a request came from; empty for the system.
type Origin struct {
	IP        string
	UserAgent string
}

type originKey struct{}

// maxUserAgent bounds what an entry keeps of a client's User-Agent.
const maxUserAgent = 512

// WithOrigin stores the request's origin in ctx, where Record finds it for
// an entry that names none: the services that record entries need not
// carry the client's address through every call.
func WithOrigin(ctx context.Context, o Origin) context.Context {
	if len(o.UserAgent) > maxUserAgent {
		o.UserAgent = strings.ToValidUTF8(o.UserAgent[:maxUserAgent], "")
	}
	return context.WithValue(ctx, originKey{}, o)
}

// OriginFrom is the origin WithOrigin stored, empty outside a request.
func OriginFrom(ctx context.Context) Origin {
	o, _ := ctx.Value(originKey{}).(Origin)
	return o
}

// Entry is one recorded action. Details must never hold a secret (a key,
// a webhook secret, a provider key, a TOTP secret or a recovery code).
type Entry struct {
	TeamID     uuid.UUID
	Actor      Actor
	Action     string // e.g. "webhook.disabled"
	TargetType string // e.g. "webhook"
	TargetID   string
	Origin     Origin
	Details    map[string]any
}

// Record writes e through db, which should be the transaction of the
// change it records. An entry without an origin takes the request's
// (WithOrigin). A user or key actor without a name gets it in the same
// statement from actor_names, the accounts package's read model of its
// users and keys (migration 00043).
func Record(ctx context.Context, db postgres.DB, e Entry) error {
	if e.Origin == (Origin{}) {
		e.Origin = OriginFrom(ctx)
	}
	details := e.Details
	if details == nil {
		details = map[string]any{}
	}
	raw, err := json.Marshal(details)
	if err != nil {
		return fmt.Errorf("audit: details of %s: %w", e.Action, err)
	}
	var actorID *uuid.UUID
	if e.Actor.ID != uuid.Nil {
		actorID = &e.Actor.ID
	}
	_, err = db.Exec(ctx, `
		INSERT INTO audit_log (team_id, actor_type, actor_id, actor_name, action, target_type, target_id, ip, user_agent, details)
		VALUES (@team_id, @actor_type, @actor_id,
		        COALESCE(NULLIF(@actor_name, ''),
		                 (SELECT n.name FROM actor_names n WHERE n.actor_type = @actor_type::text AND n.id = @actor_id), ''),
		        @action, @target_type, @target_id, @ip, @user_agent, @details)`,
		pgx.StrictNamedArgs{
			"team_id": e.TeamID, "actor_type": string(e.Actor.Type), "actor_id": actorID, "actor_name": e.Actor.Name,
			"action": e.Action, "target_type": e.TargetType, "target_id": e.TargetID,
			"ip": e.Origin.IP, "user_agent": e.Origin.UserAgent, "details": raw,
		})
	return err
}
