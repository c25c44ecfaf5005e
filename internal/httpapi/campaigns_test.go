package httpapi_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/contactbook/contactbook/internal/apptest"
)

func TestTemplateCRUD(t *testing.T) {
	t.Parallel()
	c := newCampEnv(t, "active")
	for _, cl := range []*apptest.Client{c.Key, c.O} {
		prefix := "/api/v1"
		if cl == c.O {
			prefix = "/api"
		}
		t.Run(prefix, func(t *testing.T) {
			b := cl.Post(prefix+"/campaign-templates", map[string]any{"name": " beta ", "subject": "Hi {{first_name}}", "body_html": "<p>x</p>"}).Expect(http.StatusOK)
			id := b.String("data.id")
			if b.String("data.name") != "beta" || b.String("data.subject") != "Hi {{first_name}}" || b.String("data.body_html") != "<p>x</p>" ||
				b.String("data.book_id") != c.Book || b.String("data.created_at") == "" {
				t.Fatalf("created: %s", b.Body)
			}
			if cl == c.Key && b.Value("data.created_by") != nil {
				t.Fatalf("an API key is not a user: %s", b.Body)
			}
			if cl == c.O && b.String("data.created_by") != c.Owner.ID {
				t.Fatalf("created_by: %s", b.Body)
			}
			a := cl.Post(prefix+"/campaign-templates", map[string]any{"name": "Alpha"}).Expect(http.StatusOK)
			if a.String("data.subject") != "" || a.String("data.body_html") != "" {
				t.Fatalf("optional fields: %s", a.Body)
			}
			cl.Post(prefix+"/campaign-templates", map[string]any{"name": "charlie"}).Expect(http.StatusOK)

			list := cl.Get(prefix + "/campaign-templates").Expect(http.StatusOK)
			var names []string
			for i := range list.Len("data") {
				names = append(names, list.String(fmt.Sprintf("data.%d.name", i)))
			}
			if strings.Join(names, ",") != "Alpha,beta,charlie" {
				t.Fatalf("list sorted by name: %v", names)
			}

			if cl.Get(prefix+"/campaign-templates/"+id).Expect(http.StatusOK).String("data.name") != "beta" {
				t.Fatal("get")
			}
			p := cl.Patch(prefix+"/campaign-templates/"+id, map[string]any{"subject": "New"}).Expect(http.StatusOK)
			if p.String("data.subject") != "New" || p.String("data.name") != "beta" || p.String("data.body_html") != "<p>x</p>" {
				t.Fatalf("patch changed more than sent: %s", p.Body)
			}
			cl.Patch(prefix+"/campaign-templates/"+id, map[string]any{}).ExpectError(http.StatusBadRequest, "INVALID_INPUT")
			cl.Patch(prefix+"/campaign-templates/"+id, map[string]any{"name": nil}).ExpectError(http.StatusBadRequest, "INVALID_INPUT")
			cl.Patch(prefix+"/campaign-templates/"+id, map[string]any{"name": " "}).ExpectError(http.StatusBadRequest, "INVALID_INPUT")

			d := cl.Delete(prefix + "/campaign-templates/" + id).Expect(http.StatusOK)
			if d.String("data.message") == "" {
				t.Fatalf("delete answer: %s", d.Body)
			}
			cl.Get(prefix+"/campaign-templates/"+id).ExpectError(http.StatusNotFound, "NOT_FOUND")
			cl.Delete(prefix+"/campaign-templates/"+id).ExpectError(http.StatusNotFound, "NOT_FOUND")
			cl.Patch(prefix+"/campaign-templates/"+id, map[string]any{"name": "x"}).ExpectError(http.StatusNotFound, "NOT_FOUND")
		})
		c.Env.App.Pool.Exec(t.Context(), `DELETE FROM email_templates`) //nolint:errcheck // fresh list for the next API
	}
}

func TestTemplateErrors(t *testing.T) {
	t.Parallel()
	c := newCampEnv(t, "active")
	noBook := c.Owner.NewKey()
	noBook.Get("/api/v1/campaign-templates").ExpectError(http.StatusBadRequest, "MISSING_BOOK")
	noBook.Post("/api/v1/campaign-templates", map[string]any{"name": "x"}).ExpectError(http.StatusBadRequest, "MISSING_BOOK")
	c.Key.Post("/api/v1/campaign-templates", map[string]any{"subject": "no name"}).ExpectError(http.StatusBadRequest, "INVALID_INPUT")
	c.Key.Post("/api/v1/campaign-templates", map[string]any{"name": strings.Repeat("n", 201)}).ExpectError(http.StatusBadRequest, "INVALID_INPUT")
	c.Key.Post("/api/v1/campaign-templates", map[string]any{"name": 5}).ExpectError(http.StatusBadRequest, "INVALID_INPUT")
	c.Key.Post("/api/v1/campaign-templates", apptest.Raw{ContentType: "application/json", Body: []byte("{")}).ExpectError(http.StatusBadRequest, "INVALID_INPUT")
	c.Key.Post("/api/v1/campaign-templates", apptest.Raw{ContentType: "text/plain", Body: []byte(`{"name":"x"}`)}).ExpectError(http.StatusUnsupportedMediaType, "UNSUPPORTED_MEDIA_TYPE")
	c.Key.Get("/api/v1/campaign-templates/not-a-uuid").ExpectError(http.StatusNotFound, "NOT_FOUND")

	// A template is reached only through its own book.
	id := c.Key.NewTemplateWith("T", "s", "b")
	other := c.Owner.CreateBook("Other")
	c.Key.InBook(other).Get("/api/v1/campaign-templates/"+id).ExpectError(http.StatusNotFound, "NOT_FOUND")
	c.Key.InBook(other).Delete("/api/v1/campaign-templates/"+id).ExpectError(http.StatusNotFound, "NOT_FOUND")
	// Another team's book is forbidden, not found.
	stranger := c.Env.Signup("stranger")
	stranger.SetAddon("active")
	stranger.NewKey().InBook(c.Book).Get("/api/v1/campaign-templates").ExpectError(http.StatusForbidden, "FORBIDDEN")
	stranger.NewKey().InBook(stranger.CreateBook("S")).Get("/api/v1/campaign-templates/"+id).ExpectError(http.StatusNotFound, "NOT_FOUND")
}

func TestCampaignCRUD(t *testing.T) {
	t.Parallel()
	c := newCampEnv(t, "active")
	c.O.ConfigureEmail()
	tpl := c.Key.NewTemplateWith("T", "Hi", "<p>x</p>")

	r := c.Key.Post("/api/v1/campaigns", map[string]any{"name": " Onboarding ", "description": "Welcome series"}).Expect(http.StatusOK)
	id := r.String("data.id")
	if r.String("data.status") != "draft" || r.String("data.name") != "Onboarding" || r.String("data.description") != "Welcome series" ||
		r.String("data.book_id") != c.Book {
		t.Fatalf("created: %s", r.Body)
	}
	c.Key.Post("/api/v1/campaigns", map[string]any{"description": "no name"}).ExpectError(http.StatusBadRequest, "INVALID_INPUT")
	c.Owner.NewKey().Post("/api/v1/campaigns", map[string]any{"name": "x"}).ExpectError(http.StatusBadRequest, "MISSING_BOOK")
	c.Owner.NewKey().Get("/api/v1/campaigns").ExpectError(http.StatusBadRequest, "MISSING_BOOK")

	c.Key.NewEmailStep(id, tpl, nil)
	c.Key.NewEmailStep(id, tpl, map[string]any{"schedule_type": "delay", "delay_days": 3})
	ids := c.contacts(3)
	if n := c.Key.Enroll(id, ids...); n != 3 {
		t.Fatalf("enrolled %d", n)
	}
	c.Env.Clock.Advance(time.Second)
	c.Key.Post("/api/v1/campaigns", map[string]any{"name": "Second"}).Expect(http.StatusOK)

	list := c.Key.Get("/api/v1/campaigns").Expect(http.StatusOK)
	if list.Len("data") != 2 {
		t.Fatalf("list: %s", list.Body)
	}
	// Newest first; counts on list items only.
	if list.String("data.1.id") != id || list.Int("data.1.step_count") != 2 || list.Int("data.1.participant_count") != 3 ||
		list.Int("data.0.step_count") != 0 || !list.Has("data.0.participant_count") {
		t.Fatalf("list counts: %s", list.Body)
	}
	// participant_count counts active participants only.
	pid := c.O.Get("/api/campaigns/" + id + "/participants").Expect(http.StatusOK).String("data.0.id")
	c.O.Delete("/api/campaigns/" + id + "/participants/" + pid).Expect(http.StatusOK)
	if n := c.Key.Get("/api/v1/campaigns").Expect(http.StatusOK).Int("data.1.participant_count"); n != 2 {
		t.Fatalf("participant_count after a removal = %d", n)
	}

	g := c.Key.Get("/api/v1/campaigns/" + id).Expect(http.StatusOK)
	if g.Len("data.steps") != 2 || g.Int("data.steps.0.sort_order") != 0 || g.Int("data.steps.1.sort_order") != 1 ||
		g.Int("data.steps.1.delay_days") != 3 || g.Has("data.step_count") {
		t.Fatalf("get: %s", g.Body)
	}
	if e := c.Key.Get("/api/v1/campaigns/" + list.String("data.0.id")).Expect(http.StatusOK); e.Len("data.steps") != 0 {
		t.Fatalf("no steps must be []: %s", e.Body)
	}

	// Patch: at least one field, only what is sent changes; any status may follow any.
	c.Key.Patch("/api/v1/campaigns/"+id, map[string]any{}).ExpectError(http.StatusBadRequest, "INVALID_INPUT")
	c.Key.Patch("/api/v1/campaigns/"+id, map[string]any{"status": "running"}).ExpectError(http.StatusBadRequest, "INVALID_INPUT")
	c.Key.Patch("/api/v1/campaigns/"+id, map[string]any{"status": ""}).ExpectError(http.StatusBadRequest, "INVALID_INPUT")
	c.Key.Patch("/api/v1/campaigns/"+id, map[string]any{"name": nil}).ExpectError(http.StatusBadRequest, "INVALID_INPUT")
	for _, st := range []string{"active", "paused", "archived", "draft", "archived", "active"} {
		p := c.Key.Patch("/api/v1/campaigns/"+id, map[string]any{"status": st}).Expect(http.StatusOK)
		if p.String("data.status") != st || p.String("data.name") != "Onboarding" || p.String("data.description") != "Welcome series" {
			t.Fatalf("patch to %s: %s", st, p.Body)
		}
	}
	p := c.O.Patch("/api/campaigns/"+id, map[string]any{"name": "Renamed", "description": ""}).Expect(http.StatusOK)
	if p.String("data.name") != "Renamed" || p.String("data.description") != "" || p.String("data.status") != "active" {
		t.Fatalf("patch: %s", p.Body)
	}

	// Delete cascades: steps, participants, completion records.
	c.Env.ProcessCampaign(id)
	if c.Env.QueryInt(`SELECT count(*) FROM campaign_step_completions WHERE campaign_id = $1`, id) != 2 {
		t.Fatal("expected completion records before the delete")
	}
	d := c.Key.Delete("/api/v1/campaigns/" + id).Expect(http.StatusOK)
	if d.String("data.message") == "" {
		t.Fatalf("delete: %s", d.Body)
	}
	for _, q := range []string{
		`SELECT count(*) FROM campaign_steps WHERE campaign_id = $1`,
		`SELECT count(*) FROM campaign_participants WHERE campaign_id = $1`,
		`SELECT count(*) FROM campaign_step_completions WHERE campaign_id = $1`,
		`SELECT count(*) FROM campaign_claims WHERE campaign_id = $1`,
	} {
		if n := c.Env.QueryInt(q, id); n != 0 {
			t.Fatalf("%s: %d left", q, n)
		}
	}
	c.Key.Get("/api/v1/campaigns/"+id).ExpectError(http.StatusNotFound, "NOT_FOUND")
	c.Key.Delete("/api/v1/campaigns/"+id).ExpectError(http.StatusNotFound, "NOT_FOUND")
	c.Key.Patch("/api/v1/campaigns/"+id, map[string]any{"name": "x"}).ExpectError(http.StatusNotFound, "NOT_FOUND")
}

func TestCampaignBookHint(t *testing.T) {
	t.Parallel()
	c := newCampEnv(t, "active")
	id := c.Key.NewCampaignIn("C", "draft")
	other := c.Owner.CreateBook("Other")
	// X-Book-ID is optional for a campaign addressed by id; when sent, the
	// campaign must be in that book.
	c.Owner.NewKey().Get("/api/v1/campaigns/" + id).Expect(http.StatusOK)
	c.Key.InBook(other).Get("/api/v1/campaigns/"+id).ExpectError(http.StatusNotFound, "NOT_FOUND")
	c.Key.InBook("nope").Get("/api/v1/campaigns/"+id).ExpectError(http.StatusBadRequest, "INVALID_INPUT")
}

func TestStepCreateValidation(t *testing.T) {
	t.Parallel()
	c := newCampEnv(t, "active")
	c.O.ConfigureEmail() // a key's step senders are on the book's domain, acme.example
	tpl := c.Key.NewTemplateWith("T", "s", "b")
	cid := c.Key.NewCampaignIn("Main", "draft")
	target := c.Key.NewCampaignIn("Target", "draft")
	other := c.Owner.CreateBook("Other")
	otherTpl := c.Key.InBook(other).Post("/api/v1/campaign-templates", map[string]any{"name": "O"}).Expect(http.StatusOK).String("data.id")
	otherCampaign := c.Key.InBook(other).Post("/api/v1/campaigns", map[string]any{"name": "O"}).Expect(http.StatusOK).String("data.id")

	email := func(kv ...any) map[string]any {
		m := map[string]any{"step_type": "email", "name": "E", "schedule_type": "immediate", "email_template_id": tpl}
		for i := 0; i+1 < len(kv); i += 2 {
			if kv[i+1] == nil {
				delete(m, kv[i].(string))
				continue
			}
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	bad := map[string]map[string]any{
		"no step_type":          email("step_type", nil),
		"unknown step_type":     email("step_type", "sms"),
		"no name":               email("name", nil),
		"blank name":            email("name", "  "),
		"long name":             email("name", strings.Repeat("n", 201)),
		"no schedule":           email("schedule_type", nil),
		"unknown schedule":      email("schedule_type", "weekly"),
		"delay without days":    email("schedule_type", "delay"),
		"negative delay":        email("schedule_type", "delay", "delay_days", -1),
		"delay days not int":    email("schedule_type", "delay", "delay_days", "2"),
		"fixed without date":    email("schedule_type", "fixed_date"),
		"fixed impossible date": email("schedule_type", "fixed_date", "fixed_date", "2026-02-30"),
		"fixed bad format":      email("schedule_type", "fixed_date", "fixed_date", "03/04/2026"),
		"email without tpl":     email("email_template_id", nil),
		"tpl of other book":     email("email_template_id", otherTpl),
		"unknown tpl":           email("email_template_id", "6f1c1d7e-0000-4000-8000-000000000000"),
		"bad sender email":      email("sender_email", "not-an-address"),
		"trigger without id":    {"step_type": "trigger", "name": "T", "schedule_type": "immediate"},
		"trigger itself":        {"step_type": "trigger", "name": "T", "schedule_type": "immediate", "trigger_campaign_id": cid},
		"trigger other book":    {"step_type": "trigger", "name": "T", "schedule_type": "immediate", "trigger_campaign_id": otherCampaign},
	}
	for name, body := range bad {
		t.Run(name, func(t *testing.T) {
			c.Key.Post("/api/v1/campaigns/"+cid+"/steps", body).ExpectError(http.StatusBadRequest, "INVALID_INPUT")
		})
	}
	if n := c.Env.QueryInt(`SELECT count(*) FROM campaign_steps`); n != 0 {
		t.Fatalf("invalid steps were stored: %d", n)
	}

	s0 := c.Key.Post("/api/v1/campaigns/"+cid+"/steps", email("sender_name", "Ann", "sender_email", "ann@acme.example")).Expect(http.StatusOK)
	if s0.Int("data.sort_order") != 0 || !s0.Bool("data.active") || s0.String("data.sender_email") != "ann@acme.example" ||
		s0.Value("data.trigger_campaign_id") != nil || s0.Value("data.fixed_date") != nil || s0.String("data.campaign_id") != cid {
		t.Fatalf("step 0: %s", s0.Body)
	}
	s1 := c.O.Post("/api/campaigns/"+cid+"/steps", email("schedule_type", "delay", "delay_days", 0)).Expect(http.StatusOK)
	if s1.Int("data.sort_order") != 1 || s1.Int("data.delay_days") != 0 || s1.String("data.schedule_type") != "delay" {
		t.Fatalf("step 1: %s", s1.Body)
	}
	s2 := c.Key.Post("/api/v1/campaigns/"+cid+"/steps", email("schedule_type", "fixed_date", "fixed_date", "2026-12-24", "active", false)).Expect(http.StatusOK)
	if s2.Int("data.sort_order") != 2 || s2.String("data.fixed_date") != "2026-12-24" || s2.Bool("data.active") {
		t.Fatalf("step 2: %s", s2.Body)
	}
	// Fields a step type does not use are not kept.
	s3 := c.Key.Post("/api/v1/campaigns/"+cid+"/steps", map[string]any{
		"step_type": "trigger", "name": "Go on", "schedule_type": "immediate", "trigger_campaign_id": target,
		"email_template_id": tpl, "delay_days": 4, "sender_email": "x@acme.example",
	}).Expect(http.StatusOK)
	if s3.Int("data.sort_order") != 3 || s3.Value("data.email_template_id") != nil || s3.Int("data.delay_days") != 0 ||
		s3.String("data.sender_email") != "" || s3.String("data.trigger_campaign_id") != target {
		t.Fatalf("step 3: %s", s3.Body)
	}
	c.Key.Post("/api/v1/campaigns/6f1c1d7e-0000-4000-8000-000000000000/steps", email()).ExpectError(http.StatusNotFound, "NOT_FOUND")
}

func TestStepPatchReorderDelete(t *testing.T) {
	t.Parallel()
	c := newCampEnv(t, "active")
	tpl := c.Key.NewTemplateWith("T", "s", "b")
	tpl2 := c.Key.NewTemplateWith("T2", "s", "b")
	cid := c.Key.NewCampaignIn("Main", "draft")
	target := c.Key.NewCampaignIn("Target", "draft")
	a := c.Key.NewEmailStep(cid, tpl, map[string]any{"name": "A", "sender_name": "Ann"})
	b := c.Key.NewEmailStep(cid, tpl, map[string]any{"name": "B"})
	d := c.Key.NewStep(cid, map[string]any{"step_type": "trigger", "name": "D", "schedule_type": "immediate", "trigger_campaign_id": target})
	base := "/api/campaigns/" + cid + "/steps/"

	// Only supplied fields change; the whole step is validated again.
	p := c.O.Patch(base+a, map[string]any{"name": "A2", "active": false}).Expect(http.StatusOK)
	if p.String("data.name") != "A2" || p.Bool("data.active") || p.String("data.sender_name") != "Ann" || p.String("data.email_template_id") != tpl {
		t.Fatalf("patch: %s", p.Body)
	}
	p = c.O.Patch(base+a, map[string]any{"schedule_type": "delay", "delay_days": 7, "email_template_id": tpl2}).Expect(http.StatusOK)
	if p.String("data.schedule_type") != "delay" || p.Int("data.delay_days") != 7 || p.String("data.email_template_id") != tpl2 || p.String("data.name") != "A2" {
		t.Fatalf("patch schedule: %s", p.Body)
	}
	p = c.O.Patch(base+a, map[string]any{"schedule_type": "fixed_date", "fixed_date": "2027-01-01"}).Expect(http.StatusOK)
	if p.String("data.fixed_date") != "2027-01-01" || p.Int("data.delay_days") != 0 {
		t.Fatalf("patch fixed date: %s", p.Body)
	}
	for name, body := range map[string]map[string]any{
		"empty":               {},
		"null template":       {"email_template_id": nil},
		"null fixed date":     {"fixed_date": nil},
		"bad date":            {"fixed_date": "2027-13-01"},
		"null name":           {"name": nil},
		"null active":         {"active": nil},
		"bad schedule":        {"schedule_type": "often"},
		"negative delay":      {"schedule_type": "delay", "delay_days": -2},
		"trigger to itself":   {"trigger_campaign_id": cid},
		"unknown template":    {"email_template_id": "6f1c1d7e-0000-4000-8000-000000000000"},
		"bad sender email":    {"sender_email": "nope"},
		"active not boolean":  {"active": "yes"},
		"template not a uuid": {"email_template_id": "x"},
	} {
		t.Run(name, func(t *testing.T) {
			step := a
			if name == "trigger to itself" {
				step = d
			}
			c.O.Patch(base+step, body).ExpectError(http.StatusBadRequest, "INVALID_INPUT")
		})
	}
	c.O.Patch(base+"6f1c1d7e-0000-4000-8000-000000000000", map[string]any{"name": "x"}).ExpectError(http.StatusNotFound, "NOT_FOUND")
	// Internal API only.
	c.Key.Patch("/api/v1/campaigns/"+cid+"/steps/"+a, map[string]any{"name": "x"}).Expect(http.StatusNotFound)

	// Reorder: exactly the campaign's steps.
	for name, ids := range map[string][]string{
		"missing one": {a, b},
		"duplicate":   {a, b, b},
		"foreign":     {a, b, "6f1c1d7e-0000-4000-8000-000000000000"},
		"extra":       {a, b, d, "6f1c1d7e-0000-4000-8000-000000000000"},
		"empty":       {},
	} {
		t.Run("reorder "+name, func(t *testing.T) {
			c.O.Patch(base+"reorder", map[string]any{"step_ids": ids}).ExpectError(http.StatusBadRequest, "INVALID_INPUT")
		})
	}
	c.O.Patch(base+"reorder", map[string]any{}).ExpectError(http.StatusBadRequest, "INVALID_INPUT")
	if c.O.Patch(base+"reorder", map[string]any{"step_ids": []string{d, a, b}}).Expect(http.StatusOK).String("data.message") == "" {
		t.Fatal("reorder answer")
	}
	order := func() string {
		g := c.Key.Get("/api/v1/campaigns/" + cid).Expect(http.StatusOK)
		var parts []string
		for i := range g.Len("data.steps") {
			parts = append(parts, fmt.Sprintf("%s:%d", g.String(fmt.Sprintf("data.steps.%d.name", i)), g.Int(fmt.Sprintf("data.steps.%d.sort_order", i))))
		}
		return strings.Join(parts, ",")
	}
	if o := order(); o != "D:0,A2:1,B:2" {
		t.Fatalf("after reorder: %s", o)
	}
	// Delete closes the gap.
	if c.O.Delete(base+a).Expect(http.StatusOK).String("data.message") == "" {
		t.Fatal("delete answer")
	}
	if o := order(); o != "D:0,B:1" {
		t.Fatalf("after delete: %s", o)
	}
	c.O.Delete(base+a).ExpectError(http.StatusNotFound, "NOT_FOUND")
	// A step is found only in its own campaign.
	c.O.Delete("/api/campaigns/"+target+"/steps/"+b).ExpectError(http.StatusNotFound, "NOT_FOUND")
	// Appending after a delete continues the sequence.
	if s := c.Key.Post("/api/v1/campaigns/"+cid+"/steps", map[string]any{"step_type": "email", "name": "E", "schedule_type": "immediate", "email_template_id": tpl}).
		Expect(http.StatusOK); s.Int("data.sort_order") != 2 {
		t.Fatalf("append: %s", s.Body)
	}
	// A deleted template leaves the step in place without one.
	c.Key.Delete("/api/v1/campaign-templates/" + tpl).Expect(http.StatusOK)
	if g := c.Key.Get("/api/v1/campaigns/" + cid).Expect(http.StatusOK); g.Value("data.steps.1.email_template_id") != nil {
		t.Fatalf("template reference should be cleared: %s", g.Body)
	}
}

func TestParticipantEnroll(t *testing.T) {
	t.Parallel()
	c := newCampEnv(t, "active")
	cid := c.Key.NewCampaignIn("C", "draft")
	ids := c.contacts(4)
	other := c.Owner.CreateBook("Other")
	foreign := c.Key.InBook(other).Post("/api/v1/contacts", map[string]any{"first_name": "F"}).Expect(http.StatusCreated).String("data.id")
	suppressed := c.contact("Sup", "sup@example.com")
	if _, err := c.Env.App.Pool.Exec(t.Context(), `UPDATE contacts SET suppressed_at = now() WHERE id = $1`, suppressed); err != nil {
		t.Fatal(err)
	}
	path := "/api/v1/campaigns/" + cid + "/participants"

	if n := c.Key.Post(path, map[string]any{"contact_ids": ids[:2]}).Expect(http.StatusOK).Int("data.enrolled"); n != 2 {
		t.Fatalf("enrolled %d", n)
	}
	// Already enrolled, suppressed, other books' and unknown contacts are
	// skipped and not counted; duplicates count once.
	n := c.O.Post("/api"+path[len("/api/v1"):], map[string]any{"contact_ids": []string{
		ids[0], ids[1], ids[2], ids[2], foreign, suppressed, "6f1c1d7e-0000-4000-8000-000000000000",
	}}).Expect(http.StatusOK).Int("data.enrolled")
	if n != 1 {
		t.Fatalf("second enroll counted %d, want 1", n)
	}
	if got := c.Env.QueryInt(`SELECT count(*) FROM campaign_participants WHERE campaign_id = $1`, cid); got != 3 {
		t.Fatalf("participants %d", got)
	}
	if c.Env.QueryInt(`SELECT count(*) FROM campaign_participants WHERE campaign_id = $1 AND enrolled_by = $2`, cid, c.Owner.ID) != 1 {
		t.Fatal("enrolled_by of a user enrollment")
	}

	c.Key.Post(path, map[string]any{"contact_ids": []string{}}).ExpectError(http.StatusBadRequest, "INVALID_INPUT")
	c.Key.Post(path, map[string]any{}).ExpectError(http.StatusBadRequest, "INVALID_INPUT")
	c.Key.Post(path, map[string]any{"contact_ids": []string{"x"}}).ExpectError(http.StatusBadRequest, "INVALID_INPUT")
	tooMany := make([]string, 10_001)
	for i := range tooMany {
		tooMany[i] = ids[0]
	}
	c.Key.Post(path, map[string]any{"contact_ids": tooMany}).ExpectError(http.StatusBadRequest, "INVALID_INPUT")
	if n := c.Key.Post(path, map[string]any{"contact_ids": tooMany[:10_000]}).Expect(http.StatusOK).Int("data.enrolled"); n != 0 {
		t.Fatalf("10,000 ids are allowed: %d", n)
	}
	c.Key.Post("/api/v1/campaigns/6f1c1d7e-0000-4000-8000-000000000000/participants", map[string]any{"contact_ids": ids}).ExpectError(http.StatusNotFound, "NOT_FOUND")

	// Archived campaigns take no one; other statuses do.
	c.Key.Patch("/api/v1/campaigns/"+cid, map[string]any{"status": "archived"}).Expect(http.StatusOK)
	c.Key.Post(path, map[string]any{"contact_ids": ids[3:]}).ExpectError(http.StatusBadRequest, "INVALID_STATUS")
	c.Key.Patch("/api/v1/campaigns/"+cid, map[string]any{"status": "paused"}).Expect(http.StatusOK)
	c.Key.Enroll(cid, ids[3])
}

func TestParticipantEnrollLabel(t *testing.T) {
	t.Parallel()
	c := newCampEnv(t, "active")
	cid := c.Key.NewCampaignIn("C", "active")
	ids := c.contacts(3)
	label := c.Owner.Post("/api/books/"+c.Book+"/labels", map[string]any{"name": "VIP"}).Expect(http.StatusCreated).String("data.id")
	for _, id := range ids[:2] {
		c.Key.Post("/api/v1/contacts/"+id+"/labels", map[string]any{"label_id": label}).Expect(http.StatusOK)
	}
	other := c.Owner.CreateBook("Other")
	otherLabel := c.Owner.Post("/api/books/"+other+"/labels", map[string]any{"name": "X"}).Expect(http.StatusCreated).String("data.id")
	path := "/api/campaigns/" + cid + "/participants/enroll-label"

	c.Key.Enroll(cid, ids[1])
	if n := c.O.Post(path, map[string]any{"label_id": label}).Expect(http.StatusOK).Int("data.enrolled"); n != 1 {
		t.Fatalf("enrolled %d, want 1 (one of two already enrolled)", n)
	}
	if n := c.O.Post(path, map[string]any{"label_id": label}).Expect(http.StatusOK).Int("data.enrolled"); n != 0 {
		t.Fatalf("again: %d", n)
	}
	c.O.Post(path, map[string]any{}).ExpectError(http.StatusBadRequest, "INVALID_INPUT")
	c.O.Post(path, map[string]any{"label_id": otherLabel}).ExpectError(http.StatusBadRequest, "INVALID_INPUT")
	c.O.Post(path, map[string]any{"label_id": "6f1c1d7e-0000-4000-8000-000000000000"}).ExpectError(http.StatusNotFound, "NOT_FOUND")
	c.Key.Post("/api/v1/campaigns/"+cid+"/participants/enroll-label", map[string]any{"label_id": label}).Expect(http.StatusNotFound)
	c.Key.Patch("/api/v1/campaigns/"+cid, map[string]any{"status": "archived"}).Expect(http.StatusOK)
	c.O.Post(path, map[string]any{"label_id": label}).ExpectError(http.StatusBadRequest, "INVALID_STATUS")
}

func TestParticipantListRemoveHistory(t *testing.T) {
	t.Parallel()
	c := newCampEnv(t, "active")
	c.O.ConfigureEmail()
	tpl := c.Key.NewTemplateWith("T", "Hi", "<p>x</p>")
	cid := c.Key.NewCampaignIn("C", "active")
	s0 := c.Key.NewEmailStep(cid, tpl, map[string]any{"name": "First"})
	c.Key.NewEmailStep(cid, tpl, map[string]any{"name": "Later", "schedule_type": "delay", "delay_days": 2})
	var ids []string
	for i := range 5 {
		ids = append(ids, c.contact(fmt.Sprint("p", i), fmt.Sprintf("p%d@example.com", i)))
		c.Key.Enroll(cid, ids[i])
		c.Env.Clock.Advance(time.Second) // distinct enrollment times make the order certain
	}
	noEmail := c.contact("Nomail", "")
	c.Key.Enroll(cid, noEmail)
	base := "/api/campaigns/" + cid + "/participants"

	all := c.O.Get(base).Expect(http.StatusOK)
	if all.Len("data") != 6 || all.Int("meta.total") != 6 || all.Int("meta.page") != 1 || all.Int("meta.limit") != 50 {
		t.Fatalf("list: %s", all.Body)
	}
	if all.String("data.0.contact_id") != ids[0] || all.String("data.0.contact_name") != "p0 Tester" ||
		all.String("data.0.contact_email") != "p0@example.com" || all.String("data.0.status") != "active" ||
		all.String("data.0.enrolled_by") != "" || all.Value("data.0.completed_at") != nil || all.String("data.0.campaign_id") != cid {
		t.Fatalf("item: %s", all.Body)
	}
	if all.String("data.5.contact_email") != "" {
		t.Fatalf("no email must be empty: %s", all.Body)
	}
	pg := c.O.Get(base + "?page=2&limit=2").Expect(http.StatusOK)
	if pg.Len("data") != 2 || pg.String("data.0.contact_id") != ids[2] || pg.Int("meta.page") != 2 || pg.Int("meta.limit") != 2 || pg.Int("meta.total") != 6 {
		t.Fatalf("page 2: %s", pg.Body)
	}
	if l := c.O.Get(base + "?limit=500").Expect(http.StatusOK).Int("meta.limit"); l != 100 {
		t.Fatalf("limit clamps to 100: %d", l)
	}
	c.O.Get(base+"?page=0").ExpectError(http.StatusBadRequest, "INVALID_INPUT")
	c.O.Get(base+"?limit=-1").ExpectError(http.StatusBadRequest, "INVALID_INPUT")
	c.Key.Get("/api/v1/campaigns/" + cid + "/participants").Expect(http.StatusMethodNotAllowed)

	// History: the completion records of one participant, in step order.
	c.Env.ProcessCampaign(cid)
	pid := all.String("data.0.id")
	h := c.O.Get(base + "/" + pid + "/history").Expect(http.StatusOK)
	if h.Len("data") != 1 || h.String("data.0.step_id") != s0 || h.String("data.0.step_name") != "First" || h.String("data.0.step_type") != "email" ||
		h.Int("data.0.sort_order") != 0 || h.String("data.0.result_type") != "success" || h.String("data.0.result_detail") != "" || h.String("data.0.completed_at") == "" {
		t.Fatalf("history: %s", h.Body)
	}
	nomail := all.String("data.5.id")
	if h := c.O.Get(base + "/" + nomail + "/history").Expect(http.StatusOK); h.String("data.0.result_type") != "failed" ||
		h.String("data.0.result_detail") != "contact has no email address" {
		t.Fatalf("failed history: %s", h.Body)
	}
	c.O.Get(base+"/6f1c1d7e-0000-4000-8000-000000000000/history").ExpectError(http.StatusNotFound, "NOT_FOUND")

	// Remove: status removed, excluded from the list, no more emails.
	if c.O.Delete(base+"/"+pid).Expect(http.StatusOK).String("data.message") == "" {
		t.Fatal("remove answer")
	}
	if n := c.O.Get(base).Expect(http.StatusOK).Int("meta.total"); n != 5 {
		t.Fatalf("total after removal %d", n)
	}
	if st := c.Env.QueryInt(`SELECT count(*) FROM campaign_participants WHERE id = $1 AND status = 'removed' AND removed_at IS NOT NULL`, pid); st != 1 {
		t.Fatal("participant not marked removed")
	}
	c.O.Delete(base + "/" + pid).Expect(http.StatusOK) // idempotent
	c.O.Delete(base+"/6f1c1d7e-0000-4000-8000-000000000000").ExpectError(http.StatusNotFound, "NOT_FOUND")
	c.Mail.Reset()
	c.Env.Clock.Advance(3 * day)
	c.Env.ProcessCampaign(cid)
	for _, r := range c.Mail.Recipients() {
		if r.Email == "p0@example.com" {
			t.Fatal("a removed participant got an email")
		}
	}
	if c.Mail.RecipientCount() != 4 {
		t.Fatalf("later step reached %d, want 4", c.Mail.RecipientCount())
	}
}

func TestCampaignStatsAndStepContacts(t *testing.T) {
	t.Parallel()
	c := newCampEnv(t, "active")
	c.O.ConfigureEmail()
	tpl := c.Key.NewTemplateWith("T", "Hi", "<p>x</p>")
	cid := c.Key.NewCampaignIn("C", "active")
	s0 := c.Key.NewEmailStep(cid, tpl, map[string]any{"name": "Welcome"})
	s1 := c.Key.NewEmailStep(cid, tpl, map[string]any{"name": "Follow-up", "schedule_type": "delay", "delay_days": 1})
	ids := c.contacts(3)
	noEmail := c.contact("Nomail", "")
	c.Key.Enroll(cid, append(ids, noEmail)...)

	st := c.O.Get("/api/campaigns/" + cid + "/stats").Expect(http.StatusOK)
	if st.Int("data.summary.total_participants") != 4 || st.Int("data.summary.active_count") != 4 || st.Int("data.summary.total_steps") != 2 ||
		st.Int("data.summary.total_completions") != 0 || st.Len("data.steps") != 2 {
		t.Fatalf("stats before: %s", st.Body)
	}
	c.Env.ProcessCampaign(cid)
	c.Env.Clock.Advance(day)
	c.Env.ProcessCampaign(cid)
	pid := c.O.Get("/api/campaigns/" + cid + "/participants").Expect(http.StatusOK).String("data.0.id")
	c.O.Delete("/api/campaigns/" + cid + "/participants/" + pid).Expect(http.StatusOK)

	st = c.O.Get("/api/campaigns/" + cid + "/stats").Expect(http.StatusOK)
	want := map[string]int{
		"data.summary.total_participants": 4, "data.summary.active_count": 0, "data.summary.completed_count": 3,
		"data.summary.total_steps": 2, "data.summary.total_completions": 8, "data.summary.failed_count": 2,
		"data.steps.0.success_count": 3, "data.steps.0.failed_count": 1, "data.steps.1.success_count": 3, "data.steps.1.failed_count": 1,
		"data.steps.1.sort_order": 1,
	}
	for path, n := range want {
		if st.Int(path) != n {
			t.Errorf("%s = %d, want %d", path, st.Int(path), n)
		}
	}
	if st.String("data.steps.0.step_id") != s0 || st.String("data.steps.0.step_name") != "Welcome" || st.String("data.steps.1.step_id") != s1 {
		t.Fatalf("stats steps: %s", st.Body)
	}

	base := "/api/campaign-step-contacts/" + cid + "/" + s0
	all := c.O.Get(base).Expect(http.StatusOK)
	if all.Len("data") != 4 || all.Int("meta.total") != 4 {
		t.Fatalf("step contacts: %s", all.Body)
	}
	failed := c.O.Get(base + "?result=failed").Expect(http.StatusOK)
	if failed.Len("data") != 1 || failed.String("data.0.contact_id") != noEmail || failed.String("data.0.result_type") != "failed" ||
		failed.String("data.0.result_detail") != "contact has no email address" || failed.String("data.0.contact_name") != "Nomail Tester" ||
		failed.String("data.0.contact_email") != "" || failed.String("data.0.id") == "" || failed.String("data.0.completed_at") == "" {
		t.Fatalf("failed: %s", failed.Body)
	}
	ok := c.O.Get(base + "?result=success&limit=2&page=2").Expect(http.StatusOK)
	if ok.Len("data") != 1 || ok.Int("meta.total") != 3 || ok.Int("meta.page") != 2 || !strings.HasSuffix(ok.String("data.0.contact_email"), "@example.com") {
		t.Fatalf("success page 2: %s", ok.Body)
	}
	c.O.Get(base+"?result=maybe").ExpectError(http.StatusBadRequest, "INVALID_INPUT")
	c.O.Get("/api/campaign-step-contacts/"+cid+"/6f1c1d7e-0000-4000-8000-000000000000").ExpectError(http.StatusNotFound, "NOT_FOUND")
	c.O.Get("/api/campaign-step-contacts/6f1c1d7e-0000-4000-8000-000000000000/"+s0).ExpectError(http.StatusNotFound, "NOT_FOUND")
	c.O.Get("/api/campaigns/6f1c1d7e-0000-4000-8000-000000000000/stats").ExpectError(http.StatusNotFound, "NOT_FOUND")
}

func TestCampaignContactCampaigns(t *testing.T) {
	t.Parallel()
	c := newCampEnv(t, "active")
	a := c.Key.Post("/api/v1/campaigns", map[string]any{"name": "A", "description": "first"}).Expect(http.StatusOK).String("data.id")
	b := c.Key.NewCampaignIn("B", "paused")
	contact := c.contact("Ann", "ann@example.com")
	c.Key.Enroll(a, contact)
	c.Env.Clock.Advance(time.Second)
	c.Key.Enroll(b, contact)
	pid := c.O.Get("/api/campaigns/" + a + "/participants").Expect(http.StatusOK).String("data.0.id")
	c.O.Delete("/api/campaigns/" + a + "/participants/" + pid).Expect(http.StatusOK)

	r := c.O.Get("/api/contacts/" + contact + "/campaigns").Expect(http.StatusOK)
	if r.Len("data") != 2 || r.String("data.0.campaign_id") != b || r.String("data.0.campaign_status") != "paused" ||
		r.String("data.0.participant_status") != "active" || r.String("data.1.campaign_name") != "A" || r.String("data.1.description") != "first" ||
		r.String("data.1.participant_status") != "removed" || r.String("data.1.id") != pid || r.String("data.1.enrolled_at") == "" || !r.Has("data.1.completed_at") {
		t.Fatalf("contact campaigns: %s", r.Body)
	}
	if n := c.O.Get("/api/contacts/" + c.contact("B", "") + "/campaigns").Expect(http.StatusOK).Len("data"); n != 0 {
		t.Fatalf("none: %d", n)
	}
	c.O.Get("/api/contacts/6f1c1d7e-0000-4000-8000-000000000000/campaigns").ExpectError(http.StatusNotFound, "NOT_FOUND")
	stranger := c.Env.Signup("stranger")
	stranger.SetAddon("active")
	stranger.Get("/api/contacts/"+contact+"/campaigns").ExpectError(http.StatusNotFound, "NOT_FOUND")
}

// TestCampaignAccessMatrix checks every add-on state against every role:
// no add-on (none, canceled) closes every campaign endpoint with
// ADDON_REQUIRED; a trial opens everything but run; roles decide the rest.
func TestCampaignAccessMatrix(t *testing.T) {
	t.Parallel()
	c := newCampEnv(t, "active")
	c.O.ConfigureEmail()
	tpl := c.Key.NewTemplateWith("T", "Hi", "<p>x</p>")
	cid := c.Key.NewCampaignIn("C", "active")
	contact := c.contact("Ann", "ann@example.com")
	users := map[string]*apptest.Client{
		"viewer": c.Env.Join(c.Owner, "viewer", "viewer").InBook(c.Book),
		"member": c.Env.Join(c.Owner, "member", "member").InBook(c.Book),
		"owner":  c.O,
	}
	png := apptest.PNG()

	type call struct {
		name    string
		minRole string // viewer, member, owner
		paid    bool   // needs the paid add-on
		do      func(cl *apptest.Client) *apptest.Response
	}
	calls := []call{
		{"list templates", "viewer", false, func(cl *apptest.Client) *apptest.Response { return cl.Get("/api/campaign-templates") }},
		{"get template", "viewer", false, func(cl *apptest.Client) *apptest.Response { return cl.Get("/api/campaign-templates/" + tpl) }},
		{"create template", "member", false, func(cl *apptest.Client) *apptest.Response {
			return cl.Post("/api/campaign-templates", map[string]any{"name": "N"})
		}},
		{"list campaigns", "viewer", false, func(cl *apptest.Client) *apptest.Response { return cl.Get("/api/campaigns") }},
		{"get campaign", "viewer", false, func(cl *apptest.Client) *apptest.Response { return cl.Get("/api/campaigns/" + cid) }},
		{"patch campaign", "member", false, func(cl *apptest.Client) *apptest.Response {
			return cl.Patch("/api/campaigns/"+cid, map[string]any{"description": "d"})
		}},
		{"enroll", "member", false, func(cl *apptest.Client) *apptest.Response {
			return cl.Post("/api/campaigns/"+cid+"/participants", map[string]any{"contact_ids": []string{contact}})
		}},
		{"participants", "viewer", false, func(cl *apptest.Client) *apptest.Response { return cl.Get("/api/campaigns/" + cid + "/participants") }},
		{"stats", "viewer", false, func(cl *apptest.Client) *apptest.Response { return cl.Get("/api/campaigns/" + cid + "/stats") }},
		{"contact campaigns", "viewer", false, func(cl *apptest.Client) *apptest.Response { return cl.Get("/api/contacts/" + contact + "/campaigns") }},
		{"get settings", "member", false, func(cl *apptest.Client) *apptest.Response { return cl.Get("/api/campaign-settings") }},
		{"put settings", "owner", false, func(cl *apptest.Client) *apptest.Response {
			return cl.Put("/api/campaign-settings", map[string]any{"sender_email": "news@acme.example", "mailer_api_key": "****" + apptest.MailerKey[len(apptest.MailerKey)-4:]})
		}},
		{"send test", "member", false, func(cl *apptest.Client) *apptest.Response {
			return cl.Post("/api/campaign-templates/"+tpl+"/send-test", map[string]any{"email": c.Owner.Email})
		}},
		{"upload image", "member", false, func(cl *apptest.Client) *apptest.Response { return uploadImage(t, cl, "image", "a.png", png) }},
		{"run", "member", true, func(cl *apptest.Client) *apptest.Response { return cl.Post("/api/campaigns/"+cid+"/run", nil) }},
	}
	rank := map[string]int{"viewer": 1, "member": 2, "owner": 4}
	for _, addon := range []string{"none", "trial", "active", "canceled"} {
		c.Owner.SetAddon(addon)
		for _, role := range []string{"viewer", "member", "owner"} {
			for _, cl := range calls {
				r := cl.do(users[role])
				switch {
				case addon == "none" || addon == "canceled":
					r.ExpectError(http.StatusForbidden, "ADDON_REQUIRED")
					if !strings.HasPrefix(r.String("error.message"), "Campaign add-on is required") {
						t.Fatalf("%s %s %s: message %q", addon, role, cl.name, r.String("error.message"))
					}
				case rank[role] < rank[cl.minRole]:
					r.ExpectError(http.StatusForbidden, "FORBIDDEN")
				case cl.paid && addon == "trial":
					r.ExpectError(http.StatusForbidden, "ADDON_REQUIRED")
				default:
					if r.Status != http.StatusOK {
						t.Fatalf("%s %s %s: %d %s", addon, role, cl.name, r.Status, r.Body)
					}
				}
			}
		}
	}
	c.Env.WaitJobs()

	// An API key is a member of its team on the public API.
	c.Owner.SetAddon("trial")
	c.Key.Post("/api/v1/campaigns", map[string]any{"name": "By key"}).Expect(http.StatusOK)
	c.Key.Get("/api/v1/campaign-templates").Expect(http.StatusOK)
	// The internal API does not take API keys.
	c.Key.Get("/api/campaign-settings").ExpectError(http.StatusUnauthorized, "UNAUTHORIZED")
	c.Owner.SetAddon("none")
	c.Key.Get("/api/v1/campaigns").ExpectError(http.StatusForbidden, "ADDON_REQUIRED")
	c.Key.Post("/api/v1/campaigns/"+cid+"/steps", map[string]any{"step_type": "email"}).ExpectError(http.StatusForbidden, "ADDON_REQUIRED")
	// Without the add-on, an id that names no campaign says so too: the
	// team lacks the add-on whatever the id.
	unknown := "/api/v1/campaigns/6f1c1d7e-0000-4000-8000-000000000000"
	c.Key.Get(unknown).ExpectError(http.StatusForbidden, "ADDON_REQUIRED")
	c.Key.Post(unknown+"/participants", map[string]any{"contact_ids": []string{}}).ExpectError(http.StatusForbidden, "ADDON_REQUIRED")
	c.O.Get("/api/campaigns/6f1c1d7e-0000-4000-8000-000000000000").ExpectError(http.StatusForbidden, "ADDON_REQUIRED")
	// A trial that ended is no add-on.
	if _, err := c.Env.App.Pool.Exec(t.Context(), `UPDATE teams SET campaign_addon = 'trial', trial_ends_at = $2 WHERE id = $1`,
		c.Owner.TeamID, c.Env.Clock.Now().Add(-1)); err != nil {
		t.Fatal(err)
	}
	c.Key.Get("/api/v1/campaigns").ExpectError(http.StatusForbidden, "ADDON_REQUIRED")
}

func TestCampaignCrossTeam(t *testing.T) {
	t.Parallel()
	c := newCampEnv(t, "active")
	tpl := c.Key.NewTemplateWith("T", "s", "b")
	cid := c.Key.NewCampaignIn("C", "active")
	step := c.Key.NewEmailStep(cid, tpl, nil)
	contact := c.contact("Ann", "ann@example.com")
	c.Key.Enroll(cid, contact)
	pid := c.O.Get("/api/campaigns/" + cid + "/participants").Expect(http.StatusOK).String("data.0.id")

	stranger := c.Env.Signup("stranger")
	stranger.SetAddon("active")
	sb := stranger.CreateBook("Mine")
	sk := stranger.NewKey()
	// Resources of another team are not found; its book is forbidden.
	sk.InBook(c.Book).Get("/api/v1/campaigns").ExpectError(http.StatusForbidden, "FORBIDDEN")
	sk.InBook(c.Book).Post("/api/v1/campaigns", map[string]any{"name": "x"}).ExpectError(http.StatusForbidden, "FORBIDDEN")
	sk.Get("/api/v1/campaigns/"+cid).ExpectError(http.StatusNotFound, "NOT_FOUND")
	sk.Patch("/api/v1/campaigns/"+cid, map[string]any{"status": "paused"}).ExpectError(http.StatusNotFound, "NOT_FOUND")
	sk.Delete("/api/v1/campaigns/"+cid).ExpectError(http.StatusNotFound, "NOT_FOUND")
	sk.Post("/api/v1/campaigns/"+cid+"/steps", map[string]any{"name": "x"}).ExpectError(http.StatusNotFound, "NOT_FOUND")
	sk.Post("/api/v1/campaigns/"+cid+"/participants", map[string]any{"contact_ids": []string{contact}}).ExpectError(http.StatusNotFound, "NOT_FOUND")
	sk.InBook(sb).Get("/api/v1/campaign-templates/"+tpl).ExpectError(http.StatusNotFound, "NOT_FOUND")
	s := stranger.InBook(sb)
	s.Get("/api/campaigns/"+cid+"/stats").ExpectError(http.StatusNotFound, "NOT_FOUND")
	s.Get("/api/campaigns/"+cid+"/participants").ExpectError(http.StatusNotFound, "NOT_FOUND")
	s.Delete("/api/campaigns/"+cid+"/participants/"+pid).ExpectError(http.StatusNotFound, "NOT_FOUND")
	s.Patch("/api/campaigns/"+cid+"/steps/"+step, map[string]any{"name": "x"}).ExpectError(http.StatusNotFound, "NOT_FOUND")
	s.Post("/api/campaigns/"+cid+"/run", nil).ExpectError(http.StatusNotFound, "NOT_FOUND")
	s.Get("/api/campaign-step-contacts/"+cid+"/"+step).ExpectError(http.StatusNotFound, "NOT_FOUND")
	stranger.InBook(c.Book).Get("/api/campaign-settings").ExpectError(http.StatusForbidden, "FORBIDDEN")
	// A stranger's own campaign cannot trigger into this team's campaign.
	mine := sk.InBook(sb).Post("/api/v1/campaigns", map[string]any{"name": "M"}).Expect(http.StatusOK).String("data.id")
	sk.Post("/api/v1/campaigns/"+mine+"/steps", map[string]any{
		"step_type": "trigger", "name": "x", "schedule_type": "immediate", "trigger_campaign_id": cid,
	}).ExpectError(http.StatusBadRequest, "INVALID_INPUT")
	// Nor enroll this team's contacts.
	if n := sk.Post("/api/v1/campaigns/"+mine+"/participants", map[string]any{"contact_ids": []string{contact}}).Expect(http.StatusOK).Int("data.enrolled"); n != 0 {
		t.Fatalf("enrolled a foreign contact: %d", n)
	}
	if c.Env.QueryInt(`SELECT count(*) FROM campaign_participants WHERE campaign_id = $1`, cid) != 1 {
		t.Fatal("the campaign changed")
	}
}

func TestParticipantContactAndBookDeleted(t *testing.T) {
	t.Parallel()
	c := newCampEnv(t, "active")
	c.O.ConfigureEmail()
	tpl := c.Key.NewTemplateWith("T", "S", "<p>x</p>")
	cid := c.Key.NewCampaignIn("C", "active")
	c.Key.NewEmailStep(cid, tpl, nil)
	ids := c.contacts(3)
	c.Key.Enroll(cid, ids...)
	c.Env.ProcessCampaign(cid)

	// Deleting a contact takes its participations and completion records
	// (and its emails' interactions) with it.
	c.Key.Delete("/api/v1/contacts/" + ids[0]).Expect(http.StatusNoContent)
	c.Key.Post("/api/v1/contacts/bulk-delete", map[string]any{"contact_ids": ids[1:2]}).Expect(http.StatusOK)
	if n := c.Env.QueryInt(`SELECT count(*) FROM campaign_participants WHERE campaign_id = $1`, cid); n != 1 {
		t.Fatalf("%d participants left", n)
	}
	if n := c.Env.QueryInt(`SELECT count(*) FROM campaign_step_completions WHERE campaign_id = $1`, cid); n != 1 {
		t.Fatalf("%d completion records left", n)
	}
	if n := c.Env.QueryInt(`SELECT count(*) FROM interactions WHERE contact_id = ANY($1::uuid[])`, ids[:2]); n != 0 {
		t.Fatalf("%d interactions of deleted contacts", n)
	}
	if st := c.O.Get("/api/campaigns/" + cid + "/stats").Expect(http.StatusOK); st.Int("data.summary.total_participants") != 1 || st.Int("data.steps.0.success_count") != 1 {
		t.Fatalf("stats: %s", st.Body)
	}

	// Deleting the book takes everything of its campaigns.
	c.Owner.Delete("/api/books/" + c.Book).Expect(http.StatusNoContent)
	for _, table := range []string{"campaigns", "campaign_steps", "campaign_participants", "campaign_step_completions", "campaign_claims", "email_templates", "email_settings"} {
		if n := c.Env.QueryInt(`SELECT count(*) FROM ` + table); n != 0 {
			t.Errorf("%s: %d rows left", table, n)
		}
	}
}
