package carddav

import (
	"bytes"
	"context"
	"encoding/xml"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/emersion/go-vcard"
	"github.com/emersion/go-webdav/carddav"
	"github.com/google/uuid"

	"github.com/contactbook/contactbook/internal/access"
	"github.com/contactbook/contactbook/internal/auth"
	"github.com/contactbook/contactbook/internal/contacts"
)

// Namespaces of the properties answered.
const (
	nsDAV  = "DAV:"
	nsCard = "urn:ietf:params:xml:ns:carddav"
	nsCS   = "http://calendarserver.org/ns/"
)

var prefixes = map[string]string{nsDAV: "d", nsCard: "card", nsCS: "cs"}

func dav(local string) xml.Name  { return xml.Name{Space: nsDAV, Local: local} }
func card(local string) xml.Name { return xml.Name{Space: nsCard, Local: local} }

// props are a resource's properties: name -> inner XML.
type props map[xml.Name]string

// propfindReq is a PROPFIND body; an empty body is allprop.
type propfindReq struct {
	XMLName  xml.Name  `xml:"DAV: propfind"`
	AllProp  *struct{} `xml:"DAV: allprop"`
	PropName *struct{} `xml:"DAV: propname"`
	Prop     *propList `xml:"DAV: prop"`
}

type propList struct {
	Names []anyElement `xml:",any"`
}

type anyElement struct {
	XMLName xml.Name
}

func (p *propList) names() []xml.Name {
	if p == nil {
		return nil
	}
	out := make([]xml.Name, len(p.Names))
	for i, n := range p.Names {
		out[i] = n.XMLName
	}
	return out
}

// want is what a request asks of each resource: named properties, all
// (nil names), or only the names (propName).
type want struct {
	names    []xml.Name
	propName bool
}

// multistatus writes a 207 answer.
type multistatus struct{ b strings.Builder }

func newMultistatus() *multistatus {
	m := &multistatus{}
	m.b.WriteString(xml.Header + `<d:multistatus xmlns:d="DAV:" xmlns:card="urn:ietf:params:xml:ns:carddav" xmlns:cs="http://calendarserver.org/ns/">`)
	return m
}

func elem(n xml.Name, inner string) string {
	if p, ok := prefixes[n.Space]; ok {
		if inner == "" {
			return "<" + p + ":" + n.Local + "/>"
		}
		return "<" + p + ":" + n.Local + ">" + inner + "</" + p + ":" + n.Local + ">"
	}
	var ns bytes.Buffer
	_ = xml.EscapeText(&ns, []byte(n.Space))
	if inner == "" {
		return "<" + n.Local + ` xmlns="` + ns.String() + `"/>`
	}
	return "<" + n.Local + ` xmlns="` + ns.String() + `">` + inner + "</" + n.Local + ">"
}

func escape(s string) string {
	var b bytes.Buffer
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}

// response writes one resource's properties as asked.
func (m *multistatus) response(path string, w want, have props) {
	m.b.WriteString("<d:response><d:href>" + escape(href(path)) + "</d:href>")
	var found, missing []string
	switch {
	case w.propName:
		for n := range have {
			found = append(found, elem(n, ""))
		}
	case w.names == nil:
		for n, v := range have {
			found = append(found, elem(n, v))
		}
	default:
		for _, n := range w.names {
			if v, ok := have[n]; ok {
				found = append(found, elem(n, v))
			} else {
				missing = append(missing, elem(n, ""))
			}
		}
	}
	if len(found) > 0 {
		m.b.WriteString("<d:propstat><d:prop>" + strings.Join(found, "") + "</d:prop><d:status>HTTP/1.1 200 OK</d:status></d:propstat>")
	}
	if len(missing) > 0 {
		m.b.WriteString("<d:propstat><d:prop>" + strings.Join(missing, "") + "</d:prop><d:status>HTTP/1.1 404 Not Found</d:status></d:propstat>")
	}
	m.b.WriteString("</d:response>")
}

// gone writes a member that no longer exists (a sync's deletion).
func (m *multistatus) gone(path string) {
	m.b.WriteString("<d:response><d:href>" + escape(href(path)) + "</d:href><d:status>HTTP/1.1 404 Not Found</d:status></d:response>")
}

func (m *multistatus) send(w http.ResponseWriter, tail string) {
	m.b.WriteString(tail + "</d:multistatus>")
	w.Header().Set("Content-Type", "application/xml; charset=utf-8")
	w.WriteHeader(http.StatusMultiStatus)
	_, _ = w.Write([]byte(m.b.String()))
}

func hrefElem(p string) string { return "<d:href>" + escape(href(p)) + "</d:href>" }

// syncToken is a book's sync token as a URI (RFC 6578 3.2).
func syncToken(n int64) string { return "urn:contactbook:sync:" + strconv.FormatInt(n, 10) }

// parseToken reads a sync token of ours.
func parseToken(s string) (int64, error) {
	rest, ok := strings.CutPrefix(strings.TrimSpace(s), "urn:contactbook:sync:")
	if !ok {
		return 0, contacts.ErrSyncToken
	}
	n, err := strconv.ParseInt(rest, 10, 64)
	if err != nil || n < 0 {
		return 0, contacts.ErrSyncToken
	}
	return n, nil
}

func (h *Handler) propfind(w http.ResponseWriter, r *http.Request, s *session, p davPath) error {
	body, err := readBody(w, r, maxReportSize)
	if err != nil {
		return err
	}
	var req propfindReq
	if len(bytes.TrimSpace(body)) > 0 {
		if err := xml.Unmarshal(body, &req); err != nil {
			return fmt.Errorf("%w: the PROPFIND body is not a DAV:propfind element", errBadRequest)
		}
	}
	wt := want{names: req.Prop.names(), propName: req.PropName != nil}
	if req.AllProp != nil {
		wt.names = nil
	}
	depth1 := r.Header.Get("Depth") != "0"
	ctx := r.Context()
	m := newMultistatus()
	switch p.kind {
	case pathRoot:
		m.response(Root, wt, h.principalProps(s, false))
		if depth1 {
			m.response(h.principal(s), wt, h.principalProps(s, true))
		}
	case pathPrincipal:
		m.response(h.principal(s), wt, h.principalProps(s, true))
		if depth1 {
			m.response(h.home(s), wt, h.homeProps(s))
		}
	case pathHome:
		m.response(h.home(s), wt, h.homeProps(s))
		if depth1 {
			bs, err := h.readableBooks(ctx, s)
			if err != nil {
				return err
			}
			for _, b := range bs {
				sc, err := h.scope(ctx, s, b.ID)
				if err != nil {
					return err
				}
				token, err := h.d.Contacts.CardToken(ctx, sc)
				if err != nil {
					return err
				}
				m.response(h.bookPath(s, b.ID), wt, h.bookProps(ctx, s, sc, token))
			}
		}
	case pathBook:
		sc, err := h.scope(ctx, s, p.bookID)
		if err != nil {
			return err
		}
		if !depth1 {
			token, err := h.d.Contacts.CardToken(ctx, sc)
			if err != nil {
				return err
			}
			m.response(h.bookPath(s, sc.Book.ID), wt, h.bookProps(ctx, s, sc, token))
			break
		}
		refs, token, err := h.d.Contacts.CardRefs(ctx, sc)
		if err != nil {
			return err
		}
		m.response(h.bookPath(s, sc.Book.ID), wt, h.bookProps(ctx, s, sc, token))
		if err := h.cardResponses(ctx, m, s, sc, wt, refs); err != nil {
			return err
		}
	case pathCard:
		sc, err := h.scope(ctx, s, p.bookID)
		if err != nil {
			return err
		}
		cards, err := h.d.Contacts.Cards(ctx, sc, []string{p.name})
		if err != nil {
			return err
		}
		if len(cards) == 0 {
			return errNotFound
		}
		c := cards[0]
		if err := h.cardResponses(ctx, m, s, sc, wt, []contacts.CardRef{{ID: c.Contact.ID, Name: c.Name, Version: c.Version}}); err != nil {
			return err
		}
	}
	m.send(w, "")
	return nil
}

// cardResponses writes the cards of refs, with their vCards when the
// request asks for address-data (loaded in one statement).
func (h *Handler) cardResponses(ctx context.Context, m *multistatus, s *session, sc access.Scope, wt want, refs []contacts.CardRef) error {
	var data map[string]string
	for _, n := range wt.names {
		if n == card("address-data") {
			names := make([]string, len(refs))
			for i, r := range refs {
				names[i] = r.Name
			}
			aos, err := h.objects(ctx, s, sc, names)
			if err != nil {
				return err
			}
			data = make(map[string]string, len(aos))
			for _, ao := range aos {
				var b bytes.Buffer
				if err := vcard.NewEncoder(&b).Encode(ao.Card); err != nil {
					return err
				}
				data[ao.Path] = escape(b.String())
			}
		}
	}
	for _, r := range refs {
		path := h.cardPath(s, sc.Book.ID, r.Name)
		have := props{
			dav("getetag"):        escape(`"` + etag(r.Version) + `"`),
			dav("getcontenttype"): vcard.MIMEType + "; charset=utf-8",
			dav("resourcetype"):   "",
		}
		if d, ok := data[path]; ok {
			have[card("address-data")] = d
		} else if data != nil {
			continue // changed meanwhile and gone: the next sync says so
		}
		m.response(path, wt, have)
	}
	return nil
}

func (h *Handler) principalProps(s *session, self bool) props {
	p := props{
		dav("current-user-principal"): hrefElem(h.principal(s)),
		dav("principal-URL"):          hrefElem(h.principal(s)),
		card("addressbook-home-set"):  hrefElem(h.home(s)),
		dav("resourcetype"):           "<d:collection/>",
	}
	if self {
		p[dav("resourcetype")] = "<d:principal/><d:collection/>"
		p[dav("displayname")] = "Address books"
	}
	return p
}

func (h *Handler) homeProps(s *session) props {
	return props{
		dav("resourcetype"):               "<d:collection/>",
		dav("displayname"):                "Address books",
		dav("current-user-principal"):     hrefElem(h.principal(s)),
		dav("owner"):                      hrefElem(h.principal(s)),
		dav("current-user-privilege-set"): privileges(false),
	}
}

// privileges is the current-user-privilege-set: read, and for members
// and above write (clients show a viewer's address book read-only).
func privileges(write bool) string {
	p := "<d:privilege><d:read/></d:privilege><d:privilege><d:read-current-user-privilege-set/></d:privilege>"
	if write {
		p += "<d:privilege><d:write/></d:privilege><d:privilege><d:write-content/></d:privilege><d:privilege><d:bind/></d:privilege><d:privilege><d:unbind/></d:privilege>"
	}
	return p
}

func (h *Handler) bookProps(ctx context.Context, s *session, sc access.Scope, token int64) props {
	canWrite := sc.Require(ctx, auth.RoleMember) == nil
	return props{
		dav("resourcetype"):               "<d:collection/><card:addressbook/>",
		dav("displayname"):                escape(sc.Book.Name),
		cs("getctag"):                     escape(syncToken(token)),
		dav("sync-token"):                 escape(syncToken(token)),
		dav("current-user-principal"):     hrefElem(h.principal(s)),
		dav("owner"):                      hrefElem(h.principal(s)),
		dav("current-user-privilege-set"): privileges(canWrite),
		dav("supported-report-set"): "<d:supported-report><d:report><card:addressbook-multiget/></d:report></d:supported-report>" +
			"<d:supported-report><d:report><card:addressbook-query/></d:report></d:supported-report>" +
			"<d:supported-report><d:report><d:sync-collection/></d:report></d:supported-report>",
		card("supported-address-data"): `<card:address-data-type content-type="text/vcard" version="3.0"/><card:address-data-type content-type="text/vcard" version="4.0"/>`,
		card("max-resource-size"):      strconv.Itoa(MaxCardSize),
	}
}

func cs(local string) xml.Name { return xml.Name{Space: nsCS, Local: local} }

// syncReq is a sync-collection REPORT (RFC 6578 3.2).
type syncReq struct {
	XMLName xml.Name  `xml:"DAV: sync-collection"`
	Token   string    `xml:"DAV: sync-token"`
	Level   string    `xml:"DAV: sync-level"`
	Prop    *propList `xml:"DAV: prop"`
}

// multigetReq is the part of an addressbook-multiget read up front: its
// hrefs.
type multigetReq struct {
	XMLName xml.Name `xml:"urn:ietf:params:xml:ns:carddav addressbook-multiget"`
	Hrefs   []string `xml:"DAV: href"`
}

// report answers sync-collection itself and hands multiget and query to
// the library, the multiget's cards loaded first in one statement per
// book.
func (h *Handler) report(w http.ResponseWriter, r *http.Request, s *session, p davPath) error {
	body, err := readBody(w, r, maxReportSize)
	if err != nil {
		return err
	}
	if v := requestedVersion(body); v != "" {
		s.version = v
	}
	var root struct{ XMLName xml.Name }
	if err := xml.Unmarshal(body, &root); err != nil {
		return fmt.Errorf("%w: the REPORT body is not XML", errBadRequest)
	}
	switch root.XMLName {
	case dav("sync-collection"):
		return h.syncCollection(w, r, s, p, body)
	case card("addressbook-multiget"):
		var mg multigetReq
		if err := xml.Unmarshal(body, &mg); err != nil {
			return fmt.Errorf("%w: the multiget is malformed", errBadRequest)
		}
		if err := h.prefetch(r.Context(), s, mg.Hrefs); err != nil {
			return err
		}
	case card("addressbook-query"):
		if p.kind != pathBook {
			return fmt.Errorf("%w: addressbook-query applies to an address book", errBadRequest)
		}
	default:
		return fmt.Errorf("%w: the reports are addressbook-multiget, addressbook-query and sync-collection", errBadRequest)
	}
	h.lib.ServeHTTP(w, r)
	return nil
}

// prefetch loads the cards of hrefs, per book, into the session.
func (h *Handler) prefetch(ctx context.Context, s *session, hrefs []string) error {
	byBook := map[uuid.UUID][]string{}
	for _, raw := range hrefs {
		u, err := url.Parse(strings.TrimSpace(raw))
		if err != nil {
			continue
		}
		p := h.parse(s, u.Path)
		if p.kind == pathCard {
			byBook[p.bookID] = append(byBook[p.bookID], p.name)
		}
	}
	s.cards = map[string]*carddav.AddressObject{}
	for id, names := range byBook {
		sc, err := h.scope(ctx, s, id)
		if err != nil {
			continue // each href of it answers 404 or 403 on its own
		}
		aos, err := h.objects(ctx, s, sc, names)
		if err != nil {
			return err
		}
		for i := range aos {
			s.cards[aos[i].Path] = &aos[i]
		}
	}
	return nil
}

// syncCollection answers RFC 6578's report: with no token every card of
// the book, with one what changed since (a deleted card as a 404
// member), and the new token.
func (h *Handler) syncCollection(w http.ResponseWriter, r *http.Request, s *session, p davPath, body []byte) error {
	if p.kind != pathBook {
		return fmt.Errorf("%w: sync-collection applies to an address book", errBadRequest)
	}
	var req syncReq
	if err := xml.Unmarshal(body, &req); err != nil {
		return fmt.Errorf("%w: the sync-collection is malformed", errBadRequest)
	}
	if lv := strings.TrimSpace(req.Level); lv != "" && lv != "1" {
		writePrecondition(w, http.StatusForbidden, nsDAV, "sync-traversal-supported")
		return nil
	}
	ctx := r.Context()
	sc, err := h.scope(ctx, s, p.bookID)
	if err != nil {
		return err
	}
	wt := want{names: req.Prop.names()}
	if wt.names == nil {
		wt.names = []xml.Name{dav("getetag")}
	}
	var ch contacts.CardChanges
	if strings.TrimSpace(req.Token) == "" {
		if ch.Changed, ch.Token, err = h.d.Contacts.CardRefs(ctx, sc); err != nil {
			return err
		}
	} else {
		since, err := parseToken(req.Token)
		if err != nil {
			return err
		}
		if ch, err = h.d.Contacts.CardChanges(ctx, sc, since); err != nil {
			return err
		}
	}
	m := newMultistatus()
	if err := h.cardResponses(ctx, m, s, sc, wt, ch.Changed); err != nil {
		return err
	}
	for _, name := range ch.Deleted {
		m.gone(h.cardPath(s, sc.Book.ID, name))
	}
	m.send(w, "<d:sync-token>"+escape(syncToken(ch.Token))+"</d:sync-token>")
	return nil
}
