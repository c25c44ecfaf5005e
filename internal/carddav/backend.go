package carddav

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/emersion/go-vcard"
	"github.com/emersion/go-webdav"
	"github.com/emersion/go-webdav/carddav"

	"github.com/contactbook/contactbook/internal/access"
	"github.com/contactbook/contactbook/internal/apperr"
	"github.com/contactbook/contactbook/internal/books"
	"github.com/contactbook/contactbook/internal/contacts"
	"github.com/contactbook/contactbook/internal/validate"
	"github.com/contactbook/contactbook/internal/vcards"
)

// backend is the library's view of the books and contacts: the parts of
// CardDAV it serves itself (GET, PUT, DELETE, OPTIONS, multiget, query)
// call these.
type backend struct{ h *Handler }

var errNoBooks = webdav.NewHTTPError(http.StatusForbidden, errors.New("address books are managed in the dashboard"))

func (b *backend) CurrentUserPrincipal(ctx context.Context) (string, error) {
	return b.h.principal(sessionOf(ctx)), nil
}

func (b *backend) AddressBookHomeSetPath(ctx context.Context) (string, error) {
	return b.h.home(sessionOf(ctx)), nil
}

func (b *backend) ListAddressBooks(ctx context.Context) ([]carddav.AddressBook, error) {
	s := sessionOf(ctx)
	bs, err := b.h.readableBooks(ctx, s)
	if err != nil {
		return nil, b.davError(err, false)
	}
	out := make([]carddav.AddressBook, len(bs))
	for i, bk := range bs {
		out[i] = b.addressBook(s, bk)
	}
	return out, nil
}

func (b *backend) addressBook(s *session, bk books.Book) carddav.AddressBook {
	return carddav.AddressBook{Path: b.h.bookPath(s, bk.ID), Name: bk.Name, MaxResourceSize: MaxCardSize,
		SupportedAddressData: []carddav.AddressDataType{{ContentType: vcard.MIMEType, Version: vcards.Version3}, {ContentType: vcard.MIMEType, Version: vcards.Version4}}}
}

func (b *backend) GetAddressBook(ctx context.Context, path string) (*carddav.AddressBook, error) {
	s := sessionOf(ctx)
	sc, err := b.bookAt(ctx, s, path, pathBook)
	if err != nil {
		return nil, err
	}
	ab := b.addressBook(s, sc.Book)
	return &ab, nil
}

func (b *backend) CreateAddressBook(context.Context, *carddav.AddressBook) error { return errNoBooks }
func (b *backend) DeleteAddressBook(context.Context, string) error               { return errNoBooks }

// bookAt resolves the book of a path of kind (a book or a card in it).
func (b *backend) bookAt(ctx context.Context, s *session, path string, kind pathKind) (access.Scope, error) {
	p := b.h.parse(s, path)
	if p.kind != kind {
		return access.Scope{}, webdav.NewHTTPError(http.StatusNotFound, errors.New("no such address book or card"))
	}
	sc, err := b.h.scope(ctx, s, p.bookID)
	if err != nil {
		return access.Scope{}, b.davError(err, false)
	}
	return sc, nil
}

func (b *backend) GetAddressObject(ctx context.Context, path string, _ *carddav.AddressDataRequest) (*carddav.AddressObject, error) {
	s := sessionOf(ctx)
	if ao, ok := s.cards[path]; ok {
		return ao, nil
	}
	sc, err := b.bookAt(ctx, s, path, pathCard)
	if err != nil {
		return nil, err
	}
	aos, err := b.h.objects(ctx, s, sc, []string{b.h.parse(s, path).name})
	if err != nil {
		return nil, b.davError(err, false)
	}
	if len(aos) == 0 {
		return nil, webdav.NewHTTPError(http.StatusNotFound, errors.New("no such card"))
	}
	return &aos[0], nil
}

func (b *backend) ListAddressObjects(ctx context.Context, path string, _ *carddav.AddressDataRequest) ([]carddav.AddressObject, error) {
	s := sessionOf(ctx)
	sc, err := b.bookAt(ctx, s, path, pathBook)
	if err != nil {
		return nil, err
	}
	aos, err := b.h.objects(ctx, s, sc, nil)
	if err != nil {
		return nil, b.davError(err, false)
	}
	return aos, nil
}

// QueryAddressObjects matches the query (text matches on FN, EMAIL, TEL
// and any other property) against every card of the book as it is
// answered.
func (b *backend) QueryAddressObjects(ctx context.Context, path string, q *carddav.AddressBookQuery) ([]carddav.AddressObject, error) {
	all, err := b.ListAddressObjects(ctx, path, nil)
	if err != nil {
		return nil, err
	}
	var out []carddav.AddressObject
	for _, ao := range all {
		ok, err := match(q, ao.Card)
		if err != nil {
			return nil, webdav.NewHTTPError(http.StatusBadRequest, err)
		}
		if ok {
			out = append(out, ao)
		}
		if q.Limit > 0 && len(out) >= q.Limit {
			break
		}
	}
	return out, nil
}

func (b *backend) PutAddressObject(ctx context.Context, path string, card vcard.Card, opts *carddav.PutAddressObjectOptions) (*carddav.AddressObject, error) {
	s := sessionOf(ctx)
	sc, err := b.bookAt(ctx, s, path, pathCard)
	if err != nil {
		return nil, err
	}
	name := b.h.parse(s, path).name
	d := vcards.Decode(card, validate.TimeZone)
	if d.Problem != nil {
		return nil, b.davError(apperr.Invalidf("%s", d.Problem.Message), true)
	}
	in := contacts.CardInput{Name: name, Contact: d.Contact, Labels: d.Labels, Custom: d.Custom, FieldTypes: d.FieldTypes,
		IfNoneMatch: opts.IfNoneMatch.IsWildcard()}
	if opts.IfMatch.IsSet() {
		if opts.IfMatch.IsWildcard() {
			in.MustExist = true
		} else if in.IfMatch, err = version(string(opts.IfMatch)); err != nil {
			return nil, webdav.NewHTTPError(http.StatusPreconditionFailed, errors.New("the card has changed since you read it"))
		}
	}
	kept := vcard.Card{}
	for k, fs := range card {
		if k != vcard.FieldVersion && k != vcard.FieldProductID && k != vcard.FieldRevision {
			kept[k] = fs
		}
	}
	if in.Props, err = json.Marshal(kept); err != nil {
		return nil, b.davError(err, true)
	}
	if len(in.Props) > MaxCardSize {
		return nil, webdav.NewHTTPError(http.StatusRequestEntityTooLarge, errTooLarge)
	}
	ref, created, err := b.h.d.Contacts.PutCard(ctx, sc, in)
	if err != nil {
		return nil, b.davError(err, true)
	}
	s.updated = !created
	return &carddav.AddressObject{Path: b.h.cardPath(s, sc.Book.ID, ref.Name), ETag: etag(ref.Version)}, nil
}

func (b *backend) DeleteAddressObject(ctx context.Context, path string) error {
	s := sessionOf(ctx)
	sc, err := b.bookAt(ctx, s, path, pathCard)
	if err != nil {
		return err
	}
	var ifMatch *int64
	if m := webdav.ConditionalMatch(s.ifMatch); m.IsSet() && !m.IsWildcard() {
		if ifMatch, err = version(s.ifMatch); err != nil {
			return webdav.NewHTTPError(http.StatusPreconditionFailed, errors.New("the card has changed since you read it"))
		}
	}
	if err := b.h.d.Contacts.DeleteCard(ctx, sc, b.h.parse(s, path).name, ifMatch); err != nil {
		return b.davError(err, false)
	}
	return nil
}

// etag is a card version as an ETag (strong: the card's bytes change
// only with it).
func etag(v int64) string { return strconv.FormatInt(v, 10) }

// version reads an ETag of ours (quoted or not, weak or strong).
func version(tag string) (*int64, error) {
	tag = strings.TrimPrefix(strings.TrimSpace(tag), "W/")
	v, err := strconv.ParseInt(strings.Trim(tag, `"`), 10, 64)
	if err != nil {
		return nil, err
	}
	return &v, nil
}

// readableBooks lists every book of every team of the user that the user
// may read (a team requiring two-factor sign-in of a member without it
// lists none).
func (h *Handler) readableBooks(ctx context.Context, s *session) ([]books.Book, error) {
	teams, err := h.d.Accounts.Teams(ctx, s.actor.UserID)
	if err != nil {
		return nil, err
	}
	var out []books.Book
	for _, t := range teams {
		bs, err := h.d.Books.List(ctx, s.actor, t.ID)
		if apperr.Is(err, apperr.TwoFactorRequired) || apperr.Is(err, apperr.NotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, bs...)
	}
	return out, nil
}

// objects loads the book's cards of names (all when nil), answered in the
// session's vCard version.
func (h *Handler) objects(ctx context.Context, s *session, sc access.Scope, names []string) ([]carddav.AddressObject, error) {
	cards, err := h.d.Contacts.Cards(ctx, sc, names)
	if err != nil {
		return nil, err
	}
	types, err := h.fieldTypes(ctx, s, sc)
	if err != nil {
		return nil, err
	}
	out := make([]carddav.AddressObject, len(cards))
	for i, c := range cards {
		out[i] = carddav.AddressObject{Path: h.cardPath(s, sc.Book.ID, c.Name), ETag: etag(c.Version),
			ModTime: c.Contact.UpdatedAt, Card: render(c, types, s.version)}
	}
	return out, nil
}

// productID names this service in the cards it writes.
const productID = "-//contactbook//CardDAV//EN"

// render is a card as answered: the contact through the one vCard
// mapping, with what the client sent and the mapping has no field for,
// the client's UID (else the contact's id), in version.
func render(c contacts.Card, types map[string]string, version string) vcard.Card {
	var stored vcard.Card
	if len(c.Props) > 0 {
		_ = json.Unmarshal(c.Props, &stored) // written by PutAddressObject; a bad one is ignored, not fatal
	}
	card := vcards.Merge(stored, c.Contact, types)
	if card.Get(vcard.FieldUID) == nil {
		card.SetValue(vcard.FieldUID, c.Contact.ID.String())
	}
	card.SetValue(vcard.FieldProductID, productID)
	card.SetValue(vcard.FieldRevision, c.Contact.UpdatedAt.UTC().Format("20060102T150405Z"))
	return vcards.ForVersion(card, version)
}
