//go:build reliability

package reliability

import (
	"context"
	"net/http"
	"sort"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/contactbook/contactbook/internal/auth"
	"github.com/contactbook/contactbook/internal/httpapi/openapi"
	"github.com/contactbook/contactbook/internal/postgres/pgtest"
)

// tenant is a team with one of everything, for the cross-tenant sweep.
type tenant struct {
	*team
	label, field, contact, template, campaign, step, participant, webhook, keyID, member, invitation string
}

func fullTenant(t *testing.T, base string, pool *pgxpool.Pool, name string) *tenant {
	t.Helper()
	tn := &tenant{team: signup(t, base, name)}
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
	return tn
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
		  (SELECT campaign_addon FROM teams WHERE id = $1))`, tn.teamID).Scan(&s)
	if err != nil {
		t.Fatalf("fingerprint: %v", err)
	}
	return s
}

// TestCrossTenantSweep calls every documented authenticated route with
// team A's credentials and team B's ids (path parameters, X-Book-ID and
// ids in bodies): no answer may be 2xx, and B's data must not change.
func TestCrossTenantSweep(t *testing.T) {
	dbURL := pgtest.NewURL(t)
	pool := dbPool(t, dbURL)
	in := start(t, "sweep", dbURL, "http://127.0.0.1:9")
	a := fullTenant(t, in.base, pool, "Alpha")
	b := fullTenant(t, in.base, pool, "Bravo")
	before := fingerprint(t, pool, b)

	doc, err := openapi3.NewLoader().LoadFromData(openapi.Document())
	if err != nil {
		t.Fatal(err)
	}
	skipPrefix := []string{"/healthz", "/readyz", "/metrics", "/docs", "/api/openapi.json", "/api/unsubscribe",
		"/api/payments/webhook", "/images/", "/billing/", "/api/auth/",
		// Authorised by the emailed token alone, not by a team: nothing of
		// team B is reachable through them without B's token.
		"/api/invitations/",
		// The dashboard's files, the same for everyone.
		"/app"}
	// Routes whose 2xx answer is right for an outsider: they only show the
	// caller's own data and take no foreign id.
	ownOnly := map[string]bool{"getMe": true, "listBooks": true, "listBooksInternal": true}
	bodies := map[string]any{
		"createBook": map[string]any{"team_id": b.teamID, "name": "x"}, "updateBook": map[string]any{"name": "x"},
		"createField": map[string]any{"key": "z", "name": "Z", "type": "text"},
		"createLabel": map[string]any{"name": "x"}, "updateLabel": map[string]any{"name": "x"},
		"createContact": map[string]any{"first_name": "x"}, "updateContact": map[string]any{"first_name": "x"},
		"bulkAddLabel":       map[string]any{"contact_ids": []string{b.contact}, "label_id": b.label},
		"bulkRemoveLabel":    map[string]any{"contact_ids": []string{b.contact}, "label_id": b.label},
		"bulkDeleteContacts": map[string]any{"contact_ids": []string{b.contact}},
		"bulkUpdateField":    map[string]any{"contact_ids": []string{b.contact}, "field_definition_id": b.field, "value": "x"},
		"addContactLabel":    map[string]any{"label_id": b.label},
		"createTemplate":     map[string]any{"name": "x", "subject": "s", "body_html": "<p>x</p>"},
		"updateTemplate":     map[string]any{"name": "x"},
		"sendTestEmail":      map[string]any{"email": "me@example.com"},
		"createCampaign":     map[string]any{"name": "x"}, "updateCampaign": map[string]any{"name": "x", "status": "archived"},
		"enrollParticipants": map[string]any{"contact_ids": []string{b.contact}},
		"enrollLabel":        map[string]any{"label_id": b.label},
		"createStep":         map[string]any{"step_type": "email", "name": "E", "schedule_type": "immediate", "email_template_id": b.template},
		"updateStep":         map[string]any{"name": "x"}, "reorderSteps": map[string]any{"step_ids": []string{b.step}},
		"putCampaignSettings": map[string]any{
			"sender_name": "X", "sender_email": "x@acme.example", "reply_to_email": "x@acme.example",
			"company_name": "X", "address_line1": "1 Main St", "city": "Springfield", "state": "IL",
			"postal_code": "62701", "country": "USA", "mailer_api_key": "SG.sweep-0123456789"},
		"renameTeam": map[string]any{"name": "x"}, "invite": map[string]any{"email": a.email, "role": "viewer"},
		"changeMemberRole": map[string]any{"role": "viewer"}, "createApiKey": map[string]any{"name": "x"},
		"createWebhook":          map[string]any{"url": "http://127.0.0.1:9/x", "events": []string{"contact.created"}},
		"updateWebhook":          map[string]any{"active": false},
		"createCampaignCheckout": map[string]any{"team_id": b.teamID, "plan": "monthly", "currency": "eur"},
	}
	// A path parameter's value depends on the collection it follows.
	param := func(path, name string) string {
		switch name {
		case "team_id":
			return b.teamID
		case "key_id":
			return b.keyID
		case "user_id":
			return b.member
		case "webhook_id":
			return b.webhook
		case "lid":
			return b.label
		case "fid":
			return b.field
		case "sid":
			return b.step
		case "pid":
			return b.participant
		}
		if strings.Contains(path, "/invitations/") {
			return b.invitation
		}
		switch {
		case strings.Contains(path, "/books/"):
			return b.book
		case strings.Contains(path, "/contacts/"):
			return b.contact
		case strings.Contains(path, "/campaign-templates/"):
			return b.template
		case strings.Contains(path, "/campaigns/"), strings.Contains(path, "/campaign-step-contacts/"):
			return b.campaign
		}
		t.Fatalf("no value for {%s} in %s", name, path)
		return ""
	}

	type call struct{ path, method, op string }
	var calls []call
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
				calls = append(calls, call{path, method, op.OperationID})
			}
		}
	}
	// Deletions last, so that every other call still finds B's objects.
	sort.Slice(calls, func(i, j int) bool {
		di, dj := calls[i].method == "DELETE", calls[j].method == "DELETE"
		if di != dj {
			return dj
		}
		return calls[i].path+calls[i].method < calls[j].path+calls[j].method
	})
	byStatus := map[int]int{}
	for _, c := range calls {
		path := c.path
		for {
			i := strings.Index(path, "{")
			if i < 0 {
				break
			}
			j := strings.Index(path[i:], "}") + i
			path = path[:i] + param(c.path, path[i+1:j]) + path[j+1:]
		}
		cl := a.owner
		if strings.HasPrefix(c.path, "/api/v1/") {
			cl = a.key
		}
		cl = cl.inBook(b.book)
		var body any
		if c.method == "POST" || c.method == "PUT" || c.method == "PATCH" {
			body = bodies[strings.TrimSuffix(c.op, "Internal")]
			if body == nil {
				body = map[string]any{}
			}
		}
		if c.op == "checkContactEmail" {
			path += "?email=x@example.com"
		}
		r, err := cl.do(c.method, path, body)
		if err != nil {
			t.Errorf("%s %s (%s): %v", c.method, path, c.op, err)
			continue
		}
		byStatus[r.status]++
		switch {
		case r.status >= 200 && r.status < 300:
			t.Errorf("%s %s (%s) with team A's credentials and team B's ids: %d %s", c.method, c.path, c.op, r.status, r.body)
		case r.status == http.StatusForbidden || r.status == http.StatusNotFound:
		case r.status == http.StatusBadRequest || r.status == http.StatusUnsupportedMediaType:
			t.Logf("note: %s %s (%s) refused by input checks before authorization: %d %s", c.method, c.path, c.op, r.status, r.body)
		default:
			t.Errorf("%s %s (%s): unexpected %d %s", c.method, c.path, c.op, r.status, r.body)
		}
	}
	if after := fingerprint(t, pool, b); after != before {
		t.Errorf("team B's data changed:\nbefore %s\nafter  %s", before, after)
	}
	report(t, "cross-tenant sweep: %d routes called with team A's credentials and team B's ids; answers by status %v; 0 2xx; team B's data unchanged",
		len(calls), byStatus)
}
