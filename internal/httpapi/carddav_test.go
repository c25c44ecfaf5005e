package httpapi_test

import (
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/contactbook/contactbook/internal/apptest"
)

const (
	propfindAll = `<?xml version="1.0"?><d:propfind xmlns:d="DAV:" xmlns:card="urn:ietf:params:xml:ns:carddav" xmlns:cs="http://calendarserver.org/ns/">
<d:prop><d:current-user-principal/><card:addressbook-home-set/><d:resourcetype/><d:displayname/><cs:getctag/><d:sync-token/><d:getetag/><d:current-user-privilege-set/><d:supported-report-set/></d:prop></d:propfind>`
)

func mustContain(t *testing.T, r *apptest.Response, subs ...string) {
	t.Helper()
	for _, s := range subs {
		if !strings.Contains(string(r.Body), s) {
			t.Fatalf("%d answer lacks %q:\n%s", r.Status, s, r.Body)
		}
	}
}

var etagRe = regexp.MustCompile(`<d:getetag>&#34;(\d+)&#34;</d:getetag>`)

func TestCardDAVDiscovery(t *testing.T) {
	t.Parallel()
	tm := apptest.Setup(t)
	dav := tm.Owner.DAV()
	anon := &apptest.DAVClient{}
	*anon = *dav
	anon.Email = ""

	r := anon.Do(http.MethodGet, "/.well-known/carddav", "")
	if r.Status != http.StatusMovedPermanently || r.Header.Get("Location") != "/dav/" {
		t.Fatalf("well-known: %d %v", r.Status, r.Header)
	}
	r = anon.Do("PROPFIND", "/dav/", propfindAll, "Depth", "0")
	if r.Status != http.StatusUnauthorized || !strings.HasPrefix(r.Header.Get("WWW-Authenticate"), "Basic ") {
		t.Fatalf("no credentials: %d %v", r.Status, r.Header)
	}
	// The account password is no app password.
	wrong := *dav
	wrong.Password = "correct horse battery"
	if r = wrong.Do("PROPFIND", "/dav/", propfindAll, "Depth", "0"); r.Status != http.StatusUnauthorized {
		t.Fatalf("account password: %d", r.Status)
	}

	r = dav.Do("PROPFIND", "/dav/", propfindAll, "Depth", "0")
	if r.Status != http.StatusMultiStatus {
		t.Fatalf("root: %d %s", r.Status, r.Body)
	}
	mustContain(t, r, "<d:current-user-principal><d:href>"+dav.PrincipalPath+"</d:href>")
	r = dav.Do("PROPFIND", dav.PrincipalPath, propfindAll, "Depth", "0")
	mustContain(t, r, "<card:addressbook-home-set><d:href>"+dav.PrincipalPath+"books/</d:href>")
	r = dav.Do("PROPFIND", dav.PrincipalPath+"books/", propfindAll, "Depth", "1")
	mustContain(t, r, "<d:href>"+dav.BookPath(tm.Book)+"</d:href>", "<d:displayname>Customers</d:displayname>",
		"<card:addressbook/>", "<cs:getctag>urn:contactbook:sync:", "<d:sync-collection/>", "<d:write/>")
	// A viewer's address book is read-only.
	r = tm.Viewer.DAV().Do("PROPFIND", "/dav/"+tm.Viewer.ID+"/books/", propfindAll, "Depth", "1")
	mustContain(t, r, "<d:displayname>Customers</d:displayname>")
	if strings.Contains(string(r.Body), "<d:write/>") {
		t.Fatalf("a viewer may write: %s", r.Body)
	}
	// Another user's paths are not there.
	if r = dav.Do("PROPFIND", "/dav/"+tm.Viewer.ID+"/books/", propfindAll, "Depth", "1"); r.Status != http.StatusNotFound {
		t.Fatalf("another user's home: %d", r.Status)
	}
	// A book of another team is not there either.
	other := tm.AddTeam("rival")
	if r = dav.Do("PROPFIND", dav.BookPath(other.Book), propfindAll, "Depth", "0"); r.Status != http.StatusNotFound {
		t.Fatalf("another team's book: %d %s", r.Status, r.Body)
	}
}

func TestCardDAVReadWrite(t *testing.T) {
	t.Parallel()
	tm := apptest.Setup(t)
	dav := tm.Member.DAV()
	book := dav.BookPath(tm.Book)
	id := tm.M.NewContactWith(map[string]any{"first_name": "Ada", "last_name": "Lovelace", "company": "Engines"}, "ada@example.com")

	r := dav.Do("PROPFIND", book, propfindAll, "Depth", "1")
	mustContain(t, r, "<d:href>"+book+id+".vcf</d:href>")
	r = dav.Do(http.MethodGet, book+id+".vcf", "")
	if r.Status != http.StatusOK || r.Header.Get("ETag") == "" {
		t.Fatalf("get: %d %v %s", r.Status, r.Header, r.Body)
	}
	mustContain(t, r, "VERSION:3.0", "FN:Ada Lovelace", "N:Lovelace;Ada;", "EMAIL;TYPE=work;TYPE=pref:ada@example.com", "UID:"+id)
	r = dav.Do(http.MethodGet, book+id+".vcf", "", "Accept", "text/vcard; version=4.0")
	mustContain(t, r, "VERSION:4.0", "PREF=1")

	card := "BEGIN:VCARD\r\nVERSION:3.0\r\nUID:phone-uid-1\r\nFN:Grace Hopper\r\nN:Hopper;Grace;;Rear Admiral;\r\n" +
		"item1.EMAIL;TYPE=INTERNET:grace@example.com\r\nitem1.X-ABLabel:Navy\r\nTEL;TYPE=CELL:+1 555 0100\r\n" +
		"X-SOCIALPROFILE;TYPE=twitter;X-USER=grace:https://x.com/grace\r\nPHOTO;ENCODING=b;TYPE=JPEG:aGVsbG8=\r\nNICKNAME:Amazing Grace\r\nCATEGORIES:Navy,Science\r\nEND:VCARD\r\n"
	r = dav.Do(http.MethodPut, book+"phone-uid-1.vcf", card, "If-None-Match", "*")
	if r.Status != http.StatusCreated || r.Header.Get("ETag") == "" {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	first := r.Header.Get("ETag")
	if r = dav.Do(http.MethodPut, book+"phone-uid-1.vcf", card, "If-None-Match", "*"); r.Status != http.StatusPreconditionFailed {
		t.Fatalf("create again: %d", r.Status)
	}
	// What the service has no field for comes back as it was sent.
	r = dav.Do(http.MethodGet, book+"phone-uid-1.vcf", "")
	mustContain(t, r, "UID:phone-uid-1", "item1.EMAIL;TYPE=INTERNET:grace@example.com", "item1.X-ABLABEL:Navy", "NICKNAME:Amazing Grace",
		"N:Hopper;Grace;;Rear Admiral;", "X-SOCIALPROFILE;TYPE=twitter;X-USER=grace:https://x.com/grace", "PHOTO;ENCODING=b;TYPE=JPEG:aGVsbG8=")
	// The contact holds the mapped fields, labels included.
	list := tm.M.Get("/api/contacts?q=grace").Expect(http.StatusOK)
	if list.Len("data") != 1 || list.String("data.0.last_name") != "Hopper" || list.String("data.0.phones.0.label") != "mobile" ||
		list.Len("data.0.labels") != 2 || list.String("data.0.socials.0.label") != "x" {
		t.Fatalf("the contact: %s", list.Body)
	}
	gid := list.String("data.0.id")

	// An edit through the API changes the ETag; a PUT with the old one is refused.
	tm.M.Patch("/api/contacts/"+gid, map[string]any{"job_title": "Admiral"}).Expect(http.StatusOK)
	r = dav.Do(http.MethodGet, book+"phone-uid-1.vcf", "")
	second := r.Header.Get("ETag")
	if second == first {
		t.Fatal("the ETag did not change with an API edit")
	}
	mustContain(t, r, "TITLE:Admiral", "NICKNAME:Amazing Grace")
	if r = dav.Do(http.MethodPut, book+"phone-uid-1.vcf", card, "If-Match", first); r.Status != http.StatusPreconditionFailed {
		t.Fatalf("stale If-Match: %d", r.Status)
	}
	edited := strings.Replace(card, "TEL;TYPE=CELL:+1 555 0100\r\n", "TEL;TYPE=WORK:+1 555 0199\r\n", 1)
	r = dav.Do(http.MethodPut, book+"phone-uid-1.vcf", edited, "If-Match", second)
	if r.Status != http.StatusNoContent || r.Header.Get("ETag") == second {
		t.Fatalf("update: %d %v %s", r.Status, r.Header, r.Body)
	}
	c := tm.M.Get("/api/contacts/" + gid).Expect(http.StatusOK)
	if c.String("data.phones.0.number") != "+1 555 0199" || c.String("data.phones.0.label") != "work" || c.String("data.job_title") != "" {
		t.Fatalf("after the phone's edit: %s", c.Body)
	}
	// A label change is a change of the card.
	third := dav.Do(http.MethodGet, book+"phone-uid-1.vcf", "").Header.Get("ETag")
	tm.M.Delete("/api/contacts/" + gid + "/labels/" + c.String("data.labels.0.id")).Expect(http.StatusNoContent)
	if dav.Do(http.MethodGet, book+"phone-uid-1.vcf", "").Header.Get("ETag") == third {
		t.Fatal("the ETag did not change with a label removed")
	}

	// A card naming nobody is refused as invalid address data.
	r = dav.Do(http.MethodPut, book+"nobody.vcf", "BEGIN:VCARD\r\nVERSION:3.0\r\nUID:nobody\r\nNOTE:hi\r\nEND:VCARD\r\n")
	if r.Status != http.StatusBadRequest {
		t.Fatalf("no name: %d %s", r.Status, r.Body)
	}
	mustContain(t, r, "valid-address-data")
	// A viewer reads and may not write.
	viewer := tm.Viewer.DAV()
	vbook := viewer.BookPath(tm.Book)
	if r = viewer.Do(http.MethodGet, vbook+"phone-uid-1.vcf", ""); r.Status != http.StatusOK {
		t.Fatalf("viewer get: %d", r.Status)
	}
	if r = viewer.Do(http.MethodPut, vbook+"viewer.vcf", strings.Replace(card, "phone-uid-1", "viewer", 1)); r.Status != http.StatusForbidden {
		t.Fatalf("viewer put: %d %s", r.Status, r.Body)
	}
	if r = viewer.Do(http.MethodDelete, vbook+"phone-uid-1.vcf", ""); r.Status != http.StatusForbidden {
		t.Fatalf("viewer delete: %d", r.Status)
	}
	// Delete with a stale ETag is refused, with the current one done.
	if r = dav.Do(http.MethodDelete, book+"phone-uid-1.vcf", "", "If-Match", second); r.Status != http.StatusPreconditionFailed {
		t.Fatalf("stale delete: %d", r.Status)
	}
	cur := dav.Do(http.MethodGet, book+"phone-uid-1.vcf", "").Header.Get("ETag")
	if r = dav.Do(http.MethodDelete, book+"phone-uid-1.vcf", "", "If-Match", cur); r.Status != http.StatusNoContent {
		t.Fatalf("delete: %d %s", r.Status, r.Body)
	}
	tm.M.Get("/api/contacts/"+gid).ExpectError(http.StatusNotFound, "NOT_FOUND")
	if r = dav.Do(http.MethodGet, book+"phone-uid-1.vcf", ""); r.Status != http.StatusNotFound {
		t.Fatalf("get deleted: %d", r.Status)
	}
}
