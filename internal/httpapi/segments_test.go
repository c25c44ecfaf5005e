package httpapi_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/contactbook/contactbook/internal/apptest"
	"github.com/contactbook/contactbook/internal/campaigns"
	"github.com/contactbook/contactbook/internal/postgres"
	"github.com/contactbook/contactbook/internal/postgres/pgtest"
)

// segTeam is a team whose book holds contacts at two companies, a label
// and a custom number field.
type segTeam struct {
	*apptest.Team
	vip, score string
	acme       []string // the Acme contacts, in creation order
	others     []string
}

func newSegTeam(t *testing.T, acme, others int) *segTeam {
	t.Helper()
	// Tests move the clock by days; logins must outlive that.
	tm := apptest.Setup(t, apptest.Options{Env: map[string]string{"JWT_TTL": "8760h"}})
	s := &segTeam{Team: tm}
	s.vip = tm.O.Post("/api/books/"+tm.Book+"/labels", map[string]any{"name": "VIP"}).Expect(http.StatusCreated).String("data.id")
	s.score = tm.O.Post("/api/books/"+tm.Book+"/fields", map[string]any{"key": "score", "name": "Score", "type": "number"}).
		Expect(http.StatusCreated).String("data.id")
	add := func(first, company string) string {
		return tm.Key.Post("/api/v1/contacts", map[string]any{"first_name": first, "company": company,
			"emails": []map[string]any{{"address": strings.ToLower(first) + "@example.com", "label": "work"}}}).
			Expect(http.StatusCreated).String("data.id")
	}
	for i := range acme {
		s.acme = append(s.acme, add(fmt.Sprintf("Acme%d", i), "Acme Corp"))
	}
	for i := range others {
		s.others = append(s.others, add(fmt.Sprintf("Other%d", i), "Globex"))
	}
	return s
}

var acmeRule = map[string]any{"field": "company", "op": "contains", "value": "acme"}

func TestSegmentCRUDAndRoles(t *testing.T) {
	t.Parallel()
	s := newSegTeam(t, 3, 2)
	body := map[string]any{"name": "Acme", "description": "at Acme", "rule": acmeRule}
	s.V.Post("/api/segments", body).ExpectError(http.StatusForbidden, "FORBIDDEN")
	created := s.Key.Post("/api/v1/segments", body).Expect(http.StatusCreated)
	id := created.String("data.id")
	if created.String("data.rule.field") != "company" || created.Has("data.contact_count") {
		t.Fatalf("created: %s", created.Body)
	}
	s.M.Post("/api/segments", body).ExpectError(http.StatusConflict, "CONFLICT")
	s.M.Post("/api/segments", map[string]any{"name": "B", "rule": map[string]any{"all": []any{}}}).Expect(http.StatusCreated)
	list := s.V.Get("/api/segments").Expect(http.StatusOK)
	if list.Len("data") != 2 || list.String("data.0.name") != "Acme" {
		t.Fatalf("list: %s", list.Body)
	}
	if n := s.V.Get("/api/segments/" + id).Expect(http.StatusOK).Int("data.contact_count"); n != 3 {
		t.Fatalf("contact_count = %d, want 3", n)
	}
	s.V.Patch("/api/segments/"+id, map[string]any{"name": "x"}).ExpectError(http.StatusForbidden, "FORBIDDEN")
	p := s.M.Patch("/api/segments/"+id, map[string]any{"rule": map[string]any{"not": acmeRule}}).Expect(http.StatusOK)
	if p.String("data.name") != "Acme" || p.String("data.description") != "at Acme" {
		t.Fatalf("patch kept: %s", p.Body)
	}
	if n := s.Key.Get("/api/v1/segments/" + id).Expect(http.StatusOK).Int("data.contact_count"); n != 2 {
		t.Fatalf("contact_count after patch = %d, want 2", n)
	}
	s.M.Patch("/api/segments/"+id, map[string]any{"name": "B"}).ExpectError(http.StatusConflict, "CONFLICT")
	s.M.Patch("/api/segments/"+id, map[string]any{}).ExpectError(http.StatusBadRequest, "INVALID_INPUT")

	// Another team sees nothing of it.
	stranger := s.Env.Signup("stranger")
	otherBook := stranger.CreateBook("Theirs")
	stranger.InBook(otherBook).Get("/api/segments/"+id).ExpectError(http.StatusNotFound, "NOT_FOUND")
	// X-Book-ID, when sent, must be the segment's book.
	book2 := s.Owner.CreateBook("Second")
	s.Owner.InBook(book2).Get("/api/segments/"+id).ExpectError(http.StatusNotFound, "NOT_FOUND")

	// A segment that a campaign's audience names cannot go.
	camp := s.Key.Post("/api/v1/campaigns", map[string]any{"name": "Welcome", "audience_segment_id": id}).Expect(http.StatusOK)
	if camp.String("data.audience_segment_id") != id {
		t.Fatalf("campaign audience: %s", camp.Body)
	}
	del := s.M.Delete("/api/segments/"+id).ExpectError(http.StatusConflict, "CONFLICT")
	if !strings.Contains(del.String("error.message"), "Welcome") {
		t.Fatalf("conflict names no campaign: %s", del.Body)
	}
	s.Key.Patch("/api/v1/campaigns/"+camp.String("data.id"), map[string]any{"audience_segment_id": nil}).Expect(http.StatusOK)
	s.V.Delete("/api/segments/"+id).ExpectError(http.StatusForbidden, "FORBIDDEN")
	s.M.Delete("/api/segments/" + id).Expect(http.StatusNoContent)
	s.V.Get("/api/segments/"+id).ExpectError(http.StatusNotFound, "NOT_FOUND")
}

func TestSegmentPreview(t *testing.T) {
	t.Parallel()
	s := newSegTeam(t, 12, 2)
	s.Key.Post("/api/v1/contacts/"+s.acme[0]+"/labels", map[string]any{"label_id": s.vip}).Expect(http.StatusOK)
	r := s.V.Post("/api/segments/preview", map[string]any{"rule": acmeRule}).Expect(http.StatusOK)
	list := s.V.Get("/api/contacts?q=acme&limit=10").Expect(http.StatusOK)
	if r.Int("data.count") != 12 || r.Len("data.contacts") != 10 {
		t.Fatalf("preview: count %d, %d contacts", r.Int("data.count"), r.Len("data.contacts"))
	}
	for i := range 10 {
		if p, l := r.String(fmt.Sprintf("data.contacts.%d.id", i)), list.String(fmt.Sprintf("data.%d.id", i)); p != l {
			t.Fatalf("preview contact %d is %s, the list's is %s", i, p, l)
		}
	}
	r = s.Key.Post("/api/v1/segments/preview", map[string]any{"rule": map[string]any{"all": []any{
		acmeRule, map[string]any{"field": "labels", "op": "has_any", "value": []string{s.vip}},
		map[string]any{"field": "email.opened", "op": "never"},
	}}}).Expect(http.StatusOK)
	if r.Int("data.count") != 1 || r.String("data.contacts.0.id") != s.acme[0] {
		t.Fatalf("preview of three conditions: %s", r.Body)
	}
	s.V.Post("/api/segments/preview", map[string]any{}).ExpectError(http.StatusBadRequest, "INVALID_INPUT")
}

// The suppressed condition follows the rule (at least one address, every
// one suppressed) through contact writes, not only through suppressions:
// a contact created with a suppressed address is suppressed, one given an
// address that is not is no longer, and one left without addresses is not.
func TestSegmentSuppressedFollowsContactWrites(t *testing.T) {
	t.Parallel()
	s := newSegTeam(t, 0, 1)
	suppressed := func(want bool) int {
		return s.Key.Post("/api/v1/segments/preview", map[string]any{"rule": map[string]any{"field": "suppressed", "op": "eq", "value": want}}).
			Expect(http.StatusOK).Int("data.count")
	}
	s.Key.Post("/api/v1/suppressions", map[string]any{"email": "gone@example.com"}).Expect(http.StatusCreated)
	id := s.Key.Post("/api/v1/contacts", map[string]any{"first_name": "Gone",
		"emails": []map[string]any{{"address": "Gone@Example.com", "label": "work"}}}).Expect(http.StatusCreated).String("data.id")
	if got := suppressed(true); got != 1 {
		t.Fatalf("created with a suppressed address: %d suppressed, want 1", got)
	}
	if got := suppressed(false); got != 1 {
		t.Fatalf("created with a suppressed address: %d not suppressed, want 1 (the other contact)", got)
	}
	s.Key.Patch("/api/v1/contacts/"+id, map[string]any{"emails": []map[string]any{
		{"address": "gone@example.com", "label": "work"}, {"address": "back@example.com", "label": "personal"}}}).Expect(http.StatusOK)
	if got := suppressed(true); got != 0 {
		t.Fatalf("given an address that is not suppressed: %d suppressed, want 0", got)
	}
	s.Key.Patch("/api/v1/contacts/"+id, map[string]any{"emails": []map[string]any{{"address": "gone@example.com", "label": "work"}}}).Expect(http.StatusOK)
	if got := suppressed(true); got != 1 {
		t.Fatalf("back to the suppressed address only: %d suppressed, want 1", got)
	}
	s.Key.Patch("/api/v1/contacts/"+id, map[string]any{"emails": []any{}}).Expect(http.StatusOK)
	if got := suppressed(true); got != 0 {
		t.Fatalf("without addresses: %d suppressed, want 0", got)
	}
}

// A number of days written as a string is refused with the place of the
// value, on save, preview and change alike, and nothing is saved.
func TestSegmentValueOfTheWrongType(t *testing.T) {
	t.Parallel()
	s := newSegTeam(t, 1, 0)
	rule := map[string]any{"all": []any{map[string]any{"field": "email.opened", "op": "within_last_days", "value": "30"}}}
	check := func(r *apptest.Response) {
		t.Helper()
		r.ExpectError(http.StatusBadRequest, "INVALID_INPUT")
		var details []struct{ Field, Message string }
		r.Decode("error.details", &details)
		if len(details) != 1 || details[0].Field != "rule.all[0].value" {
			t.Fatalf("details = %+v, want one naming rule.all[0].value (%s)", details, r.Body)
		}
		if msg := r.String("error.message"); !strings.Contains(msg, "`rule.all[0].value`") || !strings.Contains(msg, "integer") {
			t.Fatalf("message = %q, want it to name the value and say it is an integer", msg)
		}
	}
	check(s.Key.Post("/api/v1/segments", map[string]any{"name": "Openers", "rule": rule}))
	check(s.Key.Post("/api/v1/segments/preview", map[string]any{"rule": rule}))
	if n := s.Key.Get("/api/v1/segments").Expect(http.StatusOK).Len("data"); n != 0 {
		t.Fatalf("%d segments saved, want none", n)
	}
	id := s.Key.Post("/api/v1/segments", map[string]any{"name": "Openers", "rule": map[string]any{"all": []any{
		map[string]any{"field": "email.opened", "op": "within_last_days", "value": 30}}}}).Expect(http.StatusCreated).String("data.id")
	check(s.Key.Patch("/api/v1/segments/"+id, map[string]any{"rule": rule}))
	if v := s.Key.Get("/api/v1/segments/" + id).Expect(http.StatusOK).Value("data.rule.all.0.value"); v != float64(30) {
		t.Fatalf("saved value = %#v, want the number 30 kept", v)
	}
}

// Hostile rules: each a 400 naming the place, quickly.
func TestSegmentHostileRules(t *testing.T) {
	t.Parallel()
	s := newSegTeam(t, 1, 0)
	stranger := s.Env.Signup("stranger")
	theirBook := stranger.CreateBook("Theirs")
	theirLabel := stranger.Post("/api/books/"+theirBook+"/labels", map[string]any{"name": "T"}).Expect(http.StatusCreated).String("data.id")
	stranger.SetAddon("active")
	theirCampaign := stranger.InBook(theirBook).Post("/api/campaigns", map[string]any{"name": "C"}).Expect(http.StatusOK).String("data.id")

	var deep bytes.Buffer
	deep.WriteString(`{"rule":`)
	for deep.Len() < 2<<20-100 {
		deep.WriteString(`{"not":`)
	}
	cond := `{"field":"company","op":"contains","value":"a"}`
	many := `{"rule":{"any":[` + strings.TrimSuffix(strings.Repeat(cond+",", 10000), ",") + `]}}`
	cases := []struct {
		name, body, place string
	}{
		{"2 MB deep", deep.String(), "rule.not.not.not.not.not"},
		{"10,000 conditions", many, "rule.any[50]"},
		{"regex-looking value", `{"rule":{"field":"company","op":"matches","value":"^(a+)+$"}}`, "rule.op"},
		{"NUL byte", `{"rule":{"field":"company","op":"eq","value":"a\u0000b"}}`, "rule.value"},
		{"another book's label", `{"rule":{"all":[` + cond + `,{"field":"labels","op":"has_any","value":["` + theirLabel + `"]}]}}`, "rule.all[1].value[0]"},
		{"another book's campaign", `{"rule":{"field":"campaign","op":"enrolled","value":"` + theirCampaign + `"}}`, "rule.value"},
		{"another book's campaign in email", `{"rule":{"field":"email.opened","op":"ever","campaign_id":"` + theirCampaign + `"}}`, "rule.campaign_id"},
		{"custom key of another type", `{"rule":{"field":"custom.score","op":"contains","value":"4"}}`, "rule.op"},
		{"unknown custom key", `{"rule":{"field":"custom.nope","op":"is_set"}}`, "rule.field"},
	}
	for _, tc := range cases {
		for _, path := range []string{"/api/segments/preview", "/api/segments"} {
			start := time.Now()
			body := strings.Replace(tc.body, `{"rule"`, `{"name":"n","rule"`, 1)
			r := s.M.Do(http.MethodPost, path, apptest.Raw{Body: []byte(body), ContentType: "application/json"}).ExpectError(http.StatusBadRequest, "INVALID_INPUT")
			var details []struct{ Field string }
			r.Decode("error.details", &details)
			if len(details) == 0 || details[0].Field != tc.place {
				t.Errorf("%s %s: details %v, want %s (%s)", tc.name, path, details, tc.place, r.String("error.message"))
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("%s: took %s", tc.name, d)
			}
		}
	}
	// A regex-looking value of a text op is a literal: it matches nothing
	// here, and the request is fine.
	r := s.V.Post("/api/segments/preview", map[string]any{"rule": map[string]any{"field": "company", "op": "contains", "value": "^(a+)+$.*"}}).
		Expect(http.StatusOK)
	if r.Int("data.count") != 0 {
		t.Fatalf("regex-looking value matched: %s", r.Body)
	}
}

func TestContactsBySegment(t *testing.T) {
	t.Parallel()
	s := newSegTeam(t, 3, 2)
	seg := s.M.Post("/api/segments", map[string]any{"name": "Acme", "rule": acmeRule}).Expect(http.StatusCreated).String("data.id")
	r := s.Key.Get("/api/v1/contacts?segment_id=" + seg).Expect(http.StatusOK)
	if r.Int("meta.total") != 3 || r.Len("data") != 3 {
		t.Fatalf("list by segment: %s", r.Body)
	}
	r = s.V.Get("/api/contacts?q=acme1&segment_id=" + seg).Expect(http.StatusOK)
	if r.Int("meta.total") != 1 || r.String("data.0.id") != s.acme[1] {
		t.Fatalf("segment and q: %s", r.Body)
	}
	csv := s.M.Get("/api/contacts/export?segment_id=" + seg).Expect(http.StatusOK)
	if lines := strings.Count(strings.TrimSpace(string(csv.Body)), "\n"); lines != 3 {
		t.Fatalf("export by segment: %d rows\n%s", lines, csv.Body)
	}
	s.O.Get("/api/books/" + s.Book + "/export?format=vcard&segment_id=" + seg).Expect(http.StatusOK)

	// A segment nobody matches lists and exports nobody.
	none := s.M.Post("/api/segments", map[string]any{"name": "Nobody", "rule": map[string]any{"any": []any{}}}).Expect(http.StatusCreated).String("data.id")
	if r := s.Key.Get("/api/v1/contacts?segment_id=" + none).Expect(http.StatusOK); r.Int("meta.total") != 0 || r.Len("data") != 0 {
		t.Fatalf("empty segment: %s", r.Body)
	}
	if body := strings.TrimSpace(string(s.M.Get("/api/contacts/export?segment_id=" + none).Expect(http.StatusOK).Body)); strings.Contains(body, "\n") {
		t.Fatalf("empty segment exported rows:\n%s", body)
	}
	if n := s.Key.Post("/api/v1/contacts/bulk-add-label", map[string]any{"segment_id": none, "label_id": s.vip}).Expect(http.StatusOK).Int("data.added"); n != 0 {
		t.Fatalf("empty segment labelled %d", n)
	}

	// A segment of another book is not found.
	book2 := s.Owner.CreateBook("Second")
	other := s.Owner.InBook(book2).Post("/api/segments", map[string]any{"name": "All", "rule": map[string]any{"all": []any{}}}).
		Expect(http.StatusCreated).String("data.id")
	s.Key.Get("/api/v1/contacts?segment_id="+other).ExpectError(http.StatusNotFound, "NOT_FOUND")
	s.Key.Get("/api/v1/contacts?segment_id=nope").ExpectError(http.StatusBadRequest, "INVALID_INPUT")
	s.Key.Post("/api/v1/contacts/bulk-delete", map[string]any{"segment_id": other}).ExpectError(http.StatusNotFound, "NOT_FOUND")

	// Bulk operations on every member.
	n := s.Key.Post("/api/v1/contacts/bulk-add-label", map[string]any{"segment_id": seg, "label_id": s.vip}).Expect(http.StatusOK).Int("data.added")
	if n != 3 {
		t.Fatalf("added = %d", n)
	}
	s.Key.Post("/api/v1/contacts/bulk-add-label", map[string]any{"segment_id": seg, "contact_ids": s.others, "label_id": s.vip}).
		ExpectError(http.StatusBadRequest, "INVALID_INPUT")
	n = s.M.Post("/api/contacts/bulk-update-field", map[string]any{"segment_id": seg, "field_definition_id": s.score, "value": "5"}).
		Expect(http.StatusOK).Int("data.updated")
	if n != 3 {
		t.Fatalf("updated = %d", n)
	}
	n = s.M.Post("/api/contacts/bulk-remove-label", map[string]any{"segment_id": seg, "label_id": s.vip}).Expect(http.StatusOK).Int("data.removed")
	if n != 3 {
		t.Fatalf("removed = %d", n)
	}
	s.V.Post("/api/contacts/bulk-delete", map[string]any{"segment_id": seg}).ExpectError(http.StatusForbidden, "FORBIDDEN")
	n = s.M.Post("/api/contacts/bulk-delete", map[string]any{"segment_id": seg}).Expect(http.StatusOK).Int("data.deleted")
	if n != 3 || s.Key.Get("/api/v1/contacts").Int("meta.total") != 2 {
		t.Fatalf("deleted = %d", n)
	}
}

func TestEnrollBySegmentAndAudience(t *testing.T) {
	t.Parallel()
	s := newSegTeam(t, 3, 2)
	seg := s.M.Post("/api/segments", map[string]any{"name": "Acme", "rule": acmeRule}).Expect(http.StatusCreated).String("data.id")
	oneOff := s.Key.Post("/api/v1/campaigns", map[string]any{"name": "Once"}).Expect(http.StatusOK).String("data.id")
	if n := s.Key.Post("/api/v1/campaigns/"+oneOff+"/participants", map[string]any{"segment_id": seg}).Expect(http.StatusOK).Int("data.enrolled"); n != 3 {
		t.Fatalf("enrolled = %d", n)
	}
	if n := s.Key.Post("/api/v1/campaigns/"+oneOff+"/participants", map[string]any{"segment_id": seg}).Expect(http.StatusOK).Int("data.enrolled"); n != 0 {
		t.Fatalf("enrolled again = %d", n)
	}
	s.Key.Post("/api/v1/campaigns/"+oneOff+"/participants", map[string]any{"segment_id": seg, "contact_ids": s.others}).
		ExpectError(http.StatusBadRequest, "INVALID_INPUT")

	// An audience of another book is refused.
	book2 := s.Owner.CreateBook("Second")
	other := s.Owner.InBook(book2).Post("/api/segments", map[string]any{"name": "All", "rule": map[string]any{"all": []any{}}}).
		Expect(http.StatusCreated).String("data.id")
	s.Key.Post("/api/v1/campaigns", map[string]any{"name": "X", "audience_segment_id": other}).ExpectError(http.StatusBadRequest, "INVALID_INPUT")

	// The audience: each pass enrolls newcomers; a participant who left the
	// segment is removed when its step falls due, and never enrolled again.
	tpl := s.Key.Post("/api/v1/campaign-templates", map[string]any{"name": "T", "subject": "Hi", "body_html": "<p>Hi</p>"}).Expect(http.StatusOK).String("data.id")
	camp := s.Key.Post("/api/v1/campaigns", map[string]any{"name": "Drip", "audience_segment_id": seg, "exit_on_segment_leave": true}).
		Expect(http.StatusOK).String("data.id")
	s.Key.Post("/api/v1/campaigns/"+camp+"/steps", map[string]any{"step_type": "email", "name": "Later", "schedule_type": "delay",
		"delay_days": 2, "email_template_id": tpl}).Expect(http.StatusOK)
	s.Key.Patch("/api/v1/campaigns/"+camp, map[string]any{"status": "active"}).Expect(http.StatusOK)
	process := func() {
		t.Helper()
		if _, err := s.Env.App.CampaignRunner.ProcessCampaign(context.Background(), uuid.MustParse(camp)); err != nil {
			t.Fatalf("process: %v", err)
		}
	}
	process()
	if n := s.Env.QueryInt(`SELECT count(*) FROM campaign_participants WHERE campaign_id = $1 AND status = 'active'`, camp); n != 3 {
		t.Fatalf("audience enrolled %d, want 3", n)
	}
	// Acme0 leaves; a newcomer joins.
	s.Key.Patch("/api/v1/contacts/"+s.acme[0], map[string]any{"company": "Initech"}).Expect(http.StatusOK)
	s.Key.Patch("/api/v1/contacts/"+s.others[0], map[string]any{"company": "Acme Ltd"}).Expect(http.StatusOK)
	process()
	if n := s.Env.QueryInt(`SELECT count(*) FROM campaign_participants WHERE campaign_id = $1`, camp); n != 4 {
		t.Fatalf("participants %d, want 4 (the newcomer enrolled, the leaver not yet due)", n)
	}
	s.Env.Clock.Advance(3 * 24 * time.Hour)
	process()
	var pid, status string
	if err := s.Env.App.Pool.QueryRow(context.Background(), `SELECT id, status FROM campaign_participants WHERE campaign_id = $1 AND contact_id = $2`,
		camp, s.acme[0]).Scan(&pid, &status); err != nil || status != "removed" {
		t.Fatalf("leaver: %s %v", status, err)
	}
	h := s.O.Get("/api/campaigns/" + camp + "/participants/" + pid + "/history").Expect(http.StatusOK)
	if h.String("data.0.result_detail") != "left segment Acme" || h.String("data.0.step_name") != "Later" {
		t.Fatalf("history: %s", h.Body)
	}
	// Back in the segment, the removed participant is not enrolled again.
	s.Key.Patch("/api/v1/contacts/"+s.acme[0], map[string]any{"company": "Acme"}).Expect(http.StatusOK)
	process()
	if n := s.Env.QueryInt(`SELECT count(*) FROM campaign_participants WHERE campaign_id = $1 AND contact_id = $2 AND status = 'removed'`, camp, s.acme[0]); n != 1 {
		t.Fatalf("re-enrolled a removed participant")
	}
}

// Two instances passing over the same audience at once enroll each
// member exactly once.
func TestAudienceEnrollsAtMostOnceAcrossInstances(t *testing.T) {
	t.Parallel()
	s := newSegTeam(t, 40, 5)
	seg := s.M.Post("/api/segments", map[string]any{"name": "Acme", "rule": acmeRule}).Expect(http.StatusCreated).String("data.id")
	camp := s.Key.Post("/api/v1/campaigns", map[string]any{"name": "Drip", "audience_segment_id": seg}).Expect(http.StatusOK).String("data.id")
	s.Key.Patch("/api/v1/campaigns/"+camp, map[string]any{"status": "active"}).Expect(http.StatusOK)
	pool2 := pgtest.Setup(t, pgtest.On(s.Env.DBURL), pgtest.MaxConns(4)).Pool
	second := campaigns.NewRunner(campaigns.Deps{DB: postgres.Wrap(pool2), Accounts: s.Env.App.Accounts, Segments: s.Env.App.Segments, Now: s.Env.Clock.Now})
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := range 8 {
		rn := s.Env.App.CampaignRunner
		if i%2 == 1 {
			rn = second
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := rn.ProcessCampaign(context.Background(), uuid.MustParse(camp))
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("pass: %v", err)
		}
	}
	if n := s.Env.QueryInt(`SELECT count(*) FROM campaign_participants WHERE campaign_id = $1`, camp); n != 40 {
		t.Fatalf("participants = %d, want 40", n)
	}
	if !strings.Contains(s.Env.Logs(), "enrolled the audience's newcomers") {
		t.Fatal("no pass reported enrolling")
	}
}
