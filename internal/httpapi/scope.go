package httpapi

import (
	"context"
	"net/http"
	"strings"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"

	"github.com/contactbook/contactbook/internal/access"
	"github.com/contactbook/contactbook/internal/apperr"
	"github.com/contactbook/contactbook/internal/auth"
	"github.com/contactbook/contactbook/internal/books"
	"github.com/contactbook/contactbook/internal/contacts"
)

// handler is the one shape of every endpoint: it gets the request's scope
// (access.Scope: the actor and, on a book-scoped route, the book with the
// actor's membership proven) and returns its error instead of writing it.
// Unauthenticated routes get a zero scope.
type handler func(w http.ResponseWriter, r *http.Request, sc access.Scope) error

// h serves a handler: it hands over the scope the middleware built (or
// just the actor on a route that works in no book) and writes any error
// once, the same way.
func (s *Server) h(fn handler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		sc, ok := r.Context().Value(scopeKey{}).(access.Scope)
		if !ok {
			sc.Actor, _ = auth.FromContext(r.Context()) // nil on an unauthenticated route
		}
		if err := fn(w, r, sc); err != nil {
			writeError(w, r, s.log, err)
		}
	}
}

type scopeKey struct{}

// bookSource is where a route takes the book it works in from, and what
// an outsider is told. The rule, in one place: the collections of a book
// (/contacts, /campaigns, /campaign-templates, /suppressions, ...) name it
// in X-Book-ID; a book addressed by id is in the path (/books/{id}/...);
// a resource addressed by its own id (/campaigns/{id}/...) carries its
// book, and X-Book-ID, when sent, must be that book. A book the request
// works in that is not the caller's team's is 403 FORBIDDEN; the book
// itself (/books/{id}, its labels and fields), 404 NOT_FOUND. However it
// is named, the book is resolved once, here, before the handler reads
// anything else of the request.
type bookSource int

const (
	// bookInHeader: X-Book-ID is required; missing is 400 MISSING_BOOK,
	// malformed 400 INVALID_INPUT, a book that is not the caller's team's
	// (or no book) 403 FORBIDDEN.
	bookInHeader bookSource = iota + 1
	// bookInPath: the {id} of /books/{id}/imports, /export, ...: the book
	// the request works in, so an outsider gets 403 FORBIDDEN as for
	// X-Book-ID; malformed is 400 INVALID_INPUT.
	bookInPath
	// bookAddressed: the {id} of /books/{id}, its labels and fields: the
	// book is the resource, so an outsider gets 404 NOT_FOUND.
	bookAddressed
	// bookIfSent: X-Book-ID is optional and, when sent, resolved as
	// bookInHeader; without it the scope has no book.
	bookIfSent
)

// bookRouters are r with each book source's middleware: the route table
// registers a route on the one that says where its book comes from.
func (s *Server) bookRouters(r chi.Router) (inBook, inPathBook, theBook, maybeBook chi.Router) {
	return r.With(s.scoped(bookInHeader)), r.With(s.scoped(bookInPath)), r.With(s.scoped(bookAddressed)), r.With(s.scoped(bookIfSent))
}

// scoped is the middleware that resolves a route's book and puts the
// scope in the request's context. It runs after routing (chi runs the
// middlewares of With once the route matched), so path parameters are
// known, and after authentication, so the actor is.
func (s *Server) scoped(src bookSource) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			sc, err := s.resolveScope(r, src)
			if err != nil {
				writeError(w, r, s.log, err)
				return
			}
			next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), scopeKey{}, sc)))
		})
	}
}

func (s *Server) resolveScope(r *http.Request, src bookSource) (access.Scope, error) {
	a, err := auth.FromContext(r.Context())
	if err != nil {
		return access.Scope{}, err
	}
	var (
		bookID uuid.UUID
		as     = books.AsContext
	)
	switch src {
	case bookInPath:
		bookID, err = pathUUID(r, "id")
	case bookAddressed:
		bookID, err = pathUUID(r, "id")
		as = books.AsResource
	case bookIfSent:
		if strings.TrimSpace(r.Header.Get("X-Book-ID")) == "" {
			return access.Scope{Actor: a}, nil
		}
		bookID, err = bookHeader(r)
	default:
		bookID, err = bookHeader(r)
	}
	if err != nil {
		return access.Scope{}, err
	}
	b, err := s.books.Resolve(r.Context(), a, bookID, as)
	if err != nil {
		return access.Scope{}, err
	}
	return access.InBook(a, b), nil
}

// bookHeader parses X-Book-ID.
func bookHeader(r *http.Request) (uuid.UUID, error) {
	raw := strings.TrimSpace(r.Header.Get("X-Book-ID"))
	if raw == "" {
		return uuid.Nil, apperr.New(apperr.MissingBook, "The X-Book-ID header is required: send the id of the book to work in.")
	}
	id, err := uuid.Parse(raw)
	if err != nil {
		return uuid.Nil, apperr.Invalidf("The X-Book-ID header must be a book id (UUID).")
	}
	return id, nil
}

// inTeam is the middleware of the /teams/{team_id} routes: it proves once
// that the actor is a member of the path's team (any role; the service
// checks the role its operation needs) and puts the team's scope in the
// request's context. An outsider is told the team does not exist, before
// anything else of the request is read.
func (s *Server) inTeam(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sc, err := teamScope(r)
		if err != nil {
			writeError(w, r, s.log, err)
			return
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), scopeKey{}, sc)))
	})
}

func teamScope(r *http.Request) (access.Scope, error) {
	a, err := auth.FromContext(r.Context())
	if err != nil {
		return access.Scope{}, err
	}
	teamID, err := pathUUID(r, "team_id")
	if err != nil {
		return access.Scope{}, err
	}
	if err := a.Require(r.Context(), teamID, auth.RoleViewer, access.ErrTeamNotFound); err != nil {
		return access.Scope{}, err
	}
	return access.InTeam(a, teamID), nil
}

// bulkOp is one of the contacts service's bulk operations.
type bulkOp func(ctx context.Context, sc access.Scope, in contacts.BulkInput) (int, error)

// bulk is the handler of a bulk operation on the X-Book-ID book; it
// answers {data: {<count>: n}}.
func (s *Server) bulk(count string, op bulkOp) handler {
	return func(w http.ResponseWriter, r *http.Request, sc access.Scope) error {
		var in contacts.BulkInput
		if err := decodeJSON(w, r, &in); err != nil {
			return err
		}
		if err := s.bulkSegment(r, sc, &in); err != nil {
			return err
		}
		n, err := op(r.Context(), sc, in)
		if err != nil {
			return err
		}
		return data(w, http.StatusOK, map[string]int{count: n})
	}
}
