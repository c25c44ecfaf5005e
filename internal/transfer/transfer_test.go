package transfer_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"

	"github.com/contactbook/contactbook/internal/apptest"
	"github.com/contactbook/contactbook/internal/suppression"
	"github.com/contactbook/contactbook/internal/transfer"
)

// peopleCSV is a file of n new contacts, numbered from first.
func peopleCSV(first, n int) []byte {
	var b strings.Builder
	b.WriteString("First Name,Last Name,E-mail Address,Company,Job Title\r\n")
	for i := first; i < first+n; i++ {
		fmt.Fprintf(&b, "Person,Number %d,person%d@example.com,Company %d,Engineer\r\n", i, i, i%100)
	}
	return []byte(b.String())
}

// queue starts an import on an instance that works no jobs.
func queue(t testing.TB, u *apptest.User, book string, file []byte, fields map[string]string) uuid.UUID {
	t.Helper()
	return uuid.MustParse(u.Post("/api/books/"+book+"/imports", apptest.ImportForm(t, file, fields)).Expect(http.StatusAccepted).String("data.id"))
}

// TestImportResumesFromCheckpoint stops an import after its first chunk,
// as a restart would, and resumes it: every row is written once.
func TestImportResumesFromCheckpoint(t *testing.T) {
	t.Parallel()
	env := apptest.Setup(t, apptest.Options{Bare: true, WithoutJobs: true}).Env
	u := env.Signup("Resume")
	book := u.CreateBook("Resume")
	n := 2*transfer.ChunkRows + 500
	id := queue(t, u, book, peopleCSV(0, n), nil)
	done, err := env.App.Transfer.Run(t.Context(), id, -1) // the turn is over after one chunk
	if err != nil || done {
		t.Fatalf("first turn: done %v, %v", done, err)
	}
	r := u.Get("/api/books/" + book + "/imports/" + id.String()).Expect(http.StatusOK)
	if r.String("data.status") != "running" || r.Int("data.processed_rows") != transfer.ChunkRows || r.Int("data.created") != transfer.ChunkRows {
		t.Fatalf("after one chunk: %s", r.Body)
	}
	if c := env.QueryInt(`SELECT count(*) FROM contacts`); c != transfer.ChunkRows {
		t.Fatalf("%d contacts after one chunk", c)
	}
	done, err = env.App.Transfer.Run(t.Context(), id, 1<<62)
	if err != nil || !done {
		t.Fatalf("resumed: done %v, %v", done, err)
	}
	r = u.Get("/api/books/" + book + "/imports/" + id.String()).Expect(http.StatusOK)
	if r.String("data.status") != "succeeded" || r.Int("data.processed_rows") != n || r.Int("data.created") != n || !r.Has("data.finished_at") {
		t.Fatalf("finished: %s", r.Body)
	}
	if c := env.QueryInt(`SELECT count(DISTINCT last_name) FROM contacts`); c != n {
		t.Fatalf("%d distinct contacts, want %d", c, n)
	}
	if c := env.QueryInt(`SELECT count(*) FROM import_files`); c != 0 {
		t.Fatal("the file of a finished import is kept")
	}
}

// TestImportRunsOnce works one import from two runs at once (two instances
// that both hold its job): the checkpoint under the row lock lets each
// chunk be written by one of them only.
func TestImportRunsOnce(t *testing.T) {
	t.Parallel()
	env := apptest.Setup(t, apptest.Options{Bare: true, WithoutJobs: true}).Env
	other := apptest.Setup(t, apptest.Options{Bare: true, WithoutJobs: true, DatabaseURL: env.DBURL}).Env
	u := env.Signup("Once")
	book := u.CreateBook("Once")
	n := 3 * transfer.ChunkRows
	id := queue(t, u, book, peopleCSV(0, n), map[string]string{"mode": "create"})
	var wg sync.WaitGroup
	for _, svc := range []*transfer.Service{env.App.Transfer, other.App.Transfer} {
		wg.Go(func() {
			if _, err := svc.Run(context.Background(), id, 1<<62); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if c := env.QueryInt(`SELECT count(*) FROM contacts`); c != n {
		t.Fatalf("%d contacts, want %d (mode create writes repeats, so a chunk written twice would show)", c, n)
	}
	r := u.Get("/api/books/" + book + "/imports/" + id.String()).Expect(http.StatusOK)
	if r.String("data.status") != "succeeded" || r.Int("data.created") != n {
		t.Fatalf("import: %s", r.Body)
	}
}

// TestImportEventsAndSuppression: imported contacts emit contact.created
// and contact.updated through the outbox, and an address suppressed
// before the import stays suppressed, its new contact marked.
func TestImportEventsAndSuppression(t *testing.T) {
	t.Parallel()
	env := apptest.Setup(t, apptest.Options{Bare: true}).Env
	u := env.Signup("Events")
	book := u.CreateBook("Events")
	u.Post("/api/teams/"+u.TeamID+"/webhooks", map[string]any{
		"url": "https://hooks.example.com/contacts", "events": []string{"contact.created", "contact.updated"},
	}).Expect(http.StatusCreated)
	if _, err := suppression.New(nil).Suppress(t.Context(), env.App.DB, uuid.MustParse(book), []string{"person1@example.com"},
		suppression.ReasonUnsubscribe, suppression.SourceUnsubscribePage, nil); err != nil {
		t.Fatal(err)
	}
	queue(t, u, book, peopleCSV(0, 3), nil)
	env.WaitJobs()
	queue(t, u, book, []byte("email,job_title\r\nperson2@example.com,Manager\r\n"), map[string]string{"mode": "update"})
	env.WaitJobs()
	if c := env.QueryInt(`SELECT count(*) FROM events WHERE type = 'contact.created'`); c != 3 {
		t.Fatalf("%d contact.created events", c)
	}
	if c := env.QueryInt(`SELECT count(*) FROM events WHERE type = 'contact.updated' AND convert_from(body, 'UTF8') LIKE '%Manager%'`); c != 1 {
		t.Fatalf("%d contact.updated events with the new title", c)
	}
	if c := env.QueryInt(`SELECT count(*) FROM contacts WHERE suppressed_at IS NOT NULL`); c != 1 {
		t.Fatalf("%d suppressed contacts, want the one holding person1", c)
	}
	if c := env.QueryInt(`SELECT count(*) FROM suppressions WHERE lifted_at IS NULL`); c != 1 {
		t.Fatalf("%d suppressions in force", c)
	}
}

// TestImportUniqueEmailsBook: in a book that enforces unique emails,
// create mode fails the rows whose address is taken, naming it.
func TestImportUniqueEmailsBook(t *testing.T) {
	t.Parallel()
	env := apptest.Setup(t, apptest.Options{Bare: true}).Env
	u := env.Signup("Unique")
	book := u.CreateBook("Unique")
	u.Patch("/api/books/"+book, map[string]any{"enforce_unique_emails": true}).Expect(http.StatusOK)
	queue(t, u, book, peopleCSV(0, 2), nil)
	env.WaitJobs()
	id := queue(t, u, book, peopleCSV(1, 2), map[string]string{"mode": "create"})
	env.WaitJobs()
	r := u.Get("/api/books/" + book + "/imports/" + id.String()).Expect(http.StatusOK)
	if r.Int("data.created") != 1 || r.Int("data.failed") != 1 || !strings.Contains(r.String("data.errors.0.message"), "person1@example.com") ||
		r.String("data.errors.0.column") != "E-mail Address" || r.Int("data.errors.0.row") != 2 {
		t.Fatalf("import: %s", r.Body)
	}
}

// TestImportRepeatsInOneFile: in update mode a second row with the same
// address patches the contact the first row created; a patch that would
// make it invalid fails alone. Every row is counted once.
func TestImportRepeatsInOneFile(t *testing.T) {
	t.Parallel()
	env := apptest.Setup(t, apptest.Options{Bare: true}).Env
	u := env.Signup("Repeats")
	book := u.CreateBook("Repeats")
	file := []byte("first_name,emails.work,job_title,website\r\nAda,ada@example.com,,\r\n,ADA@example.com,Countess,\r\n,ada@example.com,,not a url\r\n")
	id := queue(t, u, book, file, map[string]string{"mode": "update"})
	env.WaitJobs()
	r := u.Get("/api/books/" + book + "/imports/" + id.String()).Expect(http.StatusOK)
	if r.Int("data.created") != 1 || r.Int("data.updated") != 1 || r.Int("data.failed") != 1 || r.Int("data.processed_rows") != 3 ||
		r.String("data.errors.0.column") != "website" || r.Int("data.errors.0.row") != 4 {
		t.Fatalf("import: %s", r.Body)
	}
	c := u.InBook(book).Get("/api/contacts").Expect(http.StatusOK)
	if c.Len("data") != 1 || c.String("data.0.job_title") != "Countess" || c.String("data.0.first_name") != "Ada" || c.Len("data.0.emails") != 1 {
		t.Fatalf("contacts: %s", c.Body)
	}
}

// TestImportMailchimpMappingAndAccess: Mailchimp's columns by name, an
// explicit mapping overriding names, the row limit, and who may import.
func TestImportMailchimpMappingAndAccess(t *testing.T) {
	t.Parallel()
	env := apptest.Setup(t, apptest.Options{Bare: true}).Env
	u := env.Signup("Chimp")
	book := u.CreateBook("Chimp")
	u.Post("/api/books/"+book+"/fields", map[string]string{"key": "tier", "name": "Tier", "type": "number"}).Expect(http.StatusCreated)
	queue(t, u, book, []byte("Email Address\tFirst Name\tLast Name\tTAGS\tMEMBER_RATING\r\nmc@example.com\tMai\tChimp\t\"news, vip\"\t4\r\n"), nil)
	env.WaitJobs()
	c := u.InBook(book).Get("/api/contacts").Expect(http.StatusOK)
	if c.String("data.0.emails.0.address") != "mc@example.com" || c.String("data.0.last_name") != "Chimp" || c.Len("data.0.labels") != 2 {
		t.Fatalf("mailchimp: %s", c.Body)
	}
	// The mapping sends MEMBER_RATING to a custom field and ignores the
	// rest of the columns it does not name; a value of the wrong type
	// fails its row.
	id := queue(t, u, book, []byte("Who,Mail,MEMBER_RATING\r\nRay,ray@example.com,5\r\nSam,sam@example.com,lots\r\n"),
		map[string]string{"mapping": `{"Who":"company","MEMBER_RATING":"custom.tier"}`})
	env.WaitJobs()
	r := u.Get("/api/books/" + book + "/imports/" + id.String()).Expect(http.StatusOK)
	if r.Int("data.created") != 1 || r.Int("data.failed") != 1 || r.String("data.errors.0.column") != "MEMBER_RATING" {
		t.Fatalf("mapping: %s", r.Body)
	}
	c = u.InBook(book).Get("/api/contacts?q=Ray").Expect(http.StatusOK)
	if c.String("data.0.company") != "Ray" || c.Len("data.0.emails") != 0 || c.String("data.0.custom_fields.tier") != "5" {
		t.Fatalf("mapped contact: %s", c.Body)
	}
	var big strings.Builder
	big.WriteString("first_name\n")
	for range transfer.MaxRows + 1 {
		big.WriteString("A\n")
	}
	u.Post("/api/books/"+book+"/imports", apptest.ImportForm(t, []byte(big.String()), nil)).ExpectError(http.StatusBadRequest, "INVALID_INPUT")

	viewer := env.Join(u, "Viewer", "viewer")
	viewer.Post("/api/books/"+book+"/imports", apptest.ImportForm(t, []byte("first_name\nA\n"), nil)).ExpectError(http.StatusForbidden, "FORBIDDEN")
	viewer.Get("/api/books/" + book + "/imports").Expect(http.StatusOK)
	stranger := env.Signup("Stranger")
	stranger.Get("/api/books/"+book+"/imports/"+id.String()).ExpectError(http.StatusForbidden, "FORBIDDEN")
	stranger.Get("/api/books/"+book+"/export").ExpectError(http.StatusForbidden, "FORBIDDEN")
}

// TestImportWithoutItsFileFails: an import that cannot go on is marked
// failed with its reason, never left running.
func TestImportWithoutItsFileFails(t *testing.T) {
	t.Parallel()
	env := apptest.Setup(t, apptest.Options{Bare: true, WithoutJobs: true}).Env
	u := env.Signup("Gone")
	book := u.CreateBook("Gone")
	id := queue(t, u, book, peopleCSV(0, 10), nil)
	if _, err := env.App.Pool.Exec(t.Context(), `DELETE FROM import_files WHERE import_id = $1`, id); err != nil {
		t.Fatal(err)
	}
	if done, err := env.App.Transfer.Run(t.Context(), id, 1<<62); err != nil || !done {
		t.Fatalf("run: %v %v", done, err)
	}
	r := u.Get("/api/books/" + book + "/imports/" + id.String()).Expect(http.StatusOK)
	if r.String("data.status") != "failed" || !strings.Contains(r.String("data.failure_reason"), "no longer stored") || !r.Has("data.finished_at") {
		t.Fatalf("import: %s", r.Body)
	}
}

// A time zone column (Mailchimp's TIMEZONE among its names) maps to the
// contact's time_zone; a name that is not an IANA zone fails its row; the
// export carries the column, and its file imports back with the zone.
func TestImportExportTimeZone(t *testing.T) {
	t.Parallel()
	env := apptest.Setup(t, apptest.Options{Bare: true}).Env
	u := env.Signup("Zone")
	book := u.CreateBook("Zones")
	id := queue(t, u, book, []byte("First Name,Email Address,TIMEZONE\r\nZoe,zoe@example.com,Europe/Berlin\r\nMo,mo@example.com,Mars/Base\r\n"), nil)
	env.WaitJobs()
	r := u.Get("/api/books/" + book + "/imports/" + id.String()).Expect(http.StatusOK)
	if r.Int("data.created") != 1 || r.Int("data.failed") != 1 || r.String("data.errors.0.column") != "TIMEZONE" {
		t.Fatalf("import: %s", r.Body)
	}
	c := u.InBook(book).Get("/api/contacts?q=Zoe").Expect(http.StatusOK)
	if c.String("data.0.time_zone") != "Europe/Berlin" {
		t.Fatalf("imported contact: %s", c.Body)
	}
	file := u.Get("/api/books/" + book + "/export").Expect(http.StatusOK).Body
	if !bytes.Contains(file, []byte("time_zone")) || !bytes.Contains(file, []byte("Europe/Berlin")) {
		t.Fatalf("export: %s", file)
	}
	again := u.CreateBook("Again")
	queue(t, u, again, file, nil)
	env.WaitJobs()
	if got := u.InBook(again).Get("/api/contacts").Expect(http.StatusOK).String("data.0.time_zone"); got != "Europe/Berlin" {
		t.Fatalf("round trip: time_zone %q", got)
	}
}
