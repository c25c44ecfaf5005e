package carddav_test

import (
	"context"
	"io"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/emersion/go-webdav"
	"github.com/emersion/go-webdav/carddav"

	"github.com/contactbook/contactbook/internal/apptest"
)

// nothingChangedSmall is the smaller book NothingChanged is also run on,
// so one run shows whether its cost grows with the book.
const nothingChangedSmall = 1000

// BenchmarkCardDAVSync times a client speaking the protocol (go-webdav's
// CardDAV client, over HTTP against the real router and PostgreSQL)
// syncing a book of CARDDAV_BENCH_CONTACTS contacts (10,000 by default):
//   - FirstSync: discovery of the address book, sync-collection from
//     nothing, then every card by addressbook-multiget in chunks of 500,
//     as DAVx5 and iOS fetch them (goal 10 s at 10,000);
//   - IncrementalSync: after one contact changed through the API (not
//     timed), sync-collection from the last token and a multiget of what
//     changed (goal 1 s);
//   - NothingChanged/cards=N: what iOS and DAVx5 do when nothing changed,
//     a PROPFIND (depth 0) of the book's getctag and sync-token, then
//     sync-collection from the last token, on a book of 1,000 cards and
//     on the benchmark's book, side by side: its cost must not grow with
//     the book;
//   - NothingChanged/cards=N-after-deleting-M: the same after the tenth of
//     the benchmark's book changed last was deleted (through the API, not
//     timed), whose index entries stay until vacuum.
func BenchmarkCardDAVSync(b *testing.B) {
	n := 10000
	if v, err := strconv.Atoi(os.Getenv("CARDDAV_BENCH_CONTACTS")); err == nil && v > 0 {
		n = v
	}
	tm := apptest.Setup(b, apptest.Options{OwnerOnly: true})
	ids := tm.Env.SeedContacts(tm.Book, n)
	dav := tm.Owner.DAV()
	ctx := context.Background()
	httpClient := webdav.HTTPClientWithBasicAuth(http.DefaultClient, dav.Email, dav.Password)
	client, err := carddav.NewClient(httpClient, tm.Env.URL+"/dav/")
	if err != nil {
		b.Fatal(err)
	}
	book := dav.BookPath(tm.Book)
	fetch := func(paths []string) int {
		got := 0
		for start := 0; start < len(paths); start += 500 {
			aos, err := client.MultiGetAddressBook(ctx, book, &carddav.AddressBookMultiGet{Paths: paths[start:min(start+500, len(paths))], DataRequest: carddav.AddressDataRequest{AllProp: true}})
			if err != nil {
				b.Fatal(err)
			}
			got += len(aos)
		}
		return got
	}
	var token string
	b.Run("FirstSync", func(b *testing.B) {
		for b.Loop() {
			home, err := client.FindAddressBookHomeSet(ctx, dav.PrincipalPath)
			if err != nil {
				b.Fatal(err)
			}
			if abs, err := client.FindAddressBooks(ctx, home); err != nil || len(abs) != 1 {
				b.Fatalf("address books: %v, %v", abs, err)
			}
			res, err := client.SyncCollection(ctx, book, &carddav.SyncQuery{})
			if err != nil {
				b.Fatal(err)
			}
			paths := make([]string, len(res.Updated))
			for i, ao := range res.Updated {
				paths[i] = ao.Path
			}
			if got := fetch(paths); got != n {
				b.Fatalf("fetched %d cards of %d", got, n)
			}
			token = res.SyncToken
		}
		b.ReportMetric(float64(n), "cards")
	})
	b.Run("IncrementalSync", func(b *testing.B) {
		i := 0
		for b.Loop() {
			b.StopTimer()
			i++
			tm.O.Patch("/api/contacts/"+ids[i%len(ids)], map[string]any{"notes": "changed " + strconv.Itoa(i)}).Expect(http.StatusOK)
			b.StartTimer()
			res, err := client.SyncCollection(ctx, book, &carddav.SyncQuery{SyncToken: token})
			if err != nil {
				b.Fatal(err)
			}
			if len(res.Updated) != 1 {
				b.Fatalf("%d changed, want 1", len(res.Updated))
			}
			if got := fetch([]string{res.Updated[0].Path}); got != 1 {
				b.Fatalf("fetched %d", got)
			}
			token = res.SyncToken
		}
	})
	// The smaller book is a second book of the same team, seeded and
	// synced once (its token read by the PROPFIND a client starts with).
	type syncedBook struct {
		path, token string
		cards       int
	}
	nothing := []syncedBook{{path: book, token: token, cards: n}}
	if n != nothingChangedSmall {
		small := tm.Owner.CreateBook("Small")
		tm.Env.SeedContacts(small, nothingChangedSmall)
		p := dav.BookPath(small)
		nothing = []syncedBook{{path: p, token: ctag(b, httpClient, tm.Env.URL+p), cards: nothingChangedSmall}, nothing[0]}
	}
	noChange := func(name string, sb syncedBook) {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				if got := ctag(b, httpClient, tm.Env.URL+sb.path); got != sb.token {
					b.Fatalf("getctag %q, want %q", got, sb.token)
				}
				res, err := client.SyncCollection(ctx, sb.path, &carddav.SyncQuery{SyncToken: sb.token})
				if err != nil || len(res.Updated)+len(res.Deleted) != 0 || res.SyncToken != sb.token {
					b.Fatalf("%+v, %v", res, err)
				}
			}
		})
	}
	for _, sb := range nothing {
		noChange("NothingChanged/cards="+strconv.Itoa(sb.cards), sb)
	}
	if deleted := n / 10; deleted > 0 {
		newest := make([]string, 0, deleted)
		rows, err := tm.Env.App.Pool.Query(ctx, `SELECT contact_id::text FROM contact_versions WHERE book_id = $1 ORDER BY sync_seq DESC LIMIT $2`, tm.Book, deleted)
		if err != nil {
			b.Fatal(err)
		}
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				b.Fatal(err)
			}
			newest = append(newest, id)
		}
		if err := rows.Err(); err != nil {
			b.Fatal(err)
		}
		tm.O.Post("/api/contacts/bulk-delete", map[string]any{"contact_ids": newest}).Expect(http.StatusOK)
		tm.Env.WaitJobs() // the deletions' events are worked before the timing
		sb := syncedBook{path: book, token: ctag(b, httpClient, tm.Env.URL+book), cards: n - deleted}
		noChange("NothingChanged/cards="+strconv.Itoa(sb.cards)+"-after-deleting-"+strconv.Itoa(deleted), sb)
	}
}

var ctagRE = regexp.MustCompile(`<cs:getctag>([^<]*)</cs:getctag>`)

// ctag asks an address book for its getctag and sync-token (PROPFIND,
// depth 0), as a client's sync starts, and returns the ctag.
func ctag(b *testing.B, c webdav.HTTPClient, url string) string {
	b.Helper()
	req, err := http.NewRequest("PROPFIND", url, strings.NewReader(`<?xml version="1.0" encoding="utf-8"?>`+
		`<d:propfind xmlns:d="DAV:" xmlns:cs="http://calendarserver.org/ns/"><d:prop><cs:getctag/><d:sync-token/></d:prop></d:propfind>`))
	if err != nil {
		b.Fatal(err)
	}
	req.Header.Set("Depth", "0")
	req.Header.Set("Content-Type", "application/xml; charset=utf-8")
	res, err := c.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil || res.StatusCode != http.StatusMultiStatus {
		b.Fatalf("PROPFIND %s: %d %s %v", url, res.StatusCode, body, err)
	}
	m := ctagRE.FindSubmatch(body)
	if m == nil {
		b.Fatalf("PROPFIND %s: no getctag in %s", url, body)
	}
	return string(m[1])
}
