package httpapi_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/uuid"

	"github.com/contactbook/contactbook/internal/apptest"
)

// seedEventsSQL writes n delivery events over the book's contacts: kinds
// in turn (delivered, opened, clicked, deferred, processed), spread over
// the last 90 days, so that about a third of the contacts opened an
// email in the last 30 days.
const seedEventsSQL = `
INSERT INTO delivery_events (book_id, sg_event_id, contact_id, campaign_id, step_id, participant_id, kind, occurred_at, received_at)
SELECT $1, 'bench' || g, c.ids[1 + (g::bigint * 7919) % array_length(c.ids, 1)], $2, $3, gen_random_uuid(),
       (ARRAY['delivered','opened','clicked','deferred','processed'])[1 + g % 5],
       now() - ((g::bigint * 104729) % 7776000) * interval '1 second', now()
FROM generate_series(1, $4::int) g, (SELECT array_agg(id) AS ids FROM contacts WHERE book_id = $1) c`

// BenchmarkSegment100k measures segments over HTTP (the real router and
// PostgreSQL) on a book of 100,000 contacts with 500,000 delivery events:
// the preview and the contact list of a three-condition rule (company
// contains, labels has_any, email.opened within 30 days), a bulk label by
// a segment of 50,000 members, and a campaign pass that enrolls a
// 100,000-member audience. ns/op is one request or one pass.
func BenchmarkSegment100k(b *testing.B) {
	ctx := context.Background()
	env := apptest.Setup(b, apptest.Options{Bare: true, RealClock: true}).Env
	owner := env.Signup("bench")
	owner.SetAddon("active")
	book := owner.CreateBook("Bench")
	key := owner.NewKey().InBook(book)
	ids := seedBench(b, env, book, 1, 100000)
	half := owner.Post("/api/books/"+book+"/labels", map[string]any{"name": "Half"}).Expect(201).String("data.id")
	benchExec(b, env, `INSERT INTO contact_labels (contact_id, label_id) SELECT id, $2 FROM unnest($1::uuid[]) WITH ORDINALITY AS t(id, n) WHERE n % 2 = 0`, ids, half)
	campaign := key.Post("/api/v1/campaigns", map[string]any{"name": "Past"}).Expect(200).String("data.id")
	benchExec(b, env, seedEventsSQL, book, campaign, campaign, 500000)
	benchExec(b, env, `VACUUM ANALYZE contacts, contact_labels, delivery_events`)

	run := func(name string, fn func(b *testing.B)) {
		b.Run(name, func(b *testing.B) {
			env.T = b
			fn(b)
		})
	}
	three := map[string]any{"all": []any{
		map[string]any{"field": "company", "op": "contains", "value": "company 1"},
		map[string]any{"field": "labels", "op": "has_any", "value": []string{half}},
		map[string]any{"field": "email.opened", "op": "within_last_days", "value": 30},
	}}
	var matches int
	run("Preview3Conditions", func(b *testing.B) {
		for b.Loop() {
			r := key.Post("/api/v1/segments/preview", map[string]any{"rule": three}).Expect(200)
			if matches = r.Int("data.count"); matches == 0 || r.Len("data.contacts") != 10 {
				b.Fatalf("preview: %d matches", matches)
			}
		}
		b.ReportMetric(float64(matches), "matches")
	})
	seg := key.Post("/api/v1/segments", map[string]any{"name": "Three", "rule": three}).Expect(201).String("data.id")
	run("List50BySegment", func(b *testing.B) {
		for b.Loop() {
			if key.Get("/api/v1/contacts?limit=50&segment_id="+seg).Expect(200).Int("meta.total") != matches {
				b.Fatal("total")
			}
		}
	})
	halfSeg := key.Post("/api/v1/segments", map[string]any{"name": "Half", "rule": map[string]any{
		"field": "labels", "op": "has_any", "value": []string{half}}}).Expect(201).String("data.id")
	run("BulkAddLabelBySegment50k", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			label := owner.Post("/api/books/"+book+"/labels", map[string]any{"name": fmt.Sprint("by segment ", i)}).Expect(201).String("data.id")
			b.StartTimer()
			if n := key.Post("/api/v1/contacts/bulk-add-label", map[string]any{"segment_id": halfSeg, "label_id": label}).Expect(200).Int("data.added"); n != 50000 {
				b.Fatalf("added %d", n)
			}
		}
	})
	everyone := key.Post("/api/v1/segments", map[string]any{"name": "Everyone", "rule": map[string]any{"field": "email", "op": "is_set"}}).
		Expect(201).String("data.id")
	tpl := key.Post("/api/v1/campaign-templates", map[string]any{"name": "T", "subject": "Hi", "body_html": "<p>Hi</p>"}).Expect(200).String("data.id")
	run("AudienceEnroll100k", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			// A campaign whose one step falls due in a month: the pass
			// enrolls the audience and sends nothing.
			id := key.Post("/api/v1/campaigns", map[string]any{"name": fmt.Sprint("Audience ", i), "audience_segment_id": everyone}).Expect(200).String("data.id")
			key.Post("/api/v1/campaigns/"+id+"/steps", map[string]any{"step_type": "email", "name": "Later", "schedule_type": "delay",
				"delay_days": 30, "email_template_id": tpl}).Expect(200)
			key.Patch("/api/v1/campaigns/"+id, map[string]any{"status": "active"}).Expect(200)
			b.StartTimer()
			if _, err := env.App.CampaignRunner.ProcessCampaign(ctx, uuid.MustParse(id)); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			if n := env.QueryInt(`SELECT count(*) FROM campaign_participants WHERE campaign_id = $1`, id); n != 100000 {
				b.Fatalf("enrolled %d", n)
			}
			b.StartTimer()
		}
	})
}
