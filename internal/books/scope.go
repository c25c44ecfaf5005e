package books

import (
	"context"

	"github.com/google/uuid"

	"github.com/contactbook/contactbook/internal/apperr"
	"github.com/contactbook/contactbook/internal/auth"
)

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
func (s *Service) Resolve(ctx context.Context, actor *auth.Actor, bookID uuid.UUID, as Addressing) (Book, error) {
	outsider := ErrBookForbidden
	if as == AsResource {
		outsider = errBookNotFound
	}
	b, err := s.st.book(ctx, s.db, bookID, false)
	if apperr.Is(err, apperr.NotFound) {
		return Book{}, outsider
	}
	if err != nil {
		return Book{}, err
	}
	if err := actor.Require(ctx, b.TeamID, auth.RoleViewer, outsider); err != nil {
		return Book{}, err
	}
	return b, nil
}
