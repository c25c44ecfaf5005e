// Package access holds the scope of one request: who acts, in which team
// and, on a route in a book, in which book, with the actor's membership of
// that team proven once, by the HTTP layer's middleware, before any
// service runs. Services take the scope instead of team or book ids and
// ask it only for the role their operation needs.
package access

import (
	"context"

	"github.com/google/uuid"

	"github.com/contactbook/contactbook/internal/apperr"
	"github.com/contactbook/contactbook/internal/auth"
	"github.com/contactbook/contactbook/internal/books"
)

// Scope is what one request acts as and works in: its actor, the team
// and, on a route that works in a book, that book, with the actor's
// membership of the team already proven (books.Service.Resolve for a book, the
// HTTP layer for a /teams/{team_id} route). Services take a Scope instead
// of a team or book id, so access is checked once per request and never
// again below it; what remains for a service is the role its operation
// needs (Require).
type Scope struct {
	Actor *auth.Actor
	// Team is the team the request works in: the book's on a route in a
	// book; zero when the route names no team (InTeam).
	Team uuid.UUID
	// Book is the book the request works in; zero when the route names
	// none (InBook).
	Book books.Book
}

// InBook returns the scope of a request in the book b, whose team the
// actor was proven a member of.
func InBook(actor *auth.Actor, b books.Book) Scope {
	return Scope{Actor: actor, Team: b.TeamID, Book: b}
}

// InTeam returns the scope of a request in the team, which the actor was
// proven a member of.
func InTeam(actor *auth.Actor, team uuid.UUID) Scope { return Scope{Actor: actor, Team: team} }

// InBook reports whether the request works in a book.
func (sc Scope) InBook() bool { return sc.Book.ID != uuid.Nil }

// InTeam reports whether the request works in a team (every request in a
// book does).
func (sc Scope) InTeam() bool { return sc.Team != uuid.Nil }

// ErrTeamNotFound answers a team the actor is not a member of, as if it
// did not exist.
var ErrTeamNotFound = apperr.NotFoundf("No team with this id.")

// Require checks that the actor holds at least min in the scope's team.
// The actor's role was looked up when membership was proven (Actor
// memoises it), so this costs no query. A scope without a team is refused
// as the server's own error: a service that needs one was reached by a
// route registered without it.
func (sc Scope) Require(ctx context.Context, min auth.Role) error {
	switch {
	case sc.InBook():
		return sc.Actor.Require(ctx, sc.Book.TeamID, min, books.ErrBookForbidden)
	case sc.InTeam():
		return sc.Actor.Require(ctx, sc.Team, min, ErrTeamNotFound)
	}
	return apperr.New(apperr.Internal, "a team-scoped operation was called without a team")
}
