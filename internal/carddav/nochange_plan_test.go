package carddav_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/contactbook/contactbook/internal/accounts"
	"github.com/contactbook/contactbook/internal/apptest"
	"github.com/contactbook/contactbook/internal/books"
	"github.com/contactbook/contactbook/internal/carddav"
	"github.com/contactbook/contactbook/internal/contacts"
	"github.com/contactbook/contactbook/internal/postgres/pgtest"
)

// A sync that finds nothing is what phones do most (iOS and DAVx5: a
// PROPFIND of the book's getctag and sync-token, then sync-collection
// from the last token), so its cost must not grow with the book. Its
// statements are run for real, on the service's books, contacts and
// accounts over a pool that reports every plan, in a book of a few
// thousand contacts whose 1,000 most recently changed were just deleted
// while an older snapshot stays open (a backup, a long export): their
// index entries stay at the top of contacts_sync_idx until vacuum, and a
// probe for the newest version that walks them reads in proportion to
// them. Every statement must read a handful of rows, heap fetches
// included, and there must be a handful of statements.
const (
	noChangeContacts = 3000
	noChangeDeleted  = 1000
	// noChangeRows bounds what one statement reads (rows returned,
	// discarded and fetched from the heap): the newest version's probe
	// reads one or two, a book or a membership a few.
	noChangeRows = 10
	// noChangeStatements bounds the statements of the two requests: each
	// resolves the book and the caller's role, and takes the sync lock and
	// the token in a transaction.
	noChangeStatements = 10
)

func TestNothingChangedSyncReadsNoMoreInABiggerBook(t *testing.T) {
	tm := apptest.Setup(t, apptest.Options{OwnerOnly: true})
	ids := tm.Env.SeedContacts(tm.Book, noChangeContacts)
	dav := tm.Owner.DAV()
	ctx := context.Background()
	for i, id := range ids[:5] {
		tm.O.Patch("/api/contacts/"+id, map[string]any{"notes": "edited " + strconv.Itoa(i)}).Expect(http.StatusOK)
	}
	rows, err := tm.Env.App.Pool.Query(ctx, `SELECT contact_id::text FROM contact_versions WHERE book_id = $1 ORDER BY sync_seq DESC LIMIT $2`, tm.Book, noChangeDeleted)
	if err != nil {
		t.Fatal(err)
	}
	newest, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	snapshot, err := tm.Env.App.Pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead})
	if err != nil {
		t.Fatal(err)
	}
	defer snapshot.Rollback(ctx) //nolint:errcheck
	var held int
	if err := snapshot.QueryRow(ctx, `SELECT count(*) FROM contacts`).Scan(&held); err != nil || held == 0 {
		t.Fatalf("snapshot: %d, %v", held, err)
	}
	if n := tm.O.Post("/api/contacts/bulk-delete", map[string]any{"contact_ids": newest}).Expect(http.StatusOK).Int("data.deleted"); n != noChangeDeleted {
		t.Fatalf("deleted %d, want %d", n, noChangeDeleted)
	}
	want := "urn:contactbook:sync:" + strconv.Itoa(tm.Env.QueryInt(`
		SELECT GREATEST((SELECT max(sync_seq) FROM contact_versions WHERE book_id = $1), (SELECT max(sync_seq) FROM contact_tombstones WHERE book_id = $1))`, tm.Book))

	for _, mode := range []pgtest.PlanMode{pgtest.CustomPlans, pgtest.GenericPlans} {
		t.Run(string(mode), func(t *testing.T) {
			p := pgtest.Setup(t, pgtest.On(tm.Env.DBURL), pgtest.RecordPlans(mode))
			db, log := p.DB, p.Plans
			bs := books.NewService(db, nil, nil)
			h := carddav.New(carddav.Deps{
				Accounts: accounts.NewService(accounts.Deps{DB: db, Log: slog.Default()}),
				Books:    bs,
				Contacts: contacts.NewService(contacts.Deps{DB: db, Books: bs}),
				Log:      slog.Default(),
			})
			c := noChangeClient{t: t, h: h, dav: dav, book: dav.BookPath(tm.Book)}
			// Signed in once first: a device's sign-in is remembered for a
			// second, and is not the book's work.
			if got := c.ctag(); got != want {
				t.Fatalf("getctag %q, want %q (the newest of the book's versions and deletions)", got, want)
			}
			plans := log.Record(t, func() {
				if got := c.ctag(); got != want {
					t.Errorf("getctag %q, want %q", got, want)
				}
				c.syncNothing(want)
			})
			if len(plans) > noChangeStatements {
				t.Errorf("%d statements, want at most %d", len(plans), noChangeStatements)
			}
			for _, p := range plans {
				if read := p.RowsRead() + p.HeapFetches(); read > noChangeRows {
					t.Errorf("%s\nread %.0f rows (%.0f heap fetches) in a book of %d contacts, %d just deleted; want at most %d\n%s",
						strings.Join(strings.Fields(p.Query), " "), read, p.HeapFetches(), noChangeContacts, noChangeDeleted, noChangeRows, p.Summary())
				}
			}
		})
	}
}

// noChangeClient sends a client's requests straight to the handler.
type noChangeClient struct {
	t    *testing.T
	h    http.Handler
	dav  *apptest.DAVClient
	book string
}

var (
	getctagRE   = regexp.MustCompile(`<cs:getctag>([^<]*)</cs:getctag>`)
	syncTokenRE = regexp.MustCompile(`<d:sync-token>([^<]*)</d:sync-token>`)
)

func (c noChangeClient) do(method, depth, body string) string {
	c.t.Helper()
	r := httptest.NewRequest(method, c.book, strings.NewReader(body))
	r.SetBasicAuth(c.dav.Email, c.dav.Password)
	r.Header.Set("Depth", depth)
	r.Header.Set("Content-Type", "application/xml; charset=utf-8")
	w := httptest.NewRecorder()
	c.h.ServeHTTP(w, r)
	out, _ := io.ReadAll(w.Result().Body)
	if w.Code != http.StatusMultiStatus {
		c.t.Fatalf("%s %s: %d %s", method, c.book, w.Code, out)
	}
	return string(out)
}

// ctag is the book's getctag, asked with its sync-token (PROPFIND, depth 0).
func (c noChangeClient) ctag() string {
	c.t.Helper()
	out := c.do("PROPFIND", "0", `<d:propfind xmlns:d="DAV:" xmlns:cs="http://calendarserver.org/ns/"><d:prop><cs:getctag/><d:sync-token/></d:prop></d:propfind>`)
	m := getctagRE.FindStringSubmatch(out)
	if m == nil || !strings.Contains(out, "<d:sync-token>"+m[1]+"</d:sync-token>") {
		c.t.Fatalf("no getctag equal to the sync-token in %s", out)
	}
	return m[1]
}

// syncNothing runs sync-collection from token and fails unless it finds
// nothing and answers the same token.
func (c noChangeClient) syncNothing(token string) {
	c.t.Helper()
	out := c.do("REPORT", "1", `<d:sync-collection xmlns:d="DAV:"><d:sync-token>`+token+`</d:sync-token><d:sync-level>1</d:sync-level><d:prop><d:getetag/></d:prop></d:sync-collection>`)
	if strings.Contains(out, "<d:response>") {
		c.t.Errorf("sync-collection from the current token found changes: %s", out)
	}
	if m := syncTokenRE.FindStringSubmatch(out); m == nil || m[1] != token {
		c.t.Errorf("sync-collection answered token %v, want %s", m, token)
	}
}
