package carddav_test

import (
	"context"
	"net/http"
	"os"
	"strconv"
	"testing"

	"github.com/emersion/go-webdav"
	"github.com/emersion/go-webdav/carddav"

	"github.com/contactbook/contactbook/internal/apptest"
)

// BenchmarkCardDAVSync times a client speaking the protocol (go-webdav's
// CardDAV client, over HTTP against the real router and PostgreSQL)
// syncing a book of CARDDAV_BENCH_CONTACTS contacts (10,000 by default):
//   - FirstSync: discovery of the address book, sync-collection from
//     nothing, then every card by addressbook-multiget in chunks of 500,
//     as DAVx5 and iOS fetch them (goal 10 s at 10,000);
//   - IncrementalSync: after one contact changed through the API (not
//     timed), sync-collection from the last token and a multiget of what
//     changed (goal 1 s);
//   - NothingChanged: sync-collection that finds nothing, whose cost must
//     not grow with the book.
func BenchmarkCardDAVSync(b *testing.B) {
	n := 10000
	if v, err := strconv.Atoi(os.Getenv("CARDDAV_BENCH_CONTACTS")); err == nil && v > 0 {
		n = v
	}
	tm := apptest.Setup(b, apptest.Options{OwnerOnly: true})
	ids := tm.Env.SeedContacts(tm.Book, n)
	dav := tm.Owner.DAV()
	ctx := context.Background()
	client, err := carddav.NewClient(webdav.HTTPClientWithBasicAuth(http.DefaultClient, dav.Email, dav.Password), tm.Env.URL+"/dav/")
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
	b.Run("NothingChanged", func(b *testing.B) {
		for b.Loop() {
			res, err := client.SyncCollection(ctx, book, &carddav.SyncQuery{SyncToken: token})
			if err != nil || len(res.Updated)+len(res.Deleted) != 0 {
				b.Fatalf("%+v, %v", res, err)
			}
		}
	})
}
