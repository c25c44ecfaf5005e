package books

import (
	"context"

	"github.com/google/uuid"

	"github.com/contactbook/contactbook/internal/apperr"
	"github.com/contactbook/contactbook/internal/auth"
)

// Scope is what one request acts as and works in: its actor and, on a
// route that works in a book, that book, with the actor's membership of
// the book's team already proven (Service.Resolve). Services take a Scope
// instead of a book id, so access to the book is checked once per request
// and never again below it; what remains for a service is the role its
// operation needs (Require).
type Scope struct {
	Actor *auth.Actor
	// Book is the book the request works in; zero when the route names
	// none (InBook).
	Book Book
}

// InBook reports whether the request works in a book.
func (sc Scope) InBook() bool { return sc.Book.ID != uuid.Nil }

// Require checks that the actor holds at least min in the book's team. The
// actor's role was looked up when the book was resolved (Actor memoises
// it), so this costs no query. A scope without a book is refused as the
// server's own error: a service that needs a book was reached by a route
// registered without one.
func (sc Scope) Require(ctx context.Context, min auth.Role) error {
	if !sc.InBook() {
		return apperr.New(apperr.Internal, "a book-scoped operation was called without a book")
	}
	return sc.Actor.Require(ctx, sc.Book.TeamID, min, ErrBookForbidden)
}

// Addressing is what the book is to a request; it decides what an
// outsider learns.
type Addressing int

const (
	// AsContext is the book a request works in: named by X-Book-ID
	// (/contacts, /campaigns, ...) or in the path of a book's imports and
	// exports. An unknown book or one of another team answers 403
	// FORBIDDEN, as the API reference says.
	AsContext Addressing = iota + 1
	// AsResource is the book a request reads or changes itself
	// (/books/{id}, its labels and fields): an unknown book or one of
	// another team answers 404 NOT_FOUND, so its existence is not revealed.
	AsResource
)

// Resolve loads the book a request names and proves the actor is a member
// of its team (any role): the one access check of a book-scoped request.
// The book's ContactCount is not loaded.
func (s *Service) Resolve(ctx context.Context, actor *auth.Actor, bookID uuid.UUID, as Addressing) (Scope, error) {
	outsider := ErrBookForbidden
	if as == AsResource {
		outsider = errBookNotFound
	}
	b, err := s.st.book(ctx, s.db, bookID, false)
	if apperr.Is(err, apperr.NotFound) {
		return Scope{}, outsider
	}
	if err != nil {
		return Scope{}, err
	}
	if err := actor.Require(ctx, b.TeamID, auth.RoleViewer, outsider); err != nil {
		return Scope{}, err
	}
	return Scope{Actor: actor, Book: b}, nil
}
