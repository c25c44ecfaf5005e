package transfer_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/contactbook/contactbook/internal/apptest"
	"github.com/contactbook/contactbook/internal/contacts"
	"github.com/contactbook/contactbook/internal/transfer"
)

// runImport imports file into book with the form's fields, waits for it
// and returns the finished import.
func runImport(t *testing.T, env *apptest.Env, u *apptest.User, book string, file []byte, fields map[string]string) *apptest.Response {
	t.Helper()
	id := queue(t, u, book, file, fields)
	env.WaitJobs()
	return u.Get("/api/books/" + book + "/imports/" + id.String()).Expect(http.StatusOK)
}

// bookContacts are the book's contacts as the API returns them, without
// what a round trip does not keep (ids, times, relationships, the photo,
// a label's id and color), sorted by name. A contact's labels are sorted
// by name: the API lists them in the book's order of labels, which is the
// book's and not the contact's (an import creates the labels in the order
// the file first names them).
func bookContacts(t *testing.T, u *apptest.User, book string) []contacts.Contact {
	t.Helper()
	var cs []contacts.Contact
	u.InBook(book).Get("/api/contacts?limit=100").Expect(http.StatusOK).Decode("data", &cs)
	for i := range cs {
		c := &cs[i]
		c.ID, c.BookID, c.CreatedBy, c.CreatedAt, c.UpdatedAt = uuid.Nil, uuid.Nil, nil, time.Time{}, time.Time{}
		c.Relationships, c.PhotoURL = nil, nil
		for j := range c.Labels {
			c.Labels[j].ID, c.Labels[j].Color = uuid.Nil, ""
		}
		slices.SortFunc(c.Labels, func(a, b contacts.LabelRef) int { return strings.Compare(a.Name, b.Name) })
	}
	slices.SortFunc(cs, func(a, b contacts.Contact) int { return strings.Compare(a.DisplayName(), b.DisplayName()) })
	return cs
}

// bookFields are the book's custom field definitions as "key name type".
func bookFields(t *testing.T, u *apptest.User, book string) []string {
	t.Helper()
	var fs []struct{ Key, Name, Type string }
	u.Get("/api/books/"+book+"/fields").Expect(http.StatusOK).Decode("data", &fs)
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.Key + " " + f.Name + " " + f.Type
	}
	slices.Sort(out)
	return out
}

func sameContacts(t *testing.T, what string, got, want []contacts.Contact) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		g, _ := json.MarshalIndent(got, "", " ")
		w, _ := json.MarshalIndent(want, "", " ")
		t.Fatalf("%s: the contacts differ\ngot  %s\nwant %s", what, g, w)
	}
}

// TestExportImportRoundTrip: a book exported as CSV and as vCard and
// imported into an empty book gives back the same contacts, field for
// field: every email, phone, address, date and profile in its order with
// its label and primary flag (several of one label included), notes as
// written, the time zone, labels and custom fields of every type, whose
// definitions the import creates.
func TestExportImportRoundTrip(t *testing.T) {
	t.Parallel()
	env := apptest.Setup(t, apptest.Options{Bare: true}).Env
	u := env.Signup("Round")
	src := u.CreateBook("Source")
	in := u.InBook(src)
	fields := map[string]string{}
	for key, typ := range map[string]string{"tier": "text", "site": "url", "score": "number", "since": "date"} {
		fields[key] = u.Post("/api/books/"+src+"/fields", map[string]string{"key": key, "name": "The " + key, "type": typ}).
			Expect(http.StatusCreated).String("data.id")
	}
	vip := u.Post("/api/books/"+src+"/labels", map[string]any{"name": "VIP"}).Expect(http.StatusCreated).String("data.id")
	friends := u.Post("/api/books/"+src+"/labels", map[string]any{"name": "Friends"}).Expect(http.StatusCreated).String("data.id")

	ada := in.Post("/api/contacts", map[string]any{
		"first_name": "Ada", "last_name": "Lovelace", "company": "Analytical Engines", "job_title": "Countess",
		"notes":   "  Leading spaces, a comma; a semicolon\nand a second line  ",
		"website": "https://ada.example.com/about", "birthday": "1815-12-10", "starred": true, "time_zone": "Europe/London",
		"emails": []any{
			map[string]any{"address": "ada@home.example", "label": "personal"},
			map[string]any{"address": "ada@work.example", "label": "work", "primary": true},
			map[string]any{"address": "ada@other.example", "label": "other"},
			map[string]any{"address": "countess@home.example", "label": "personal"},
		},
		"phones": []any{
			map[string]any{"number": "020 7946 0000", "label": "work"},
			map[string]any{"number": "+44 20 7946 0958", "label": "mobile", "primary": true},
		},
		"addresses": []any{
			map[string]any{"label": "home", "street": "12 St James's Square, Flat 3", "city": "London", "zip": "SW1Y 4JH", "country": "UK"},
			map[string]any{"label": "work", "city": "Manchester"},
			map[string]any{"label": "home", "street": "1 Rue de Rivoli", "city": "Paris", "state": "IDF", "country": "France"},
		},
		"dates": []any{
			map[string]any{"label": "anniversary", "value": "1835-07-08"},
			map[string]any{"label": "graduation", "value": "1833-06-05"},
			map[string]any{"label": "anniversary", "value": "1845-07-08"},
		},
		"socials": []any{
			map[string]any{"label": "github", "value": "ada"},
			map[string]any{"label": "x", "value": "@ada"},
			map[string]any{"label": "github", "value": "ada-engines"},
		},
		"relationships": []any{map[string]any{"label": "spouse", "name": "William King"}},
	}).Expect(http.StatusCreated).String("data.id")
	acme := in.Post("/api/contacts", map[string]any{
		"company": "Acme Ltd", "emails": []any{map[string]any{"address": "hello@acme.example"}},
	}).Expect(http.StatusCreated).String("data.id")
	in.Post("/api/contacts", map[string]any{
		"first_name": "Grace", "last_name": "Hopper", "notes": "\nStarts with a line break",
		"phones": []any{map[string]any{"number": "555-0100"}},
	}).Expect(http.StatusCreated)
	in.Post("/api/contacts/"+ada+"/labels", map[string]any{"label_id": vip}).Expect(http.StatusOK)
	in.Post("/api/contacts/"+ada+"/labels", map[string]any{"label_id": friends}).Expect(http.StatusOK)
	in.Post("/api/contacts/"+acme+"/labels", map[string]any{"label_id": friends}).Expect(http.StatusOK)
	set := func(ids []string, key, value string) {
		in.Post("/api/contacts/bulk-update-field", map[string]any{"contact_ids": ids, "field_definition_id": fields[key], "value": value}).
			Expect(http.StatusOK)
	}
	set([]string{ada}, "tier", "  gold, with spaces ")
	set([]string{acme}, "tier", "silver")
	set([]string{ada}, "site", "https://ada.example.org/engines?x=1,2")
	set([]string{ada}, "score", "42.5")
	set([]string{ada}, "since", "2020-02-29")
	want := bookContacts(t, u, src)

	for _, format := range []string{"csv", "vcard"} {
		t.Run(format, func(t *testing.T) {
			env.T = t
			file := u.Get("/api/books/" + src + "/export?format=" + format).Expect(http.StatusOK).Body
			dst := u.CreateBook("From " + format)
			r := runImport(t, env, u, dst, file, nil)
			if r.String("data.status") != "succeeded" || r.Int("data.created") != 3 || r.Int("data.failed") != 0 {
				t.Fatalf("import: %s\nfile:\n%s", r.Body, file)
			}
			sameContacts(t, format, bookContacts(t, u, dst), want)
			// The fields are created, named by their key; the vCard
			// carries their types, a CSV column only the key.
			wantFields := []string{"score score number", "since since date", "site site url", "tier tier text"}
			if format == "csv" {
				wantFields = []string{"score score text", "since since text", "site site text", "tier tier text"}
			}
			if got := bookFields(t, u, dst); !slices.Equal(got, wantFields) {
				t.Fatalf("fields %q, want %q", got, wantFields)
			}
			// The copy exports as the original did, so it imports back
			// the same again.
			again := u.CreateBook("Again from " + format)
			if r := runImport(t, env, u, again, u.Get("/api/books/"+dst+"/export?format="+format).Expect(http.StatusOK).Body, nil); r.Int("data.created") != 3 {
				t.Fatalf("second import: %s", r.Body)
			}
			sameContacts(t, format+" twice", bookContacts(t, u, again), want)
		})
	}
}

// TestCSVExportKeepsEveryEntry: the CSV export writes every entry of a
// contact as a numbered entry in the contact's order, as many columns as
// the contact with the most needs, and notes as written; its columns are
// mapping targets that the preview shows.
func TestCSVExportKeepsEveryEntry(t *testing.T) {
	t.Parallel()
	env := apptest.Setup(t, apptest.Options{Bare: true}).Env
	u := env.Signup("Entries")
	src := u.CreateBook("Entries")
	u.InBook(src).Post("/api/contacts", map[string]any{
		"first_name": "Ada", "notes": " padded \n",
		"emails": []any{
			map[string]any{"address": "ada@home.example", "label": "personal"},
			map[string]any{"address": "ada@work.example", "label": "work", "primary": true},
		},
		"addresses": []any{
			map[string]any{"label": "home", "city": "London"},
			map[string]any{"label": "home", "city": "Paris"},
		},
		"dates": []any{
			map[string]any{"label": "anniversary", "value": "1835-07-08"},
			map[string]any{"label": "anniversary", "value": "1845-07-08"},
		},
	}).Expect(http.StatusCreated)
	file := u.Get("/api/books/" + src + "/export").Expect(http.StatusOK).Body
	line, _, _ := bytes.Cut(file, []byte("\n"))
	header := strings.Split(string(line), ",")
	for _, col := range []string{"emails.2.address", "emails.2.label", "emails.2.primary", "addresses.2.label", "addresses.2.city", "dates.2.label", "dates.2.value"} {
		if !slices.Contains(header, col) {
			t.Errorf("the header lacks %s: %s", col, line)
		}
	}
	if slices.Contains(header, "emails.3.address") || slices.Contains(header, "socials.1.value") {
		t.Errorf("the header has columns no contact needs: %s", line)
	}
	p := u.Post("/api/books/"+src+"/imports/preview", apptest.ImportForm(t, file, nil)).Expect(http.StatusOK)
	var cols []transfer.PreviewColumn
	p.Decode("data.columns", &cols)
	for _, c := range cols {
		if c.Target != c.Header {
			t.Errorf("column %s goes to %s", c.Header, c.Target)
		}
	}
	dst := u.CreateBook("Copy")
	runImport(t, env, u, dst, file, nil)
	c := bookContacts(t, u, dst)
	if len(c) != 1 || c[0].Notes != " padded \n" ||
		len(c[0].Emails) != 2 || c[0].Emails[0].Label != "personal" || c[0].Emails[1].Label != "work" || !c[0].Emails[1].Primary || c[0].Emails[0].Primary ||
		len(c[0].Addresses) != 2 || c[0].Addresses[1].City != "Paris" || len(c[0].Dates) != 2 || c[0].Dates[1].Value != "1845-07-08" {
		t.Fatalf("imported: %+v", c)
	}
}

// TestImportOlderExport: a file of the export's earlier columns (one per
// label, several values of a label in one cell with the primary marked)
// still imports.
func TestImportOlderExport(t *testing.T) {
	t.Parallel()
	env := apptest.Setup(t, apptest.Options{Bare: true}).Env
	u := env.Signup("Older")
	book := u.CreateBook("Older")
	file := "first_name,last_name,emails.work,emails.personal,phones.mobile,addresses.home.city,socials.github,dates.anniversary,notes,labels\r\n" +
		"Ada,Lovelace,ada@work.example (primary); ada2@work.example,ada@home.example,+44 20 7946 0958 (primary),London,ada; ada2,1835-07-08,  kept  ,VIP; Friends\r\n"
	r := runImport(t, env, u, book, []byte(file), nil)
	if r.Int("data.created") != 1 {
		t.Fatalf("import: %s", r.Body)
	}
	c := bookContacts(t, u, book)[0]
	if len(c.Emails) != 3 || !c.Emails[0].Primary || c.Emails[1].Address != "ada2@work.example" || c.Emails[2].Label != "personal" ||
		len(c.Phones) != 1 || !c.Phones[0].Primary || len(c.Addresses) != 1 || len(c.Socials) != 2 || len(c.Dates) != 1 ||
		c.Notes != "  kept  " || len(c.Labels) != 2 {
		t.Fatalf("imported: %+v", c)
	}
}

// TestImportCreatesMissingCustomFields: custom columns (or vCard
// properties) of keys the book lacks create the fields, as text named by
// their key unless the vCard says the type, with create_labels (the
// default); without it the CSV is refused and a vCard row fails as
// before. A dry run creates nothing and counts the rows as if the fields
// existed.
func TestImportCreatesMissingCustomFields(t *testing.T) {
	t.Parallel()
	env := apptest.Setup(t, apptest.Options{Bare: true}).Env
	u := env.Signup("Fields")
	csv := []byte("first_name,custom.tier,custom.plan\r\nAda,gold,\r\nBob,,basic\r\n")
	card := []byte("BEGIN:VCARD\r\nVERSION:4.0\r\nFN:Cy Card\r\nN:Card;Cy;;;\r\nX-CONTACTBOOK-CUSTOM;KEY=score;VALUE=float:7\r\nX-CONTACTBOOK-CUSTOM;KEY=tier:bronze\r\nEND:VCARD\r\n")

	dry := u.CreateBook("Dry")
	r := runImport(t, env, u, dry, csv, map[string]string{"dry_run": "true"})
	if r.String("data.status") != "succeeded" || r.Int("data.created") != 2 || r.Int("data.failed") != 0 {
		t.Fatalf("dry run: %s", r.Body)
	}
	if f := bookFields(t, u, dry); len(f) != 0 {
		t.Fatalf("a dry run created the fields %q", f)
	}
	// The vCard's type is checked in the dry run as it would be.
	bad := bytes.Replace(card, []byte("float:7"), []byte("float:lots"), 1)
	if r := runImport(t, env, u, dry, bad, map[string]string{"dry_run": "true"}); r.Int("data.failed") != 1 || r.String("data.errors.0.column") != "X-CONTACTBOOK-CUSTOM" {
		t.Fatalf("dry run of a bad number: %s", r.Body)
	}

	book := u.CreateBook("Fields")
	if r := runImport(t, env, u, book, csv, nil); r.Int("data.created") != 2 || r.Int("data.failed") != 0 {
		t.Fatalf("csv: %s", r.Body)
	}
	if r := runImport(t, env, u, book, card, nil); r.Int("data.created") != 1 || r.Int("data.failed") != 0 {
		t.Fatalf("vcard: %s", r.Body)
	}
	if got, want := bookFields(t, u, book), []string{"plan plan text", "score score number", "tier tier text"}; !slices.Equal(got, want) {
		t.Fatalf("fields %q, want %q", got, want)
	}
	got := map[string]map[string]string{}
	for _, c := range bookContacts(t, u, book) {
		got[c.FirstName] = c.CustomFields
	}
	if got["Ada"]["tier"] != "gold" || got["Bob"]["plan"] != "basic" || got["Cy"]["score"] != "7" || got["Cy"]["tier"] != "bronze" || len(got["Ada"]) != 1 {
		t.Fatalf("values: %v", got)
	}

	strict := u.CreateBook("Strict")
	u.Post("/api/books/"+strict+"/imports", apptest.ImportForm(t, csv, map[string]string{"create_labels": "false"})).
		ExpectError(http.StatusBadRequest, "INVALID_INPUT")
	r = runImport(t, env, u, strict, card, map[string]string{"create_labels": "false"})
	if r.Int("data.failed") != 1 || r.String("data.errors.0.column") != "X-CONTACTBOOK-CUSTOM" || !strings.Contains(r.String("data.errors.0.message"), "No custom field") {
		t.Fatalf("vcard without create_labels: %s", r.Body)
	}
	if f := bookFields(t, u, strict); len(f) != 0 {
		t.Fatalf("fields created without create_labels: %q", f)
	}
}

// TestConcurrentImportsCreateFieldsOnce: imports running at once on two
// instances, each naming the same custom fields the book lacks, all
// succeed and the book gets each field once.
func TestConcurrentImportsCreateFieldsOnce(t *testing.T) {
	t.Parallel()
	env := apptest.Setup(t, apptest.Options{Bare: true, WithoutJobs: true}).Env
	other := apptest.Setup(t, apptest.Options{Bare: true, WithoutJobs: true, DatabaseURL: env.DBURL}).Env
	u := env.Signup("Race")
	book := u.CreateBook("Race")
	var ids []uuid.UUID
	for i := range 6 {
		var b strings.Builder
		b.WriteString("first_name,last_name,custom.plan,custom.tier,custom.zone\r\n")
		for j := range 50 {
			b.WriteString("P" + string(rune('a'+i)) + ",N" + strings.Repeat("x", j) + ",basic,gold,eu\r\n")
		}
		ids = append(ids, queue(t, u, book, []byte(b.String()), map[string]string{"mode": "create"}))
	}
	var wg sync.WaitGroup
	for i, id := range ids {
		svc := env.App.Transfer
		if i%2 == 1 {
			svc = other.App.Transfer
		}
		wg.Go(func() {
			if _, err := svc.Run(context.Background(), id, 1<<62); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	for _, id := range ids {
		r := u.Get("/api/books/" + book + "/imports/" + id.String()).Expect(http.StatusOK)
		if r.String("data.status") != "succeeded" || r.Int("data.created") != 50 {
			t.Fatalf("import: %s", r.Body)
		}
	}
	if got, want := bookFields(t, u, book), []string{"plan plan text", "tier tier text", "zone zone text"}; !slices.Equal(got, want) {
		t.Fatalf("fields %q, want %q", got, want)
	}
	if n := env.QueryInt(`SELECT count(*) FROM contact_field_values`); n != 6*50*3 {
		t.Fatalf("%d values, want %d", n, 6*50*3)
	}
}

// TestVCardTimeZone: the vCard export writes the time zone as TZ and the
// import reads it back; a name that is no IANA zone fails its card, an
// offset from UTC (vCard 3.0's default) is left out.
func TestVCardTimeZone(t *testing.T) {
	t.Parallel()
	env := apptest.Setup(t, apptest.Options{Bare: true}).Env
	u := env.Signup("TZ")
	src := u.CreateBook("Zones")
	u.InBook(src).Post("/api/contacts", map[string]any{"first_name": "Zoe", "time_zone": "America/New_York"}).Expect(http.StatusCreated)
	file := u.Get("/api/books/" + src + "/export?format=vcard").Expect(http.StatusOK).Body
	if !bytes.Contains(file, []byte("\r\nTZ:America/New_York\r\n")) {
		t.Fatalf("export: %s", file)
	}
	dst := u.CreateBook("Copy")
	runImport(t, env, u, dst, file, nil)
	if got := u.InBook(dst).Get("/api/contacts").Expect(http.StatusOK).String("data.0.time_zone"); got != "America/New_York" {
		t.Fatalf("time_zone %q", got)
	}
	cards := "BEGIN:VCARD\r\nVERSION:3.0\r\nFN:Mo Mars\r\nTZ:Mars/Base\r\nEND:VCARD\r\n" +
		"BEGIN:VCARD\r\nVERSION:3.0\r\nFN:Olga Offset\r\nTZ:-05:00\r\nEND:VCARD\r\n" +
		"BEGIN:VCARD\r\nVERSION:3.0\r\nFN:Tess Text\r\nTZ;VALUE=text:Asia/Tokyo\r\nEND:VCARD\r\n"
	other := u.CreateBook("Cards")
	r := runImport(t, env, u, other, []byte(cards), nil)
	if r.Int("data.created") != 2 || r.Int("data.failed") != 1 || r.String("data.errors.0.column") != "TZ" || r.Int("data.errors.0.row") != 1 {
		t.Fatalf("import: %s", r.Body)
	}
	zones := map[string]string{}
	for _, c := range bookContacts(t, u, other) {
		if c.TimeZone != nil {
			zones[c.FirstName] = *c.TimeZone
		}
	}
	if len(zones) != 1 || zones["Tess"] != "Asia/Tokyo" {
		t.Fatalf("zones: %v", zones)
	}
}
