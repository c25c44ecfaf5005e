package apptest

import (
	"net/http"
	"strconv"
	"testing"
)

// TestSetupCast: Setup's team holds one user in each role, its clients
// work in its book, and the viewer is refused what the member may do.
func TestSetupCast(t *testing.T) {
	t.Parallel()
	tm := Setup(t)
	r := tm.O.Get("/api/teams/" + tm.Owner.TeamID + "/members").Expect(http.StatusOK)
	roles := map[string]string{}
	for i := range r.Len("data") {
		roles[r.String("data."+itoa(i)+".user_id")] = r.String("data." + itoa(i) + ".role")
	}
	want := map[string]string{tm.Owner.ID: "owner", tm.Admin.ID: "admin", tm.Member.ID: "member", tm.Viewer.ID: "viewer"}
	if len(roles) != len(want) {
		t.Fatalf("members %v, want %v", roles, want)
	}
	for id, role := range want {
		if roles[id] != role {
			t.Errorf("user %s has role %q, want %q", id, roles[id], role)
		}
	}
	for _, u := range []*User{tm.Admin, tm.Member, tm.Viewer} {
		if u.TeamID != tm.Owner.TeamID {
			t.Errorf("user %s has team %s, want the owner's %s", u.Email, u.TeamID, tm.Owner.TeamID)
		}
	}
	tm.M.NewContact("Ann", "ann@example.com")
	tm.V.Post("/api/contacts", map[string]any{"first_name": "Bob"}).ExpectError(http.StatusForbidden, "FORBIDDEN")
	if n := tm.Key.Get("/api/v1/contacts").Expect(http.StatusOK).Int("meta.total"); n != 1 {
		t.Fatalf("the API key sees %d contacts in the book, want 1", n)
	}
}

// TestFactories: what the factories create is there, as the API shows it,
// on both surfaces.
func TestFactories(t *testing.T) {
	t.Parallel()
	tm := Setup(t)
	for _, c := range []*Client{tm.O, tm.Key} {
		ids := c.NewContacts("Reader", 3)
		if got := c.Get(c.api("/contacts/" + ids[2])).Expect(http.StatusOK).String("data.first_name"); got != "Reader3" {
			t.Errorf("third contact is %q, want Reader3", got)
		}
		tpl := c.NewTemplate("Welcome")
		cid := c.NewEmailCampaign("Welcome", tpl)
		c.Enroll(cid, ids...)
		r := c.Get(c.api("/campaigns/" + cid)).Expect(http.StatusOK)
		if r.String("data.status") != "active" || r.Len("data.steps") != 1 || r.String("data.steps.0.email_template_id") != tpl {
			t.Errorf("campaign: %s", r.Body)
		}
		if n := tm.O.Get("/api/campaigns/" + cid + "/participants").Expect(http.StatusOK).Int("meta.total"); n != 3 {
			t.Errorf("%d participants, want 3", n)
		}
		if st := c.Get(c.api("/campaigns/" + c.NewCampaign("Later"))).Expect(http.StatusOK).String("data.status"); st != "draft" {
			t.Errorf("NewCampaign made a %q campaign, want draft", st)
		}
	}
	id, secret := tm.Owner.NewWebhook("https://hooks.example.com/in", "contact.created")
	if id == "" || secret == "" {
		t.Fatalf("webhook %q with secret %q", id, secret)
	}
	r := tm.Owner.Get("/api/teams/" + tm.Owner.TeamID + "/webhooks").Expect(http.StatusOK)
	if r.Len("data") != 1 || r.String("data.0.id") != id {
		t.Fatalf("webhooks: %s", r.Body)
	}
}

// TestSetupOptions: the options shape the cast: an owner alone with the
// add-on in a given state, no team at all, and a second tenant that sees
// nothing of the first.
func TestSetupOptions(t *testing.T) {
	t.Parallel()
	tm := Setup(t, Options{OwnerOnly: true, Addon: "trial"})
	if tm.Owner == nil || tm.O == nil || tm.Key == nil || tm.Admin != nil || tm.M != nil || tm.V != nil {
		t.Fatalf("owner-only cast: %+v", tm)
	}
	if n := tm.Env.QueryInt(`SELECT count(*)::int FROM teams WHERE id = $1 AND campaign_addon = 'trial'`, tm.Owner.TeamID); n != 1 {
		t.Fatal("the add-on is not in the state asked for")
	}
	tm.O.NewContact("Ann", "ann@example.com")
	other := tm.AddTeam("other")
	if other.Env != tm.Env || other.Owner.TeamID == tm.Owner.TeamID || other.Book == tm.Book {
		t.Fatalf("second tenant: %+v", other)
	}
	if n := other.Key.Get("/api/v1/contacts").Expect(http.StatusOK).Int("meta.total"); n != 0 {
		t.Fatalf("the second tenant sees %d contacts", n)
	}
	bare := Setup(t, Options{NoTeam: true})
	if bare.Env == nil || bare.Mail == nil || bare.Owner != nil || bare.O != nil {
		t.Fatalf("no-team cast: %+v", bare)
	}
}

func itoa(i int) string { return strconv.Itoa(i) }
