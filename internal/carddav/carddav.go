// Package carddav serves every book a user can read as an address book to
// phones and desktop clients (CardDAV: RFC 6352, discovery by RFC 6764,
// sync-collection by RFC 6578), signed in with HTTP Basic: the account's
// email and an app password. It is built on emersion/go-webdav's carddav
// handler (GET, PUT, DELETE, OPTIONS, addressbook-multiget and
// addressbook-query, vCard parsing and matching) with this package's
// backend over the books and contacts services; what that library's
// v0.6.0 lacks is here: PROPFIND with the properties clients sync by
// (getctag, sync-token, getetag, privileges, supported reports), the
// sync-collection report with deletions, vCard 3.0 or 4.0 as the client
// asks, conditional DELETE, and errors that say no more than they should.
package carddav

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/emersion/go-webdav/carddav"
	"github.com/google/uuid"

	"github.com/contactbook/contactbook/internal/access"
	"github.com/contactbook/contactbook/internal/accounts"
	"github.com/contactbook/contactbook/internal/auth"
	"github.com/contactbook/contactbook/internal/books"
	"github.com/contactbook/contactbook/internal/contacts"
	"github.com/contactbook/contactbook/internal/vcards"
)

// Root is where the address books are served; WellKnown redirects there.
const (
	Root      = "/dav/"
	WellKnown = "/.well-known/carddav"
)

// Limits of a request.
const (
	// MaxCardSize bounds one card a client writes (photos included).
	MaxCardSize = 1 << 20
	// maxReportSize bounds a REPORT or PROPFIND body (a multiget of a
	// 10,000-contact book's hrefs is about 1 MB).
	maxReportSize = 16 << 20
)

// Accounts signs clients in and lists a user's teams.
type Accounts interface {
	AuthenticateAppPassword(ctx context.Context, email, password, clientIP string) (*auth.Actor, error)
	Teams(ctx context.Context, userID uuid.UUID) ([]accounts.TeamRole, error)
}

// Books lists and resolves books.
type Books interface {
	List(ctx context.Context, actor *auth.Actor, teamID uuid.UUID) ([]books.Book, error)
	Resolve(ctx context.Context, actor *auth.Actor, bookID uuid.UUID, as books.Addressing) (books.Book, error)
	Fields(ctx context.Context, actor *auth.Actor, b books.Book) ([]books.Field, error)
}

// Contacts reads and writes a book's cards.
type Contacts interface {
	CardToken(ctx context.Context, sc access.Scope) (int64, error)
	CardRefs(ctx context.Context, sc access.Scope) ([]contacts.CardRef, int64, error)
	Cards(ctx context.Context, sc access.Scope, names []string) ([]contacts.Card, error)
	CardChanges(ctx context.Context, sc access.Scope, token int64) (contacts.CardChanges, error)
	PutCard(ctx context.Context, sc access.Scope, in contacts.CardInput) (contacts.CardRef, bool, error)
	DeleteCard(ctx context.Context, sc access.Scope, name string, ifMatch *int64) error
}

// Deps are what the handler needs.
type Deps struct {
	Accounts Accounts
	Books    Books
	Contacts Contacts
	Log      *slog.Logger
	// ClientIP is the address a sign-in is throttled by.
	ClientIP func(r *http.Request) string
}

// Handler serves WellKnown and everything under Root.
type Handler struct {
	d   Deps
	lib *carddav.Handler
}

// New builds the handler.
func New(d Deps) *Handler {
	h := &Handler{d: d}
	h.lib = &carddav.Handler{Backend: &backend{h: h}, Prefix: strings.TrimSuffix(Root, "/")}
	return h
}

// session is one request's caller and what the backend needs of the
// request itself (the library hands the backend only a context).
type session struct {
	actor   *auth.Actor
	version string // of the vCards answered
	ifMatch string
	// updated tells that a PUT replaced a card (204, not 201).
	updated bool
	// cards are the cards a multiget names, loaded up front in one
	// statement per book, by path.
	cards map[string]*carddav.AddressObject
	// scopes are the books resolved so far.
	scopes map[uuid.UUID]access.Scope
	fields map[uuid.UUID]map[string]string
}

type sessionKey struct{}

func sessionOf(ctx context.Context) *session {
	s, _ := ctx.Value(sessionKey{}).(*session)
	return s
}

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == WellKnown || r.URL.Path == WellKnown+"/" {
		http.Redirect(w, r, Root, http.StatusMovedPermanently)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	email, password, ok := r.BasicAuth()
	if !ok {
		challenge(w, "Sign in with your account's email and an app password (create one in the dashboard).")
		return
	}
	ip := ""
	if h.d.ClientIP != nil {
		ip = h.d.ClientIP(r)
	}
	actor, err := h.d.Accounts.AuthenticateAppPassword(r.Context(), email, password, ip)
	if err != nil {
		var th *accounts.ThrottledError
		switch {
		case errors.As(err, &th):
			w.Header().Set("Retry-After", strconv.Itoa(int(th.RetryAfter()/time.Second)))
			http.Error(w, th.Error(), http.StatusTooManyRequests)
		case isUnauthorized(err):
			challenge(w, "The email or app password is wrong; your account password does not work here, create an app password in the dashboard.")
		default:
			h.serveError(w, r, err)
		}
		return
	}
	s := &session{actor: actor, version: acceptVersion(r.Header.Get("Accept")), ifMatch: r.Header.Get("If-Match"),
		scopes: map[uuid.UUID]access.Scope{}, fields: map[uuid.UUID]map[string]string{}}
	r = r.WithContext(context.WithValue(r.Context(), sessionKey{}, s))
	p := h.parse(s, r.URL.Path)
	if p.kind == pathNone {
		http.Error(w, "Nothing is here: address books live under "+h.home(s)+".", http.StatusNotFound)
		return
	}
	switch r.Method {
	case "PROPFIND":
		err = h.propfind(w, r, s, p)
	case "REPORT":
		err = h.report(w, r, s, p)
	case http.MethodPut:
		if _, err = readBody(w, r, MaxCardSize); err == nil {
			h.lib.ServeHTTP(&putWriter{ResponseWriter: w, s: s}, r)
		}
	case "PROPPATCH", "MKCOL", "COPY", "MOVE", "LOCK", "UNLOCK":
		http.Error(w, "Address books are managed in the dashboard.", http.StatusForbidden)
	default:
		h.lib.ServeHTTP(w, r)
	}
	if err != nil {
		h.serveError(w, r, err)
	}
}

func challenge(w http.ResponseWriter, msg string) {
	w.Header().Set("WWW-Authenticate", `Basic realm="contactbook", charset="UTF-8"`)
	http.Error(w, msg, http.StatusUnauthorized)
}

// putWriter answers 204 for a PUT that replaced a card (the library
// always says 201).
type putWriter struct {
	http.ResponseWriter
	s *session
}

func (p *putWriter) WriteHeader(code int) {
	if code == http.StatusCreated && p.s.updated {
		code = http.StatusNoContent
		p.Header().Del("Location")
	}
	p.ResponseWriter.WriteHeader(code)
}

// acceptVersion is the vCard version an Accept header asks for: 4.0 when
// it names text/vcard;version=4.0, else 3.0 (what every client reads).
func acceptVersion(accept string) string {
	for _, part := range strings.Split(accept, ",") {
		if strings.Contains(part, "vcard") && strings.Contains(strings.ReplaceAll(part, " ", ""), "version=4.0") {
			return vcards.Version4
		}
	}
	return vcards.Version3
}

// The paths: Root, the principal Root+<user id>/, its home set
// .../books/, a book .../books/<book id>/ and a card .../<name>.
type pathKind int

const (
	pathNone pathKind = iota
	pathRoot
	pathPrincipal
	pathHome
	pathBook
	pathCard
)

type davPath struct {
	kind   pathKind
	bookID uuid.UUID
	name   string
}

func (h *Handler) principal(s *session) string { return Root + s.actor.UserID.String() + "/" }
func (h *Handler) home(s *session) string      { return h.principal(s) + "books/" }
func (h *Handler) bookPath(s *session, id uuid.UUID) string {
	return h.home(s) + id.String() + "/"
}
func (h *Handler) cardPath(s *session, bookID uuid.UUID, name string) string {
	return h.bookPath(s, bookID) + name
}

// parse reads a path of the caller's (any other is pathNone).
func (h *Handler) parse(s *session, p string) davPath {
	if p == Root || p+"/" == Root {
		return davPath{kind: pathRoot}
	}
	rest, ok := strings.CutPrefix(p, h.principal(s))
	if !ok {
		if p+"/" == h.principal(s) {
			return davPath{kind: pathPrincipal}
		}
		return davPath{}
	}
	parts := strings.Split(rest, "/")
	switch {
	case rest == "":
		return davPath{kind: pathPrincipal}
	case parts[0] != "books":
		return davPath{}
	case len(parts) == 1 || (len(parts) == 2 && parts[1] == ""):
		return davPath{kind: pathHome}
	}
	id, err := uuid.Parse(parts[1])
	if err != nil {
		return davPath{}
	}
	switch {
	case len(parts) == 2 || (len(parts) == 3 && parts[2] == ""):
		return davPath{kind: pathBook, bookID: id}
	case len(parts) == 3 && validName(parts[2]):
		return davPath{kind: pathCard, bookID: id, name: parts[2]}
	}
	return davPath{}
}

// validName is a resource name a card may have.
func validName(n string) bool {
	return n != "" && n != "." && n != ".." && len(n) <= 255 && !strings.ContainsAny(n, "\x00\r\n")
}

// href escapes a path for an answer.
func href(p string) string { return (&url.URL{Path: p}).EscapedPath() }

// scope resolves a book of the caller's (cached for the request).
func (h *Handler) scope(ctx context.Context, s *session, id uuid.UUID) (access.Scope, error) {
	if sc, ok := s.scopes[id]; ok {
		return sc, nil
	}
	b, err := h.d.Books.Resolve(ctx, s.actor, id, books.AsResource)
	if err != nil {
		return access.Scope{}, err
	}
	sc := access.InBook(s.actor, b)
	s.scopes[id] = sc
	return sc, nil
}

// fieldTypes are the book's custom field types by key (how custom values
// are written).
func (h *Handler) fieldTypes(ctx context.Context, s *session, sc access.Scope) (map[string]string, error) {
	if t, ok := s.fields[sc.Book.ID]; ok {
		return t, nil
	}
	fs, err := h.d.Books.Fields(ctx, sc.Actor, sc.Book)
	if err != nil {
		return nil, err
	}
	t := make(map[string]string, len(fs))
	for _, f := range fs {
		t[f.Key] = string(f.Type)
	}
	s.fields[sc.Book.ID] = t
	return t, nil
}

// readBody reads a request body of at most limit bytes, and gives it back
// to the request.
func readBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, error) {
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		return nil, errTooLarge
	}
	r.Body = io.NopCloser(bytes.NewReader(b))
	return b, nil
}

// requestedVersion is the version an address-data element of a REPORT
// asks for, if any.
func requestedVersion(body []byte) string {
	dec := xml.NewDecoder(bytes.NewReader(body))
	for {
		tok, err := dec.Token()
		if err != nil {
			return ""
		}
		if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "address-data" {
			for _, a := range se.Attr {
				if a.Name.Local == "version" && a.Value == vcards.Version4 {
					return vcards.Version4
				}
				if a.Name.Local == "version" && a.Value == vcards.Version3 {
					return vcards.Version3
				}
			}
		}
	}
}
