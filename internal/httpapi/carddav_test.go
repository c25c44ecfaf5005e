package httpapi_test

import (
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

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
	if r = anon.Do("PROPFIND", "/.well-known/carddav/", ""); r.Status != http.StatusMovedPermanently || r.Header.Get("Location") != "/dav/" {
		t.Fatalf("well-known with a slash, PROPFIND: %d %v", r.Status, r.Header)
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

func syncReport(token string) string {
	return `<?xml version="1.0"?><d:sync-collection xmlns:d="DAV:" xmlns:card="urn:ietf:params:xml:ns:carddav"><d:sync-token>` + token +
		`</d:sync-token><d:sync-level>1</d:sync-level><d:prop><d:getetag/></d:prop></d:sync-collection>`
}

var tokenRe = regexp.MustCompile(`<d:sync-token>([^<]+)</d:sync-token>`)

func syncTokenOf(t *testing.T, r *apptest.Response) string {
	t.Helper()
	m := tokenRe.FindStringSubmatch(string(r.Body))
	if m == nil {
		t.Fatalf("no sync-token in %d %s", r.Status, r.Body)
	}
	return m[1]
}

func TestCardDAVReports(t *testing.T) {
	t.Parallel()
	tm := apptest.Setup(t)
	dav := tm.Member.DAV()
	book := dav.BookPath(tm.Book)
	ids := []string{
		tm.M.NewContactWith(map[string]any{"first_name": "Ada", "last_name": "Lovelace"}, "ada@example.com"),
		tm.M.NewContactWith(map[string]any{"first_name": "Alan", "last_name": "Turing", "phones": []map[string]any{{"number": "+44 20 7946 0000"}}}, "alan@example.com"),
		tm.M.NewContactWith(map[string]any{"company": "Bletchley Park"}, ""),
	}

	// multiget answers the cards named, in the version asked; an unknown
	// name is a 404 member.
	mg := `<?xml version="1.0"?><card:addressbook-multiget xmlns:d="DAV:" xmlns:card="urn:ietf:params:xml:ns:carddav">` +
		`<d:prop><d:getetag/><card:address-data content-type="text/vcard" version="4.0"/></d:prop>` +
		`<d:href>` + book + ids[0] + `.vcf</d:href><d:href>` + book + ids[1] + `.vcf</d:href><d:href>` + book + `missing.vcf</d:href></card:addressbook-multiget>`
	r := dav.Do("REPORT", book, mg, "Depth", "1")
	if r.Status != http.StatusMultiStatus {
		t.Fatalf("multiget: %d %s", r.Status, r.Body)
	}
	mustContain(t, r, "FN:Ada Lovelace", "FN:Alan Turing", "VERSION:4.0", "missing.vcf", "404")
	if strings.Contains(string(r.Body), "Bletchley") {
		t.Fatalf("multiget answered a card not named: %s", r.Body)
	}

	// addressbook-query: text matches on FN, EMAIL and TEL.
	query := func(prop, text string) *apptest.Response {
		return dav.Do("REPORT", book, `<?xml version="1.0"?><card:addressbook-query xmlns:d="DAV:" xmlns:card="urn:ietf:params:xml:ns:carddav">`+
			`<d:prop><d:getetag/><card:address-data/></d:prop><card:filter><card:prop-filter name="`+prop+`">`+
			`<card:text-match collation="i;unicode-casemap" match-type="contains">`+text+`</card:text-match></card:prop-filter></card:filter></card:addressbook-query>`, "Depth", "1")
	}
	for _, c := range []struct{ prop, text, want, not string }{
		{"FN", "lovelace", "FN:Ada Lovelace", "Turing"},
		{"EMAIL", "alan@", "FN:Alan Turing", "Lovelace"},
		{"TEL", "7946", "FN:Alan Turing", "Lovelace"},
		{"FN", "bletchley", "ORG:Bletchley Park", "Turing"},
	} {
		r := query(c.prop, c.text)
		mustContain(t, r, c.want)
		if strings.Contains(string(r.Body), c.not) {
			t.Fatalf("query %s %q matched %q: %s", c.prop, c.text, c.not, r.Body)
		}
	}

	// sync-collection: from nothing, every card and a token; a sync that
	// finds nothing answers the same token and no member.
	r = dav.Do("REPORT", book, syncReport(""), "Depth", "0")
	if r.Status != http.StatusMultiStatus || strings.Count(string(r.Body), "<d:response>") != 3 {
		t.Fatalf("first sync: %d %s", r.Status, r.Body)
	}
	t1 := syncTokenOf(t, r)
	r = dav.Do("REPORT", book, syncReport(t1), "Depth", "0")
	if strings.Count(string(r.Body), "<d:response>") != 0 || syncTokenOf(t, r) != t1 {
		t.Fatalf("a sync with nothing changed: %s", r.Body)
	}
	ctag := func() string {
		r := dav.Do("PROPFIND", book, propfindAll, "Depth", "0")
		return regexp.MustCompile(`<cs:getctag>([^<]+)</cs:getctag>`).FindStringSubmatch(string(r.Body))[1]
	}
	if ctag() != t1 {
		t.Fatalf("getctag %s, sync token %s", ctag(), t1)
	}

	// Changes from every path: an API edit, a bulk label, a bulk delete.
	label := tm.O.Post("/api/books/"+tm.Book+"/labels", map[string]any{"name": "VIP"}).Expect(http.StatusCreated).String("data.id")
	tm.M.Post("/api/contacts/bulk-add-label", map[string]any{"contact_ids": []string{ids[1]}, "label_id": label}).Expect(http.StatusOK)
	tm.M.Post("/api/contacts/bulk-delete", map[string]any{"contact_ids": []string{ids[2]}}).Expect(http.StatusOK)
	r = dav.Do("REPORT", book, syncReport(t1), "Depth", "0")
	body := string(r.Body)
	if !strings.Contains(body, ids[1]+".vcf") || strings.Contains(body, ids[0]+".vcf") ||
		!regexp.MustCompile(ids[2]+`\.vcf</d:href><d:status>HTTP/1.1 404 Not Found`).MatchString(body) {
		t.Fatalf("sync after a label and a delete: %s", body)
	}
	t2 := syncTokenOf(t, r)
	if t2 == t1 || ctag() != t2 {
		t.Fatalf("tokens %s then %s, getctag %s", t1, t2, ctag())
	}
	mustContain(t, dav.Do(http.MethodGet, book+ids[1]+".vcf", ""), "CATEGORIES:VIP")
	// A renamed label renews its contacts' cards.
	tm.O.Patch("/api/books/"+tm.Book+"/labels/"+label, map[string]any{"name": "Friends"}).Expect(http.StatusOK)
	r = dav.Do("REPORT", book, syncReport(t2), "Depth", "0")
	if !strings.Contains(string(r.Body), ids[1]+".vcf") {
		t.Fatalf("sync after a label rename: %s", r.Body)
	}
	mustContain(t, dav.Do(http.MethodGet, book+ids[1]+".vcf", ""), "CATEGORIES:Friends")

	// Unknown or malformed tokens: 403 valid-sync-token.
	for _, bad := range []string{"urn:contactbook:sync:999999999", "http://elsewhere/token", "urn:contactbook:sync:x"} {
		r := dav.Do("REPORT", book, syncReport(bad), "Depth", "0")
		if r.Status != http.StatusForbidden || !strings.Contains(string(r.Body), "valid-sync-token") {
			t.Fatalf("token %s: %d %s", bad, r.Status, r.Body)
		}
	}
	// A token older than the kept deletions has expired.
	tm.Env.App.DB.Exec(t.Context(), `INSERT INTO contact_sync_horizons (book_id, pruned_through) VALUES ($1, $2)`, tm.Book, strings.TrimPrefix(t2, "urn:contactbook:sync:"))
	if r := dav.Do("REPORT", book, syncReport(t1), "Depth", "0"); r.Status != http.StatusForbidden || !strings.Contains(string(r.Body), "valid-sync-token") {
		t.Fatalf("an expired token: %d %s", r.Status, r.Body)
	}
	// A viewer syncs too.
	viewer := tm.Viewer.DAV()
	if r := viewer.Do("REPORT", viewer.BookPath(tm.Book), syncReport(""), "Depth", "0"); r.Status != http.StatusMultiStatus {
		t.Fatalf("viewer sync: %d", r.Status)
	}
}

func TestCardDAVSignIn(t *testing.T) {
	t.Parallel()
	tm := apptest.Setup(t)
	dav := tm.Member.DAV()
	book := dav.BookPath(tm.Book)
	if r := dav.Do("PROPFIND", book, propfindAll, "Depth", "0"); r.Status != http.StatusMultiStatus {
		t.Fatalf("before revoking: %d", r.Status)
	}
	ap := tm.Member.Get("/api/auth/app-passwords").Expect(http.StatusOK)
	if ap.Value("data.0.last_used_at") == nil {
		t.Fatalf("last_used_at after use: %s", ap.Body)
	}
	tm.Member.Delete("/api/auth/app-passwords/" + ap.String("data.0.id")).Expect(http.StatusNoContent)
	if r := dav.Do("PROPFIND", book, propfindAll, "Depth", "0"); r.Status != http.StatusUnauthorized {
		t.Fatalf("revoked: %d", r.Status)
	}
	// A team requiring two-factor sign-in still lets members with 2FA on
	// sync with app passwords; a member without it sees no book.
	turnOn2FA(t, tm.Env, tm.Owner)
	turnOn2FA(t, tm.Env, tm.Member)
	tm.Owner.Patch("/api/teams/"+tm.Owner.TeamID, map[string]any{"require_two_factor": true}).Expect(http.StatusOK)
	member := tm.Member.DAV()
	r := member.Do("PROPFIND", member.PrincipalPath+"books/", propfindAll, "Depth", "1")
	mustContain(t, r, "<d:displayname>Customers</d:displayname>")
	viewer := tm.Viewer.DAV()
	r = viewer.Do("PROPFIND", viewer.PrincipalPath+"books/", propfindAll, "Depth", "1")
	if r.Status != http.StatusMultiStatus || strings.Contains(string(r.Body), "Customers") {
		t.Fatalf("a member without 2FA: %d %s", r.Status, r.Body)
	}
	if r := viewer.Do("PROPFIND", viewer.BookPath(tm.Book), propfindAll, "Depth", "0"); r.Status != http.StatusForbidden {
		t.Fatalf("a member without 2FA, the book: %d %s", r.Status, r.Body)
	}
	// Failed Basic sign-ins count in the login throttle.
	bad := *member
	bad.Password = "wrong-wrong-wrong-wrong"
	for i := 0; i < 5; i++ {
		if r := bad.Do("PROPFIND", book, propfindAll, "Depth", "0"); r.Status != http.StatusUnauthorized {
			t.Fatalf("guess %d: %d", i+1, r.Status)
		}
	}
	tm.Env.Clock.Advance(2 * time.Second) // past the cache of the right password
	r = member.Do("PROPFIND", book, propfindAll, "Depth", "0")
	if r.Status != http.StatusTooManyRequests || r.Header.Get("Retry-After") == "" {
		t.Fatalf("after 5 failures: %d %v", r.Status, r.Header)
	}
	tm.Env.Anonymous().Post("/api/auth/login", map[string]string{"email": tm.Member.Email, "password": password}).ExpectError(http.StatusTooManyRequests, "RATE_LIMITED")
}

func TestCardDAVVersionsAndLimits(t *testing.T) {
	t.Parallel()
	tm := apptest.Setup(t, apptest.Options{OwnerOnly: true})
	dav := tm.Owner.DAV()
	book := dav.BookPath(tm.Book)
	// A vCard 4.0 card with an inline photo reads back in 3.0 as
	// ENCODING=b and in 4.0 as the data URI it was sent as.
	card := "BEGIN:VCARD\r\nVERSION:4.0\r\nUID:urn:uuid:1b4e28ba-2fa1-11d2-883f-0016d3cca427\r\nFN:Acme\r\nKIND:org\r\nORG:Acme\r\n" +
		"TEL;VALUE=uri;PREF=1;TYPE=work:tel:+1-555-0100\r\nPHOTO:data:image/png;base64,aGVsbG8=\r\nEND:VCARD\r\n"
	if r := dav.Do(http.MethodPut, book+"acme.vcf", card, "If-None-Match", "*"); r.Status != http.StatusCreated {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	r := dav.Do(http.MethodGet, book+"acme.vcf", "")
	mustContain(t, r, "VERSION:3.0", "PHOTO;ENCODING=b;TYPE=PNG:aGVsbG8=", "X-ABSHOWAS:COMPANY", "TYPE=pref", "UID:urn:uuid:1b4e28ba-2fa1-11d2-883f-0016d3cca427")
	r = dav.Do(http.MethodGet, book+"acme.vcf", "", "Accept", "text/vcard;version=4.0")
	mustContain(t, r, "VERSION:4.0", "PHOTO:data:image/png;base64", "aGVsbG8=", "KIND:org", "PREF=1")
	c := tm.O.Get("/api/contacts?q=acme").Expect(http.StatusOK)
	if c.String("data.0.company") != "Acme" || c.String("data.0.first_name") != "" || c.String("data.0.phones.0.number") != "+1-555-0100" || !c.Bool("data.0.phones.0.primary") {
		t.Fatalf("the company card: %s", c.Body)
	}
	// Relationships, which no card carries, survive a replace.
	id := c.String("data.0.id")
	other := tm.O.NewContact("Wile", "")
	tm.O.Patch("/api/contacts/"+id, map[string]any{"relationships": []map[string]any{{"label": "customer", "name": "Wile", "contact_id": other}}}).Expect(http.StatusOK)
	etag := dav.Do(http.MethodGet, book+"acme.vcf", "").Header.Get("ETag")
	if r := dav.Do(http.MethodPut, book+"acme.vcf", strings.Replace(card, "ORG:Acme", "ORG:Acme;Rockets", 1), "If-Match", etag); r.Status != http.StatusNoContent {
		t.Fatalf("replace: %d %s", r.Status, r.Body)
	}
	if got := tm.O.Get("/api/contacts/" + id).Expect(http.StatusOK); got.Len("data.relationships") != 1 || got.String("data.company") != "Acme;Rockets" {
		t.Fatalf("after a replace: %s", got.Body)
	}
	// Limits: a card over 1 MB, a body that is no vCard, a bad date.
	big := "BEGIN:VCARD\r\nVERSION:3.0\r\nFN:Big\r\nNOTE:" + strings.Repeat("x", 1<<20) + "\r\nEND:VCARD\r\n"
	if r := dav.Do(http.MethodPut, book+"big.vcf", big); r.Status != http.StatusRequestEntityTooLarge {
		t.Fatalf("a card over 1 MB: %d", r.Status)
	}
	if r := dav.Do(http.MethodPut, book+"junk.vcf", "BEGIN:VCARD\r\nnot a card"); r.Status != http.StatusBadRequest {
		t.Fatalf("junk: %d", r.Status)
	}
	r = dav.Do(http.MethodPut, book+"date.vcf", "BEGIN:VCARD\r\nVERSION:3.0\r\nFN:Dated\r\nBDAY:sometime\r\nEND:VCARD\r\n")
	if r.Status != http.StatusBadRequest || !strings.Contains(string(r.Body), "valid-address-data") {
		t.Fatalf("a bad date: %d %s", r.Status, r.Body)
	}
	if n := tm.Env.QueryInt(`SELECT count(*)::int FROM contacts WHERE book_id = $1`, tm.Book); n != 2 {
		t.Fatalf("%d contacts after refused cards, want 2", n)
	}
	r = dav.Do(http.MethodOptions, book, "")
	if !strings.Contains(r.Header.Get("DAV"), "addressbook") {
		t.Fatalf("OPTIONS: %d %v", r.Status, r.Header)
	}
	// Errors carry no internal detail.
	r = dav.Do("REPORT", book, "<not-xml", "Depth", "1")
	if r.Status != http.StatusBadRequest {
		t.Fatalf("a malformed report: %d %s", r.Status, r.Body)
	}
}
