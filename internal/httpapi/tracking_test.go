package httpapi_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/contactbook/contactbook/internal/apptest"
	"github.com/contactbook/contactbook/internal/campaigns"
	"github.com/contactbook/contactbook/internal/jobs"
	"github.com/contactbook/contactbook/internal/mailer"
	"github.com/contactbook/contactbook/internal/postgres"
	"github.com/contactbook/contactbook/internal/postgres/pgtest"
)

func TestEventsRecordAndList(t *testing.T) {
	t.Parallel()
	c := newCampEnv(t, "active")
	ada := c.contact("Ada", "ada@example.com")
	now := c.Env.Clock.Now()
	post := func(body map[string]any) *apptest.Response { return c.Key.Post("/api/v1/events", body) }
	r := post(map[string]any{"name": "order.paid", "contact": map[string]any{"email": "ADA@example.com"},
		"properties": map[string]any{"total": 49}, "occurred_at": now.Add(-time.Hour).Format(time.RFC3339)}).Expect(http.StatusAccepted)
	if r.String("data.contact_id") != ada || r.String("data.name") != "order.paid" || r.Int("data.properties.total") != 49 {
		t.Fatalf("answer %s", r.Body)
	}
	post(map[string]any{"name": "trial.started", "contact": map[string]any{"id": ada}}).Expect(http.StatusAccepted)
	post(map[string]any{"name": "order.paid", "contact": map[string]any{"id": ada}, "occurred_at": now.Add(-2 * time.Hour).Format(time.RFC3339)}).
		Expect(http.StatusAccepted)
	for _, bad := range []map[string]any{
		{"name": "Order.Paid", "contact": map[string]any{"id": ada}},
		{"name": "", "contact": map[string]any{"id": ada}},
		{"name": strings.Repeat("a", 101), "contact": map[string]any{"id": ada}},
		{"name": "x", "contact": map[string]any{"id": ada, "email": "ada@example.com"}},
		{"name": "x"},
		{"name": "x", "contact": map[string]any{"id": ada}, "properties": []int{1}},
		{"name": "x", "contact": map[string]any{"id": ada}, "properties": map[string]any{"b": strings.Repeat("x", 17<<10)}},
		{"name": "x", "contact": map[string]any{"id": ada}, "occurred_at": now.Add(6 * time.Minute).Format(time.RFC3339)},
	} {
		post(bad).ExpectError(http.StatusBadRequest, "INVALID_INPUT")
	}
	post(map[string]any{"name": "x", "contact": map[string]any{"id": ada}, "occurred_at": now.Add(4 * time.Minute).Format(time.RFC3339)}).
		Expect(http.StatusAccepted)
	post(map[string]any{"name": "x", "contact": map[string]any{"email": "nobody@example.com"}}).ExpectError(http.StatusNotFound, "NOT_FOUND")
	other := c.AddTeam("other")
	stranger := other.Key.NewContact("Zed", "zed@example.com")
	post(map[string]any{"name": "x", "contact": map[string]any{"id": stranger}}).ExpectError(http.StatusNotFound, "NOT_FOUND")
	other.Key.Get("/api/v1/contacts/"+ada+"/events").ExpectError(http.StatusNotFound, "NOT_FOUND")

	// Newest occurred_at first, a name filter, and cursor pages.
	list := c.O.Get("/api/contacts/" + ada + "/events").Expect(http.StatusOK)
	var names []string
	for i := range list.Len("data") {
		names = append(names, list.String(fmt.Sprintf("data.%d.name", i)))
	}
	if strings.Join(names, ",") != "x,trial.started,order.paid,order.paid" {
		t.Fatalf("order %v", names)
	}
	paid := c.Key.Get("/api/v1/contacts/" + ada + "/events?name=order.paid&limit=1").Expect(http.StatusOK)
	if paid.Len("data") != 1 || paid.String("meta.next_cursor") == "" {
		t.Fatalf("page 1 %s", paid.Body)
	}
	page2 := c.Key.Get("/api/v1/contacts/" + ada + "/events?name=order.paid&limit=1&cursor=" + paid.String("meta.next_cursor")).Expect(http.StatusOK)
	if page2.Len("data") != 1 || page2.Value("meta.next_cursor") != nil || page2.String("data.0.id") == paid.String("data.0.id") {
		t.Fatalf("page 2 %s", page2.Body)
	}
	c.Key.Get("/api/v1/contacts/"+ada+"/events?cursor=nope").ExpectError(http.StatusBadRequest, "INVALID_INPUT")
}

func TestEventRetentionPrunes(t *testing.T) {
	t.Parallel()
	c := newCampEnv(t, "active", apptest.Options{Env: map[string]string{"EVENT_RETENTION": "48h"}})
	ada := c.contact("Ada", "ada@example.com")
	c.Key.Post("/api/v1/events", map[string]any{"name": "old", "contact": map[string]any{"id": ada}}).Expect(http.StatusAccepted)
	c.Env.Clock.Advance(72 * time.Hour)
	c.Key.Post("/api/v1/events", map[string]any{"name": "new", "contact": map[string]any{"id": ada}}).Expect(http.StatusAccepted)
	if _, err := c.Env.App.Jobs.Client().Insert(context.Background(), trackingRetention{}, nil); err != nil {
		t.Fatal(err)
	}
	c.Env.WaitJobs()
	if n := c.Env.QueryInt(`SELECT count(*) FROM tracked_events WHERE name = 'old'`); n != 0 {
		t.Fatalf("an event older than EVENT_RETENTION is kept")
	}
	if n := c.Env.QueryInt(`SELECT count(*) FROM tracked_events WHERE name = 'new'`); n != 1 {
		t.Fatalf("a recent event was pruned")
	}
}

// trackingRetention is the prune's job, by its kind.
type trackingRetention struct{}

func (trackingRetention) Kind() string { return "tracking_prune" }

// entryCampaign makes an active campaign entered by event, of one
// immediate email whose subject reads the event's plan.
func entryCampaign(c *campEnv, event string) string {
	c.t.Helper()
	tpl := c.Key.NewTemplateWith("Welcome", "Welcome to {{event.plan}}", `<p>Hi {{first_name}}, order {{event.order.id}}; {{data.x}}</p>`)
	camp := c.Key.Post("/api/v1/campaigns", map[string]any{"name": "On paid", "entry_event": event}).Expect(http.StatusOK)
	if camp.String("data.entry_event") != event {
		c.t.Fatalf("campaign %s", camp.Body)
	}
	id := camp.String("data.id")
	c.Key.NewEmailStep(id, tpl, nil)
	c.Key.Patch("/api/v1/campaigns/"+id, map[string]any{"status": "active"}).Expect(http.StatusOK)
	return id
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestEventEntersCampaignAndSendsAtOnce(t *testing.T) {
	t.Parallel()
	c := newCampEnv(t, "active")
	c.O.ConfigureEmail()
	camp := entryCampaign(c, "order.paid")
	ada := c.contact("Ada", "ada@example.com")
	sup := c.contact("Sup", "sup@example.com")
	c.Key.Post("/api/v1/suppressions", map[string]any{"email": "sup@example.com", "reason": "bounce"}).Expect(http.StatusCreated)
	c.Key.Post("/api/v1/events", map[string]any{"name": "order.paid", "contact": map[string]any{"id": ada},
		"properties": map[string]any{"plan": "Pro", "order": map[string]any{"id": "A-7"}}}).Expect(http.StatusAccepted)
	c.Key.Post("/api/v1/events", map[string]any{"name": "order.paid", "contact": map[string]any{"id": sup}}).Expect(http.StatusAccepted)
	c.Key.Post("/api/v1/events", map[string]any{"name": "trial.started", "contact": map[string]any{"id": ada}}).Expect(http.StatusAccepted)
	waitFor(t, "the campaign email", func() bool { return len(recipientTo(c.Mail, "ada@example.com")) > 0 })
	c.Env.WaitJobs()
	rs := recipientTo(c.Mail, "ada@example.com")
	if len(rs) != 1 || rs[0].Subject != "Welcome to Pro" || !strings.Contains(rs[0].HTML(), "<p>Hi Ada, order A-7; </p>") {
		t.Fatalf("%d emails; subject %q; html %s", len(rs), rs[0].Subject, rs[0].HTML())
	}
	if n := c.Env.QueryInt(`SELECT count(*) FROM campaign_participants WHERE campaign_id = $1`, camp); n != 1 {
		t.Fatalf("%d participants, want 1 (the suppressed contact is skipped)", n)
	}
	// A second event enrolls no one again.
	c.Key.Post("/api/v1/events", map[string]any{"name": "order.paid", "contact": map[string]any{"id": ada}, "properties": map[string]any{"plan": "Max"}}).
		Expect(http.StatusAccepted)
	c.Env.WaitJobs()
	if n := len(recipientTo(c.Mail, "ada@example.com")); n != 1 {
		t.Fatalf("%d emails after a second event, want 1", n)
	}
	c.Key.Patch("/api/v1/campaigns/"+camp, map[string]any{"entry_event": "Bad Name"}).ExpectError(http.StatusBadRequest, "INVALID_INPUT")
	// Without the add-on, nothing starts.
	bob := c.contact("Bob", "bob@example.com")
	c.Owner.SetAddon("none")
	c.Key.Post("/api/v1/events", map[string]any{"name": "order.paid", "contact": map[string]any{"id": bob}}).Expect(http.StatusAccepted)
	c.Env.WaitJobs()
	if n := c.Env.QueryInt(`SELECT count(*) FROM campaign_participants WHERE contact_id = $1`, bob); n != 0 {
		t.Fatalf("enrolled without the add-on")
	}
}

// Two instances work the entry of one event (its job and two repeats of
// it): one enrollment, one email.
func TestEventEntryOnceAcrossInstances(t *testing.T) {
	t.Parallel()
	c := newCampEnv(t, "active")
	c.O.ConfigureEmail()
	camp := entryCampaign(c, "order.paid")
	ada := c.contact("Ada", "ada@example.com")
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	pool2 := pgtest.Setup(t, pgtest.On(c.Env.DBURL), pgtest.MaxConns(4)).Pool
	second := campaigns.NewRunner(campaigns.Deps{
		DB: postgres.Wrap(pool2), Accounts: c.Env.App.Accounts, Segments: c.Env.App.Segments, Now: c.Env.Clock.Now,
		Sender: mailer.NewSender(c.Mail.URL, nil), SettingsKey: c.Env.App.Config.SettingsKey, PublicBaseURL: apptest.PublicBaseURL,
	})
	q2, err := jobs.New(pool2, jobs.Config{WithoutPeriodic: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := q2.Add(second); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = q2.Run(ctx); close(done) }()
	defer func() { stop(); <-done }()
	ev := c.Key.Post("/api/v1/events", map[string]any{"name": "order.paid", "contact": map[string]any{"id": ada}, "properties": map[string]any{"plan": "Pro"}}).
		Expect(http.StatusAccepted)
	args := campaigns.EntryArgs{EventID: uuid.MustParse(ev.String("data.id")), BookID: uuid.MustParse(c.Book), ContactID: uuid.MustParse(ada),
		Name: "order.paid", Properties: []byte(`{"plan":"Pro"}`)}
	for range 4 {
		if _, err := c.Env.App.Jobs.Client().Insert(ctx, args, nil); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "the entry jobs", func() bool {
		return c.Env.QueryInt(`SELECT count(*) FROM river_job WHERE kind = 'campaign_event_entry' AND state NOT IN ('completed', 'discarded', 'cancelled')`) == 0
	})
	c.Env.WaitJobs()
	if n := c.Env.QueryInt(`SELECT count(*) FROM campaign_participants WHERE campaign_id = $1`, camp); n != 1 {
		t.Fatalf("%d participants, want 1", n)
	}
	if n := len(recipientTo(c.Mail, "ada@example.com")); n != 1 {
		t.Fatalf("%d emails, want 1", n)
	}
	if n := c.Env.QueryInt(`SELECT count(DISTINCT attempted_by[1]) FROM river_job WHERE kind = 'campaign_event_entry'`); n < 1 {
		t.Fatalf("no instance worked the entry")
	}
}

func TestSegmentEventCondition(t *testing.T) {
	t.Parallel()
	c := newCampEnv(t, "active")
	a, b := c.contact("A", "a@example.com"), c.contact("B", "b@example.com")
	cc := c.contact("C", "c@example.com")
	now := c.Env.Clock.Now()
	for id, ago := range map[string]time.Duration{a: 10 * 24 * time.Hour, b: 40 * 24 * time.Hour} {
		c.Key.Post("/api/v1/events", map[string]any{"name": "order.paid", "contact": map[string]any{"id": id},
			"occurred_at": now.Add(-ago).Format(time.RFC3339)}).Expect(http.StatusAccepted)
	}
	c.Key.Post("/api/v1/events", map[string]any{"name": "trial.started", "contact": map[string]any{"id": cc}}).Expect(http.StatusAccepted)
	members := func(rule map[string]any) string {
		r := c.Key.Post("/api/v1/segments/preview", map[string]any{"rule": rule}).Expect(http.StatusOK)
		var names []string
		for i := range r.Len("data.contacts") {
			names = append(names, r.String(fmt.Sprintf("data.contacts.%d.first_name", i)))
		}
		slices.Sort(names)
		return strings.Join(names, ",")
	}
	for _, tc := range []struct {
		op    string
		value any
		want  string
	}{
		{"within_last_days", 30, "A"}, {"not_within_last_days", 30, "B,C"}, {"ever", nil, "A,B"}, {"never", nil, "C"},
		{"within_last_days", 3650, "A,B"},
	} {
		rule := map[string]any{"field": "event", "name": "order.paid", "op": tc.op}
		if tc.value != nil {
			rule["value"] = tc.value
		}
		if got := members(rule); got != tc.want {
			t.Errorf("%s %v: %s, want %s", tc.op, tc.value, got, tc.want)
		}
	}
	r := c.Key.Post("/api/v1/segments/preview", map[string]any{"rule": map[string]any{"field": "event", "op": "ever"}}).
		ExpectError(http.StatusBadRequest, "INVALID_INPUT")
	if !strings.Contains(string(r.Body), "rule.name") {
		t.Errorf("details do not name rule.name: %s", r.Body)
	}
	c.Key.Post("/api/v1/segments/preview", map[string]any{"rule": map[string]any{"field": "email.opened", "name": "x", "op": "ever"}}).
		ExpectError(http.StatusBadRequest, "INVALID_INPUT")
	c.Key.Post("/api/v1/segments/preview", map[string]any{"rule": map[string]any{"field": "event", "name": "x", "op": "within_last_days", "value": 3651}}).
		ExpectError(http.StatusBadRequest, "INVALID_INPUT")
	c.Key.Post("/api/v1/segments/preview", map[string]any{"rule": map[string]any{"field": "event", "name": "x", "op": "eq", "value": 1}}).
		ExpectError(http.StatusBadRequest, "INVALID_INPUT")
	// A saved segment keeps the name.
	seg := c.Key.Post("/api/v1/segments", map[string]any{"name": "Paid", "rule": map[string]any{"field": "event", "name": "order.paid", "op": "ever"}}).
		Expect(http.StatusCreated)
	if seg.String("data.rule.name") != "order.paid" {
		t.Fatalf("segment %s", seg.Body)
	}
}
