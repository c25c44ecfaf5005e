package httpapi_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/contactbook/contactbook/internal/apptest"
	"github.com/contactbook/contactbook/internal/contacts"
	"github.com/contactbook/contactbook/internal/transfer"
)

// runImport starts an import, waits for its job and returns the finished
// import.
func runImport(env *apptest.Env, u *apptest.User, bookID string, file []byte, fields map[string]string) *apptest.Response {
	env.T.Helper()
	id := u.Post("/api/books/"+bookID+"/imports", apptest.ImportForm(env.T, file, fields)).Expect(http.StatusAccepted).String("data.id")
	env.WaitJobs()
	return u.Get("/api/books/" + bookID + "/imports/" + id).Expect(http.StatusOK)
}

// bookContacts returns the book's contacts, oldest first.
func bookContacts(t *testing.T, u *apptest.User, bookID string) []contacts.Contact {
	t.Helper()
	var out []contacts.Contact
	u.InBook(bookID).Get("/api/contacts?limit=200&sort=created_at").Expect(http.StatusOK).Decode("data", &out)
	return out
}

const googleCSV = "First Name,Middle Name,Last Name,Organization Name,Organization Title,Birthday,Notes,Labels,E-mail 1 - Label,E-mail 1 - Value,E-mail 2 - Label,E-mail 2 - Value,Phone 1 - Label,Phone 1 - Value,Address 1 - Label,Address 1 - Street,Address 1 - City,Address 1 - Postal Code,Address 1 - Country\r\n" +
	"Ada,,Lovelace,Analytical Engines,Countess,1815-12-10,\"First line\nsecond line\",* myContacts ::: Friends,* Work,ada@example.com,Home,ada@home.example,Mobile,+44 20 7946 0000,Home,12 St James's Sq,London,SW1Y 4JH,UK\r\n" +
	"Grace,,Hopper,US Navy,,,,* myContacts,,grace@example.com,,,,,,,,,\r\n" +
	",,,,,,,,,nobody@example.com,,,,,,,,,\r\n"

func TestImportGoogleCSV(t *testing.T) {
	t.Parallel()
	env := apptest.Setup(t, apptest.Options{Bare: true}).Env
	u := env.Signup("Importer")
	book := u.CreateBook("Imported")
	res := runImport(env, u, book, []byte("\xEF\xBB\xBF"+googleCSV), nil)
	if res.String("data.status") != "succeeded" || res.Int("data.total_rows") != 3 || res.Int("data.processed_rows") != 3 ||
		res.Int("data.created") != 2 || res.Int("data.failed") != 1 {
		t.Fatalf("import: %s", res.Body)
	}
	var errs []transfer.RowError
	res.Decode("data.errors", &errs)
	if len(errs) != 1 || errs[0].Row != 4 || !strings.Contains(errs[0].Message, "first name, last name or company") {
		t.Fatalf("errors: %+v", errs)
	}
	cs := bookContacts(t, u, book)
	if len(cs) != 2 {
		t.Fatalf("%d contacts", len(cs))
	}
	byContent(cs)
	ada := cs[0]
	if ada.FirstName != "Ada" || ada.Company != "Analytical Engines" || ada.JobTitle != "Countess" || ada.Notes != "First line\nsecond line" ||
		ada.Birthday == nil || *ada.Birthday != "1815-12-10" {
		t.Fatalf("ada: %+v", ada)
	}
	if len(ada.Emails) != 2 || ada.Emails[0].Label != "work" || ada.Emails[1].Label != "personal" || len(ada.Phones) != 1 || ada.Phones[0].Label != "mobile" {
		t.Fatalf("ada's entries: %+v %+v", ada.Emails, ada.Phones)
	}
	if len(ada.Addresses) != 1 || ada.Addresses[0].Label != "home" || ada.Addresses[0].City != "London" {
		t.Fatalf("ada's address: %+v", ada.Addresses)
	}
	if len(ada.Labels) != 1 || ada.Labels[0].Name != "Friends" || len(cs[1].Labels) != 0 {
		t.Fatalf("labels: %+v %+v", ada.Labels, cs[1].Labels)
	}
	list := u.Get("/api/books/" + book + "/imports").Expect(http.StatusOK)
	if list.Len("data") != 1 {
		t.Fatalf("list: %s", list.Body)
	}
}

func TestImportWindows1252SemicolonAndModes(t *testing.T) {
	t.Parallel()
	env := apptest.Setup(t, apptest.Options{Bare: true}).Env
	u := env.Signup("Modes")
	book := u.CreateBook("Modes")
	// Outlook's columns, semicolons, Windows-1252 (é is 0xE9).
	file := []byte("First Name;Last Name;E-mail Address;Job Title;Categories\r\nJos\xE9;Ruiz;jose@example.com;Chef;VIP\r\n")
	res := runImport(env, u, book, file, nil)
	if res.Int("data.created") != 1 {
		t.Fatalf("import: %s", res.Body)
	}
	if cs := bookContacts(t, u, book); cs[0].FirstName != "José" || cs[0].JobTitle != "Chef" || cs[0].Labels[0].Name != "VIP" {
		t.Fatalf("contact: %+v", cs[0])
	}
	again := []byte("First Name;Last Name;E-mail Address;Job Title\r\nJosé;;JOSE@example.com;Head chef\r\n")
	if res := runImport(env, u, book, again, nil); res.Int("data.skipped") != 1 || res.Int("data.created") != 0 {
		t.Fatalf("skip: %s", res.Body)
	}
	if res := runImport(env, u, book, again, map[string]string{"mode": "update", "dry_run": "true"}); res.Int("data.updated") != 1 || !res.Bool("data.dry_run") {
		t.Fatalf("dry update: %s", res.Body)
	}
	if cs := bookContacts(t, u, book); cs[0].JobTitle != "Chef" {
		t.Fatalf("a dry run wrote: %+v", cs[0])
	}
	if res := runImport(env, u, book, again, map[string]string{"mode": "update"}); res.Int("data.updated") != 1 {
		t.Fatalf("update: %s", res.Body)
	}
	cs := bookContacts(t, u, book)
	if len(cs) != 1 || cs[0].JobTitle != "Head chef" || cs[0].LastName != "Ruiz" {
		t.Fatalf("updated: %+v", cs)
	}
	if res := runImport(env, u, book, again, map[string]string{"mode": "create"}); res.Int("data.created") != 1 {
		t.Fatalf("create: %s", res.Body)
	}
	if n := len(bookContacts(t, u, book)); n != 2 {
		t.Fatalf("%d contacts after create mode", n)
	}
}

func TestImportBadInput(t *testing.T) {
	t.Parallel()
	env := apptest.Setup(t, apptest.Options{Bare: true}).Env
	u := env.Signup("Bad")
	book := u.CreateBook("Bad")
	wide := "first_name" + strings.Repeat(",x", 9999) + "\r\nA" + strings.Repeat(",", 9999) + "\r\n"
	cases := []struct {
		name   string
		file   []byte
		fields map[string]string
		status int
		msg    string
	}{
		{"empty", []byte(""), nil, 400, "empty"},
		{"header only", []byte("first_name,last_name\r\n"), nil, 400, "no contacts"},
		{"binary", []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), nil, 400, "not text"},
		{"unterminated quote", []byte("first_name,notes\r\nAda,\"never closed\r\nGrace,x\r\n"), nil, 400, "quote"},
		{"10,000 columns", []byte(wide), nil, 400, "columns"},
		{"neither UTF-8 nor Windows-1252", []byte("first_name\r\nA\x81b\r\n"), nil, 400, "neither UTF-8 nor Windows-1252"},
		{"unknown mapping target", []byte("Name\r\nAda\r\n"), map[string]string{"mapping": `{"Name":"nickname"}`}, 400, "not a field"},
		{"mapping names a missing column", []byte("Name\r\nAda\r\n"), map[string]string{"mapping": `{"Nom":"first_name"}`}, 400, "does not have"},
		{"unknown custom key, not to be created", []byte("first_name,custom.tier\r\nAda,gold\r\n"), map[string]string{"create_labels": "false"}, 400, "custom field"},
		{"bad mode", []byte("first_name\r\nAda\r\n"), map[string]string{"mode": "merge"}, 400, "mode"},
		{"vcard without END", []byte("BEGIN:VCARD\r\nVERSION:4.0\r\nFN:Ada\r\n"), nil, 400, "END:VCARD"},
	}
	for _, c := range cases {
		r := u.Post("/api/books/"+book+"/imports", apptest.ImportForm(t, c.file, c.fields))
		if r.Status != c.status || !strings.Contains(string(r.Body), c.msg) {
			t.Errorf("%s: %d %s", c.name, r.Status, r.Body)
		}
	}
	big := bytes.Repeat([]byte("first_name\r\nAda Lovelace with a long line to fill the file\r\n"), 60<<20/60)
	u.Post("/api/books/"+book+"/imports", apptest.ImportForm(t, big, nil)).ExpectError(http.StatusRequestEntityTooLarge, "PAYLOAD_TOO_LARGE")

	// A vCard without FN or N is a failed row, not a contact.
	res := runImport(env, u, book, []byte("BEGIN:VCARD\r\nVERSION:3.0\r\nEMAIL:x@example.com\r\nEND:VCARD\r\n"), nil)
	if res.String("data.status") != "succeeded" || res.Int("data.failed") != 1 || res.Int("data.created") != 0 {
		t.Fatalf("vcard without a name: %s", res.Body)
	}
	if n := env.QueryInt(`SELECT count(*) FROM contacts`); n != 0 {
		t.Fatalf("bad input wrote %d contacts", n)
	}
	if n := env.QueryInt(`SELECT count(*) FROM imports`); n != 1 {
		t.Fatalf("%d imports recorded; only the vCard's was queued", n)
	}
}

func TestImportCancel(t *testing.T) {
	t.Parallel()
	env := apptest.Setup(t, apptest.Options{Bare: true, WithoutJobs: true}).Env
	u := env.Signup("Cancel")
	book := u.CreateBook("Cancel")
	id := u.Post("/api/books/"+book+"/imports", apptest.ImportForm(t, []byte("first_name\r\nAda\r\n"), nil)).Expect(http.StatusAccepted).String("data.id")
	r := u.Delete("/api/books/" + book + "/imports/" + id).Expect(http.StatusOK)
	if r.String("data.status") != "canceled" || !r.Has("data.finished_at") {
		t.Fatalf("cancel: %s", r.Body)
	}
	done, err := env.App.Transfer.Run(t.Context(), uuid.MustParse(id), 0)
	if err != nil || !done {
		t.Fatalf("run of a canceled import: %v %v", done, err)
	}
	if n := env.QueryInt(`SELECT count(*) FROM contacts`); n != 0 {
		t.Fatalf("a canceled import wrote %d contacts", n)
	}
	u.Delete("/api/books/"+book+"/imports/"+book).ExpectError(http.StatusNotFound, "NOT_FOUND")
}

// TestExportImportRoundTrip exports a book as CSV and as vCard and imports
// each file into an empty book: the contacts come back field for field.
func TestExportImportRoundTrip(t *testing.T) {
	t.Parallel()
	env := apptest.Setup(t, apptest.Options{Bare: true}).Env
	u := env.Signup("Trip")
	book := u.CreateBook("Source")
	in := u.InBook(book)
	u.Post("/api/books/"+book+"/fields", map[string]string{"key": "tier", "name": "Tier", "type": "text"}).Expect(http.StatusCreated)
	label2 := u.Post("/api/books/"+book+"/labels", map[string]string{"name": "VIP"}).Expect(http.StatusCreated).String("data.id")
	full := in.Post("/api/contacts", map[string]any{
		"first_name": "Ada", "last_name": "Lovelace", "company": "Engines; Ltd", "job_title": "Countess",
		"notes": "Line one\nLine \"two\", with comma", "website": "https://ada.example.com", "birthday": "1815-12-10", "starred": true,
		"emails":    []map[string]any{{"address": "ada@work.example", "label": "work", "primary": true}, {"address": "ada@home.example", "label": "personal"}, {"address": "ada2@home.example", "label": "personal"}},
		"phones":    []map[string]any{{"number": "+44 20 7946 0000", "label": "mobile", "primary": true}, {"number": "020 1234", "label": "work"}},
		"addresses": []map[string]any{{"label": "home", "street": "12 St James's Sq", "city": "London", "zip": "SW1Y 4JH", "country": "UK"}, {"label": "work", "city": "Cambridge"}},
		"dates":     []map[string]any{{"label": "anniversary", "value": "1835-07-08"}},
		"socials":   []map[string]any{{"label": "github", "value": "adal"}, {"label": "x", "value": "@ada"}},
	}).Expect(http.StatusCreated).String("data.id")
	in.Post("/api/contacts/bulk-update-field", map[string]any{"contact_ids": []string{full}, "field_definition_id": u.Get("/api/books/" + book + "/fields").String("data.0.id"), "value": "gold"}).Expect(http.StatusOK)
	in.Post("/api/contacts/"+full+"/labels", map[string]string{"label_id": label2}).Expect(http.StatusOK)
	in.Post("/api/contacts", map[string]any{"company": "Acme Ümlaut"}).Expect(http.StatusCreated)
	want := bookContacts(t, u, book)
	byContent(want)

	for _, format := range []string{"csv", "vcard"} {
		r := u.Get("/api/books/" + book + "/export?format=" + format).Expect(http.StatusOK)
		if !strings.HasPrefix(r.Header.Get("Content-Disposition"), "attachment") {
			t.Fatalf("%s: Content-Disposition %q", format, r.Header.Get("Content-Disposition"))
		}
		target := u.CreateBook("Target " + format)
		u.Post("/api/books/"+target+"/fields", map[string]string{"key": "tier", "name": "Tier", "type": "text"}).Expect(http.StatusCreated)
		res := runImport(env, u, target, r.Body, nil)
		if res.Int("data.created") != len(want) || res.Int("data.failed") != 0 {
			t.Fatalf("%s import: %s\nfile:\n%s", format, res.Body, r.Body)
		}
		got := bookContacts(t, u, target)
		byContent(got)
		if len(got) != len(want) {
			t.Fatalf("%s: %d contacts back, want %d", format, len(got), len(want))
		}
		for i := range want {
			if a, b := comparable(want[i]), comparable(got[i]); a != b {
				t.Errorf("%s round trip, contact %d:\nwant %s\n got %s", format, i, a, b)
			}
		}
	}
	// The public API's export takes the list's filters.
	key := u.NewKey()
	r := key.InBook(book).Get("/api/v1/contacts/export?starred=true").Expect(http.StatusOK)
	if n := strings.Count(string(r.Body), "\n"); !strings.Contains(string(r.Body), "Lovelace") || strings.Contains(string(r.Body), "Acme") {
		t.Fatalf("filtered export (%d lines): %s", n, r.Body)
	}
}

// comparable is a contact's content as JSON: ids, timestamps, book and
// label ids aside, entries in a stable order.
func comparable(c contacts.Contact) string {
	labels := make([]string, len(c.Labels))
	for i, l := range c.Labels {
		labels[i] = l.Name
	}
	slices.Sort(labels)
	sortBy := func(n int, key func(int) string, swap func(i, j int)) {
		for i := 0; i < n; i++ {
			for j := i + 1; j < n; j++ {
				if key(j) < key(i) {
					swap(i, j)
				}
			}
		}
	}
	sortBy(len(c.Emails), func(i int) string { return c.Emails[i].Address }, func(i, j int) { c.Emails[i], c.Emails[j] = c.Emails[j], c.Emails[i] })
	sortBy(len(c.Phones), func(i int) string { return c.Phones[i].Number }, func(i, j int) { c.Phones[i], c.Phones[j] = c.Phones[j], c.Phones[i] })
	sortBy(len(c.Addresses), func(i int) string { return string(c.Addresses[i].Label) }, func(i, j int) { c.Addresses[i], c.Addresses[j] = c.Addresses[j], c.Addresses[i] })
	sortBy(len(c.Socials), func(i int) string { return string(c.Socials[i].Label) }, func(i, j int) { c.Socials[i], c.Socials[j] = c.Socials[j], c.Socials[i] })
	b, _ := json.Marshal([]any{c.FirstName, c.LastName, c.Company, c.JobTitle, c.Notes, c.Website, c.Birthday, c.Starred,
		c.Emails, c.Phones, c.Addresses, c.Dates, c.Socials, c.CustomFields, labels})
	return string(b)
}

// byContent orders contacts by their content: contacts created in one
// import share their creation time.
func byContent(cs []contacts.Contact) {
	slices.SortFunc(cs, func(a, b contacts.Contact) int { return strings.Compare(comparable(a), comparable(b)) })
}

// The preview reads the file as the import would and queues nothing: the
// detected columns (or those of a mapping), the first records, the count;
// a mapping it shows, sent back with the import, takes effect.
func TestImportPreview(t *testing.T) {
	t.Parallel()
	env := apptest.Setup(t, apptest.Options{Bare: true}).Env
	u := env.Signup("Importer")
	book := u.CreateBook("Imported")
	csv := "Name,E-mail,Team\r\nAnn Lee,ann@example.com,Blue\r\nBob Ray,bob@example.com,Red\r\n"
	p := u.Post("/api/books/"+book+"/imports/preview", apptest.ImportForm(t, []byte(csv), nil)).Expect(http.StatusOK)
	var got struct {
		Format    string `json:"format"`
		TotalRows int    `json:"total_rows"`
		Columns   []struct{ Header, Target string }
		Rows      [][]string
	}
	p.Decode("data", &got)
	if got.Format != "csv" || got.TotalRows != 2 || len(got.Rows) != 2 || got.Rows[1][0] != "Bob Ray" ||
		fmt.Sprint(got.Columns) != "[{Name full_name} {E-mail emails.other} {Team ignore}]" {
		t.Fatalf("preview: %+v", got)
	}
	if n := env.QueryInt(`SELECT count(*) FROM imports`); n != 0 {
		t.Fatalf("a preview queued %d imports", n)
	}
	// The edited mapping: Team becomes the company; full_name goes back as it was shown.
	mapping := `{"Name":"full_name","E-mail":"emails.work","Team":"company"}`
	p = u.Post("/api/books/"+book+"/imports/preview", apptest.ImportForm(t, []byte(csv), map[string]string{"mapping": mapping})).Expect(http.StatusOK)
	if p.String("data.columns.2.target") != "company" || p.String("data.columns.1.target") != "emails.work" {
		t.Fatalf("mapped preview: %s", p.Body)
	}
	res := runImport(env, u, book, []byte(csv), map[string]string{"mapping": mapping})
	if res.Int("data.created") != 2 {
		t.Fatalf("import: %s", res.Body)
	}
	var ann *contacts.Contact
	for _, c := range bookContacts(t, u, book) {
		if c.FirstName == "Ann" {
			ann = &c
		}
	}
	if ann == nil || ann.LastName != "Lee" || ann.Company != "Blue" || ann.Emails[0].Label != "work" {
		t.Fatalf("imported: %+v", ann)
	}
	vcf := "BEGIN:VCARD\r\nVERSION:4.0\r\nFN:Cy Vee\r\nN:Vee;Cy;;;\r\nEMAIL:cy@example.com\r\nORG:Acme\r\nEND:VCARD\r\n"
	v := u.Post("/api/books/"+book+"/imports/preview", apptest.ImportForm(t, []byte(vcf), nil)).Expect(http.StatusOK)
	if v.String("data.format") != "vcard" || v.Len("data.columns") != 0 || v.String("data.rows.0.0") != "Cy Vee" || v.String("data.rows.0.1") != "cy@example.com" {
		t.Fatalf("vcard preview: %s", v.Body)
	}
	u.Post("/api/books/"+book+"/imports/preview", apptest.ImportForm(t, []byte("a,b\r\n1,2\r\n"), nil)).ExpectError(http.StatusBadRequest, "INVALID_INPUT")
	// The preview makes the import's own checks: an unknown format is refused as Start refuses it.
	if r := u.Post("/api/books/"+book+"/imports/preview", apptest.ImportForm(t, []byte(csv), map[string]string{"format": "xml"})).ExpectError(http.StatusBadRequest, "INVALID_INPUT"); !strings.Contains(r.String("error.message"), "`format`") {
		t.Fatalf("format: %s", r.Body)
	}
	env.Join(u, "viewer", "viewer").Post("/api/books/"+book+"/imports/preview", apptest.ImportForm(t, []byte(csv), nil)).ExpectError(http.StatusForbidden, "FORBIDDEN")
}
