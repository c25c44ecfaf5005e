//go:build reliability

package reliability

import (
	"context"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/contactbook/contactbook/internal/apptest"
	"github.com/contactbook/contactbook/internal/apptest/oidctest"
	"github.com/contactbook/contactbook/internal/auth"
	"github.com/contactbook/contactbook/internal/httpapi/openapi"
	"github.com/contactbook/contactbook/internal/postgres/pgtest"
)

// tenant is a team with one of everything, for the cross-tenant sweep.
type tenant struct {
	*team
	label, field, contact, template, campaign, step, participant, webhook, keyID, member, invitation string
	suppression, importID, segment, delivery, form                                                   string
	// issuer is the identity provider of the team's single sign-on;
	// transactional is a transactional email of its book.
	issuer, transactional string
}

func fullTenant(t *testing.T, base string, pool *pgxpool.Pool, name, issuer string) *tenant {
	t.Helper()
	tn := &tenant{team: signup(t, base, name), issuer: issuer}
	if _, err := pool.Exec(context.Background(), `UPDATE teams SET campaign_addon = 'active' WHERE id = $1`, tn.teamID); err != nil {
		t.Fatal(err)
	}
	o, k := tn.owner, tn.key
	tn.label = o.must(t, http.StatusCreated, "POST", "/api/books/"+tn.book+"/labels", map[string]any{"name": name + " label"}).str("data.id")
	tn.field = o.must(t, http.StatusCreated, "POST", "/api/books/"+tn.book+"/fields", map[string]any{"key": "k", "name": "K", "type": "text"}).str("data.id")
	tn.contact = k.must(t, http.StatusCreated, "POST", "/api/v1/contacts", map[string]any{"first_name": name + " contact",
		"emails": []map[string]any{{"address": unique("c") + "@example.com", "label": "work", "primary": true}}}).str("data.id")
	tn.template = k.must(t, http.StatusOK, "POST", "/api/v1/campaign-templates", map[string]any{"name": name + " tpl", "subject": "S", "body_html": "<p>x</p>"}).str("data.id")
	tn.campaign = k.must(t, http.StatusOK, "POST", "/api/v1/campaigns", map[string]any{"name": name + " campaign"}).str("data.id")
	tn.step = k.must(t, http.StatusOK, "POST", "/api/v1/campaigns/"+tn.campaign+"/steps", map[string]any{
		"step_type": "email", "name": "E", "schedule_type": "immediate", "email_template_id": tn.template}).str("data.id")
	k.must(t, http.StatusOK, "POST", "/api/v1/campaigns/"+tn.campaign+"/participants", map[string]any{"contact_ids": []string{tn.contact}})
	var err error
	if err = pool.QueryRow(context.Background(), `SELECT id::text FROM campaign_participants WHERE campaign_id = $1`, tn.campaign).Scan(&tn.participant); err != nil {
		t.Fatal(err)
	}
	tn.webhook = o.must(t, http.StatusCreated, "POST", "/api/teams/"+tn.teamID+"/webhooks",
		map[string]any{"url": "http://127.0.0.1:9/hook", "events": []string{"contact.created"}}).str("data.webhook.id")
	// A delivery of that webhook, for the routes that address one.
	tn.delivery = o.must(t, http.StatusAccepted, "POST", "/api/teams/"+tn.teamID+"/webhooks/"+tn.webhook+"/test", nil).str("data.delivery_id")
	if err = pool.QueryRow(context.Background(), `SELECT id::text FROM api_keys WHERE team_id = $1 LIMIT 1`, tn.teamID).Scan(&tn.keyID); err != nil {
		t.Fatal(err)
	}
	m := signup(t, base, name+"Member")
	// m joins through an invitation; the emailed token is replaced by one
	// known here.
	inv := o.must(t, http.StatusCreated, "POST", "/api/teams/"+tn.teamID+"/invitations", map[string]string{"email": m.email, "role": "member"}).str("data.id")
	token, hash, err := auth.NewLinkToken()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(context.Background(), `UPDATE invitations SET token_hash = $2 WHERE id = $1`, inv, hash); err != nil {
		t.Fatal(err)
	}
	m.owner.must(t, http.StatusOK, "POST", "/api/invitations/accept", map[string]string{"token": token})
	tn.member = m.userID
	// A pending invitation, for the routes that address one.
	tn.invitation = o.must(t, http.StatusCreated, "POST", "/api/teams/"+tn.teamID+"/invitations",
		map[string]string{"email": unique("pending") + "@example.com", "role": "viewer"}).str("data.id")
	tn.segment = k.must(t, http.StatusCreated, "POST", "/api/v1/segments", map[string]any{"name": name + " segment",
		"rule": map[string]any{"field": "labels", "op": "has_any", "value": []string{tn.label}}}).str("data.id")
	tn.form = k.must(t, http.StatusCreated, "POST", "/api/v1/forms", map[string]any{"name": name + " form", "double_opt_in": false}).str("data.id")
	tn.suppression = o.inBook(tn.book).must(t, http.StatusCreated, "POST", "/api/suppressions",
		map[string]any{"email": unique("suppressed") + "@example.com"}).str("data.id")
	// Email settings, a transactional email and single sign-on, for the
	// routes that read them.
	o.must(t, http.StatusOK, "PUT", "/api/campaign-settings", map[string]any{
		"sender_name": name, "sender_email": "news@" + strings.ToLower(name) + ".example", "company_name": name,
		"address_line1": "1 Main St", "city": "Springfield", "postal_code": "62701", "country": "USA", "mailer_api_key": "SG.sweep-0123456789"})
	tn.transactional = k.must(t, http.StatusAccepted, "POST", "/api/v1/transactional", map[string]any{
		"template_id": tn.template, "to": map[string]any{"contact_id": tn.contact}}).str("data.id")
	o.must(t, http.StatusOK, "PUT", "/api/teams/"+tn.teamID+"/sso", ssoSettings(issuer))
	// A finished import: one running in the background would change the
	// fingerprint by itself.
	tn.importID = o.must(t, http.StatusAccepted, "POST", "/api/books/"+tn.book+"/imports", csvUpload(t)).str("data.id")
	waitFor(t, 30*time.Second, "the import to finish", func() bool {
		return o.must(t, http.StatusOK, "GET", "/api/books/"+tn.book+"/imports/"+tn.importID, nil).str("data.status") == "succeeded"
	})
	return tn
}

// ssoSettings are single sign-on settings for the identity provider at
// issuer, on a domain of their own (one team per domain).
func ssoSettings(issuer string) map[string]any {
	return map[string]any{"issuer": issuer, "client_id": "sweep", "client_secret": "sweep-secret",
		"allowed_domains": []string{unique("sweep") + ".example"}}
}

// csvUpload is a multipart body carrying a one-contact CSV as the file
// part of an import.
func csvUpload(t *testing.T) rawBody {
	t.Helper()
	return raw(apptest.ImportForm(t, []byte("First Name,E-mail Address\nImported,"+unique("imported")+"@example.com\n"), nil))
}

// fingerprint summarises a team's data so that any change shows.
func fingerprint(t *testing.T, pool *pgxpool.Pool, tn *tenant) string {
	t.Helper()
	var s string
	err := pool.QueryRow(context.Background(), `
		SELECT concat_ws('|',
		  (SELECT string_agg(name || ':' || updated_at::text, ',' ORDER BY id) FROM books WHERE team_id = $1),
		  (SELECT name FROM teams WHERE id = $1),
		  (SELECT string_agg(l.name, ',' ORDER BY l.id) FROM labels l JOIN books b ON b.id = l.book_id WHERE b.team_id = $1),
		  (SELECT count(*) FROM field_definitions f JOIN books b ON b.id = f.book_id WHERE b.team_id = $1),
		  (SELECT string_agg(c.first_name || ':' || c.updated_at::text, ',' ORDER BY c.id) FROM contacts c JOIN books b ON b.id = c.book_id WHERE b.team_id = $1),
		  (SELECT count(*) FROM contact_labels cl JOIN contacts c ON c.id = cl.contact_id JOIN books b ON b.id = c.book_id WHERE b.team_id = $1),
		  (SELECT count(*) FROM contact_field_values v JOIN contacts c ON c.id = v.contact_id JOIN books b ON b.id = c.book_id WHERE b.team_id = $1),
		  (SELECT string_agg(e.name || ':' || e.updated_at::text, ',' ORDER BY e.id) FROM email_templates e JOIN books b ON b.id = e.book_id WHERE b.team_id = $1),
		  (SELECT string_agg(c.name || ':' || c.status || ':' || c.updated_at::text, ',' ORDER BY c.id) FROM campaigns c JOIN books b ON b.id = c.book_id WHERE b.team_id = $1),
		  (SELECT string_agg(s.name || ':' || s.updated_at::text, ',' ORDER BY s.id) FROM campaign_steps s JOIN campaigns c ON c.id = s.campaign_id JOIN books b ON b.id = c.book_id WHERE b.team_id = $1),
		  (SELECT string_agg(p.status, ',' ORDER BY p.id) FROM campaign_participants p JOIN campaigns c ON c.id = p.campaign_id JOIN books b ON b.id = c.book_id WHERE b.team_id = $1),
		  (SELECT count(*) FROM campaign_step_completions d JOIN campaigns c ON c.id = d.campaign_id JOIN books b ON b.id = c.book_id WHERE b.team_id = $1),
		  (SELECT count(*) FROM email_settings s JOIN books b ON b.id = s.book_id WHERE b.team_id = $1),
		  (SELECT string_agg(url || ':' || active::text, ',' ORDER BY id) FROM webhooks WHERE team_id = $1),
		  (SELECT count(*) FROM api_keys WHERE team_id = $1),
		  (SELECT string_agg(user_id::text || ':' || role, ',' ORDER BY user_id) FROM team_members WHERE team_id = $1),
		  (SELECT string_agg(id::text || ':' || email, ',' ORDER BY id) FROM invitations WHERE team_id = $1),
		  (SELECT string_agg(s.email || ':' || COALESCE(s.lifted_at::text, ''), ',' ORDER BY s.id) FROM suppressions s JOIN books b ON b.id = s.book_id WHERE b.team_id = $1),
		  (SELECT string_agg(i.status, ',' ORDER BY i.id) FROM imports i JOIN books b ON b.id = i.book_id WHERE b.team_id = $1),
		  (SELECT string_agg(s.name || ':' || s.updated_at::text, ',' ORDER BY s.id) FROM segments s JOIN books b ON b.id = s.book_id WHERE b.team_id = $1),
		  (SELECT campaign_addon FROM teams WHERE id = $1))`, tn.teamID).Scan(&s)
	if err != nil {
		t.Fatalf("fingerprint: %v", err)
	}
	return s
}

// sweepCall is one documented authenticated route.
type sweepCall struct{ path, method, op string }

// sweepCalls lists the routes the sweep covers, deletions last so that every
// other call still finds the target's objects.
func sweepCalls(t *testing.T) []sweepCall {
	t.Helper()
	doc, err := openapi3.NewLoader().LoadFromData(openapi.Document())
	if err != nil {
		t.Fatal(err)
	}
	skipPrefix := []string{"/healthz", "/readyz", "/metrics", "/docs", "/api/openapi.json", "/api/unsubscribe",
		"/api/payments/webhook", "/images/", "/billing/", "/api/auth/",
		// Authorised by the emailed token alone, not by a team: nothing of
		// team B is reachable through them without B's token.
		"/api/invitations/",
		// Authorised by the book's provider signature key (SendGrid) or the
		// SNS signature (SES) alone, no team credentials; their own tests
		// refuse foreign and unsigned batches.
		"/api/mailer/events/", "/api/mailer/ses/",
		// The dashboard's files, the same for everyone.
		"/app",
		// A form's public side (its hosted page, submissions, the
		// confirmation) and the preference page answer anyone by design:
		// they take a form id or an emailed token, never team credentials,
		// and write only into the form's own book.
		"/f/", "/api/forms/confirm", "/api/forms/{form_id}/submissions", "/api/preferences"}
	// Routes whose 2xx answer is right for an outsider: they only show the
	// caller's own data, or what is the same for everyone (the webhook
	// event catalogue), and take no foreign id.
	ownOnly := map[string]bool{"getMe": true, "listBooks": true, "listBooksInternal": true, "listWebhookEventTypes": true}
	var calls []sweepCall
	for path, item := range doc.Paths.Map() {
		skip := path == "/" // redirects to the dashboard, the same for everyone
		for _, p := range skipPrefix {
			skip = skip || strings.HasPrefix(path, p)
		}
		if skip {
			continue
		}
		for method, op := range item.Operations() {
			if !ownOnly[op.OperationID] {
				calls = append(calls, sweepCall{path, method, op.OperationID})
			}
		}
	}
	sort.Slice(calls, func(i, j int) bool {
		// Deletions last, erasure among them: later calls still find the
		// target's objects.
		di, dj := calls[i].destroys(), calls[j].destroys()
		if di != dj {
			return dj
		}
		return calls[i].path+calls[i].method < calls[j].path+calls[j].method
	})
	if len(calls) < 80 {
		t.Fatalf("the sweep found only %d routes in the OpenAPI document", len(calls))
	}
	return calls
}

// destroys reports whether c deletes what it addresses.
func (c sweepCall) destroys() bool {
	return c.method == "DELETE" || strings.TrimSuffix(c.op, "Internal") == "eraseContact"
}

// request fills in c's path parameters, query and body with target's ids:
// a request that would succeed if its caller were allowed to touch target.
func (c sweepCall) request(t *testing.T, target *tenant) (string, any) {
	t.Helper()
	path := c.path
	for {
		i := strings.Index(path, "{")
		if i < 0 {
			break
		}
		j := strings.Index(path[i:], "}") + i
		path = path[:i] + target.param(t, c.path, path[i+1:j]) + path[j+1:]
	}
	if c.op == "checkContactEmail" {
		path += "?email=x@example.com"
	}
	if c.method != "POST" && c.method != "PUT" && c.method != "PATCH" {
		return path, nil
	}
	op := strings.TrimSuffix(c.op, "Internal")
	switch op {
	case "uploadCampaignImage":
		return path, pngUpload(t)
	case "startImport", "previewImport":
		return path, csvUpload(t)
	case "previewTemplate":
		return path, map[string]any{"subject": "s {{first_name}}", "body_html": "<p>x</p>"}
	case "createForm", "updateForm":
		return path, map[string]any{"name": unique("form"), "double_opt_in": false}
	case "eraseContact":
		return path, map[string]any{}
	case "createSegment", "updateSegment":
		return path, map[string]any{"name": unique("segment"), "rule": map[string]any{"all": []any{}}}
	case "previewSegment":
		return path, map[string]any{"rule": map[string]any{"field": "labels", "op": "has_any", "value": []string{target.label}}}
	case "addSuppression":
		return path, map[string]any{"email": unique("suppress") + "@example.com"}
	case "createBook":
		return path, map[string]any{"team_id": target.teamID, "name": "x"}
	case "updateBook", "updateLabel", "createLabel", "renameTeam", "createCampaign", "createApiKey":
		return path, map[string]any{"name": unique("x")}
	case "createField":
		// A key holds only a-z, 0-9 and _.
		return path, map[string]any{"key": "f_" + strings.ReplaceAll(unique(""), "-", "_"), "name": "Z", "type": "text"}
	case "createContact", "updateContact":
		return path, map[string]any{"first_name": "x"}
	case "bulkAddLabel", "bulkRemoveLabel":
		return path, map[string]any{"contact_ids": []string{target.contact}, "label_id": target.label}
	case "bulkDeleteContacts", "enrollParticipants":
		return path, map[string]any{"contact_ids": []string{target.contact}}
	case "bulkUpdateField":
		return path, map[string]any{"contact_ids": []string{target.contact}, "field_definition_id": target.field, "value": "x"}
	case "addContactLabel", "enrollLabel":
		return path, map[string]any{"label_id": target.label}
	case "createTemplate":
		return path, map[string]any{"name": "x", "subject": "s", "body_html": "<p>x</p>"}
	case "updateTemplate", "updateStep":
		return path, map[string]any{"name": "x"}
	case "sendTestEmail":
		// Test emails go to the team's members or the book's contacts.
		return path, map[string]any{"email": target.email}
	case "updateCampaign":
		// Active, so that the run and enrolment that follow it are valid.
		return path, map[string]any{"name": "x", "status": "active"}
	case "createStep":
		return path, map[string]any{"step_type": "email", "name": "E", "schedule_type": "immediate", "email_template_id": target.template}
	case "reorderSteps":
		return path, map[string]any{"step_ids": []string{target.step}}
	case "putCampaignSettings":
		return path, map[string]any{
			"sender_name": "X", "sender_email": "x@acme.example", "reply_to_email": "x@acme.example",
			"company_name": "X", "address_line1": "1 Main St", "city": "Springfield", "state": "IL",
			"postal_code": "62701", "country": "USA", "mailer_api_key": "SG.sweep-0123456789"}
	case "invite":
		return path, map[string]any{"email": unique("invitee") + "@example.com", "role": "viewer"}
	case "changeMemberRole":
		return path, map[string]any{"role": "viewer"}
	case "createWebhook":
		return path, map[string]any{"url": "http://127.0.0.1:9/x", "events": []string{"contact.created"}}
	case "updateWebhook":
		return path, map[string]any{"active": false}
	case "recoverWebhook":
		return path, map[string]any{"since": time.Now().Add(-time.Hour).Format(time.RFC3339)}
	case "testWebhook", "retryWebhookDelivery":
		return path, map[string]any{}
	case "createCampaignCheckout":
		return path, map[string]any{"team_id": target.teamID, "plan": "monthly", "currency": "eur"}
	case "runCampaign", "startCampaignTrial":
		return path, map[string]any{}
	case "verifyCampaignSettings":
		return path, map[string]any{}
	case "sendTransactional":
		return path, map[string]any{"template_id": target.template, "to": map[string]any{"contact_id": target.contact}}
	case "recordEvent":
		return path, map[string]any{"name": "order.paid", "contact": map[string]any{"id": target.contact}}
	case "putTeamSSO":
		return path, ssoSettings(target.issuer)
	}
	// A new route must get a valid body here: with an empty one, a refusal
	// could come from its input checks and say nothing of its authorization.
	t.Fatalf("the sweep has no request body for %s %s (%s)", c.method, c.path, c.op)
	return "", nil
}

// pngUpload is a multipart body carrying a real 1x1 PNG as the image part.
func pngUpload(t *testing.T) rawBody {
	t.Helper()
	return raw(apptest.Multipart(t, nil, apptest.File{Field: "image", Name: "pixel.png", Data: apptest.PNG()}))
}

// param is the tenant's id for a path parameter, which depends on the
// collection it follows.
func (tn *tenant) param(t *testing.T, path, name string) string {
	t.Helper()
	switch name {
	case "team_id":
		return tn.teamID
	case "key_id":
		return tn.keyID
	case "user_id":
		return tn.member
	case "webhook_id":
		return tn.webhook
	case "delivery_id":
		return tn.delivery
	case "lid":
		return tn.label
	case "fid":
		return tn.field
	case "sid":
		return tn.step
	case "pid":
		return tn.participant
	case "import_id":
		return tn.importID
	}
	if strings.Contains(path, "/books/{"+name+"}") { // a book's own collections (its suppressions' export)
		return tn.book
	}
	if strings.Contains(path, "/suppressions/") {
		return tn.suppression
	}
	if strings.Contains(path, "/segments/") {
		return tn.segment
	}
	if strings.Contains(path, "/forms/") {
		return tn.form
	}
	if strings.Contains(path, "/invitations/") {
		return tn.invitation
	}
	if strings.Contains(path, "/transactional/") {
		return tn.transactional
	}
	switch {
	case strings.Contains(path, "/books/"):
		return tn.book
	case strings.Contains(path, "/contacts/"):
		return tn.contact
	case strings.Contains(path, "/campaign-templates/"):
		return tn.template
	case strings.Contains(path, "/campaigns/"), strings.Contains(path, "/campaign-step-contacts/"):
		return tn.campaign
	}
	t.Fatalf("no value for {%s} in %s", name, path)
	return ""
}

// send makes the call as caller's owner (or its API key under /api/v1) in
// target's book.
func (c sweepCall) send(t *testing.T, caller, target *tenant) (*response, string) {
	t.Helper()
	path, body := c.request(t, target)
	cl := caller.owner
	if strings.HasPrefix(c.path, "/api/v1/") {
		cl = caller.key
	}
	r, err := cl.inBook(target.book).do(c.method, path, body)
	if err != nil {
		t.Fatalf("%s %s (%s): %v", c.method, path, c.op, err)
	}
	return r, path
}

// TestCrossTenantSweep calls every documented authenticated route with
// team A's credentials and team B's ids (path parameters, X-Book-ID and
// ids in bodies): no answer may be 2xx, and B's data must not change.
//
// The requests are valid: a control run makes each of them as a team on its
// own data and none may be refused by input checks or miss its target. So
// A's 403 and 404 come from the authorization of the route, not from a body
// or parameter it could not read, and an answer of 400 or 415 to A fails the
// sweep: it would mean the route reads input before it authorizes the caller.
func TestCrossTenantSweep(t *testing.T) {
	dbURL := pgtest.Setup(t).URL
	pool := dbPool(t, dbURL)
	in := start(t, "sweep", dbURL, "http://127.0.0.1:9")
	calls := sweepCalls(t)
	idp := oidctest.New(t, "sweep", "sweep-secret", in.base+"/api/auth/sso/callback")

	// Control: each team on its own data. A deletion gets a team of its
	// own, since one deletion (the book, the API key, the contact) would
	// take away what later calls address.
	control := fullTenant(t, in.base, pool, "Charlie", idp.Issuer)
	// Only an active campaign can run; B's stays a draft so that nothing
	// runs in it by itself and changes its fingerprint.
	control.key.must(t, http.StatusOK, "PATCH", "/api/v1/campaigns/"+control.campaign, map[string]any{"status": "active"})
	controlStatus := map[int]int{}
	for _, c := range calls {
		self := control
		if op := strings.TrimSuffix(c.op, "Internal"); c.method == "DELETE" || op == "bulkDeleteContacts" || op == "eraseContact" {
			self = fullTenant(t, in.base, pool, "Delta", idp.Issuer)
		}
		r, path := c.send(t, self, self)
		controlStatus[r.status]++
		keyTooLow := r.status == http.StatusForbidden && strings.HasPrefix(c.path, "/api/v1/") &&
			strings.Contains(string(r.body), "API keys cannot do this")
		if keyTooLow {
			// An admin-only endpoint of the key API (a key acts as a member):
			// the owner's own key is refused by role, after the team check
			// that an outsider meets first; its /api twin is exercised in
			// full.
			t.Logf("control: %s %s (%s): a key's role is below this route's", c.method, path, c.op)
			continue
		}
		switch r.status {
		case http.StatusBadRequest, http.StatusUnsupportedMediaType, http.StatusUnprocessableEntity,
			http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound:
			t.Errorf("control: %s %s (%s) by the team that owns it: %d %s; the sweep's request for this route is not valid",
				c.method, path, c.op, r.status, r.body)
		default:
			if r.status >= 300 {
				t.Logf("control: %s %s (%s): %d %s", c.method, path, c.op, r.status, r.body)
			}
		}
	}

	a := fullTenant(t, in.base, pool, "Alpha", idp.Issuer)
	b := fullTenant(t, in.base, pool, "Bravo", idp.Issuer)
	before := fingerprint(t, pool, b)
	byStatus := map[int]int{}
	for _, c := range calls {
		r, path := c.send(t, a, b)
		byStatus[r.status]++
		switch {
		case r.status >= 200 && r.status < 300:
			t.Errorf("%s %s (%s) with team A's credentials and team B's ids: %d %s", c.method, path, c.op, r.status, r.body)
		case r.status == http.StatusForbidden || r.status == http.StatusNotFound:
		case r.status == http.StatusBadRequest || r.status == http.StatusUnsupportedMediaType:
			t.Errorf("%s %s (%s) checked its input before its authorization: %d %s", c.method, path, c.op, r.status, r.body)
		default:
			t.Errorf("%s %s (%s): unexpected %d %s", c.method, path, c.op, r.status, r.body)
		}
	}
	bData := "unchanged"
	if after := fingerprint(t, pool, b); after != before {
		bData = "CHANGED"
		t.Errorf("team B's data changed:\nbefore %s\nafter  %s", before, after)
	}
	accepted := 0
	for status, n := range byStatus {
		if status >= 200 && status < 300 {
			accepted += n
		}
	}
	report(t, "cross-tenant sweep: %d routes called with team A's credentials and team B's ids; answers by status %v; %d 2xx; team B's data %s; the same requests by the owning team (control) answered %v",
		len(calls), byStatus, accepted, bData, controlStatus)
}
