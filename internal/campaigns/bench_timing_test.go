package campaigns_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/contactbook/contactbook/internal/apptest"
	"github.com/contactbook/contactbook/internal/mailer/mailertest"
)

// BenchmarkCampaignWindow processes an email step with a Monday-to-Friday
// 09:00-17:00 window over 100,000 participants, 90,000 of them in Tokyo
// (where it is 18:00, so the window holds them) and 10,000 in UTC (09:00,
// open). It reports:
//
//   - first-pass-s: the pass that reads all 100,000, holds the 90,000
//     until their window opens and sends the other 10,000;
//   - held-pass-s and emails/s: a later pass when 10,000 more UTC
//     participants are due and the 90,000 are held (it must not read
//     them);
//   - idle-pass-ms: a pass with everyone held or done.
//
// "vacuumed" lets the participants table be vacuumed between the first
// pass and the second, as autovacuum does after the first pass's 90,000
// updates; "at-once" runs the second pass right after the first, when
// the walk still meets the index entries the holds left behind.
//
//	go test -run '^$' -bench BenchmarkCampaignWindow -benchtime 1x ./internal/campaigns/
func BenchmarkCampaignWindow(b *testing.B) {
	b.Run("vacuumed", func(b *testing.B) { benchmarkCampaignWindow(b, true) })
	b.Run("at-once", func(b *testing.B) { benchmarkCampaignWindow(b, false) })
}

func benchmarkCampaignWindow(b *testing.B, vacuumBetween bool) {
	mail := mailertest.NewServer(b)
	env := apptest.Setup(b, apptest.Options{Bare: true, Env: map[string]string{
		"MAILER_BASE_URL": mail.URL, "DB_MAX_CONNS": "16", "LOG_LEVEL": "info",
	}}).Env
	env.Clock.Set(time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)) // Monday
	owner := env.Signup("bench")
	owner.SetAddon("active")
	book := owner.CreateBook("Bench")
	ob := owner.InBook(book)
	ob.Put("/api/campaign-settings", map[string]any{
		"sender_name": "Acme", "sender_email": "news@acme.example", "company_name": "Acme Inc.",
		"address_line1": "1 Main St", "mailer_api_key": "SG.bench",
	}).Expect(http.StatusOK)
	tpl := ob.Post("/api/campaign-templates", map[string]any{
		"name": "News", "subject": "News for {{first_name | default: \"you\"}}",
		"body_html": "<h1>Hello {{first_name}}</h1><p><a href=\"{{unsubscribe_url}}\">Unsubscribe</a></p>",
	}).Expect(http.StatusOK).String("data.id")
	ctx := context.Background()
	pool := env.App.Pool
	seed := func(from, n int, zone string) {
		if _, err := pool.Exec(ctx, `
			INSERT INTO contacts (book_id, first_name, last_name, time_zone, emails)
			SELECT $1, 'c' || g, 'Bench', $4, jsonb_build_array(jsonb_build_object('address', 'c' || g || '@example.com', 'label', 'work', 'primary', true))
			FROM generate_series($2::int, $2::int + $3::int - 1) g`, book, from, n, zone); err != nil {
			b.Fatal(err)
		}
	}
	seed(1, 90_000, "Asia/Tokyo")
	seed(90_001, 10_000, "UTC")

	for range b.N {
		b.StopTimer()
		mail.Reset()
		cid := ob.Post("/api/campaigns", map[string]any{"name": "Window"}).Expect(http.StatusOK).String("data.id")
		ob.Post("/api/campaigns/"+cid+"/steps", map[string]any{
			"step_type": "email", "name": "News", "schedule_type": "immediate", "email_template_id": tpl,
			"send_window": map[string]any{"days": []string{"mon", "tue", "wed", "thu", "fri"}, "start": "09:00", "end": "17:00"},
		}).Expect(http.StatusOK)
		ob.Patch("/api/campaigns/"+cid, map[string]any{"status": "active"}).Expect(http.StatusOK)
		if _, err := pool.Exec(ctx, `
			INSERT INTO campaign_participants (campaign_id, contact_id, enrolled_at)
			SELECT $1, id, $2 FROM contacts WHERE book_id = $3`, cid, env.Clock.Now(), book); err != nil {
			b.Fatal(err)
		}
		if _, err := pool.Exec(ctx, `VACUUM ANALYZE`); err != nil {
			b.Fatal(err)
		}
		id := uuid.MustParse(cid)
		b.StartTimer()

		start := time.Now()
		res, err := env.App.CampaignRunner.ProcessCampaign(ctx, id)
		first := time.Since(start)
		if err != nil || res.Sent != 10_000 || res.Held != 90_000 {
			b.Fatalf("first pass: %+v %v", res, err)
		}

		b.StopTimer()
		// 10,000 more UTC participants fall due.
		if _, err := pool.Exec(ctx, `
			WITH c AS (
				INSERT INTO contacts (book_id, first_name, last_name, time_zone, emails)
				SELECT $1, 'n' || g, 'Bench', 'UTC', jsonb_build_array(jsonb_build_object('address', 'n' || g || '-' || $3 || '@example.com', 'label', 'work', 'primary', true))
				FROM generate_series(1, 10000) g RETURNING id)
			INSERT INTO campaign_participants (campaign_id, contact_id, enrolled_at) SELECT $2, id, now() FROM c`, book, cid, cid[:8]); err != nil {
			b.Fatal(err)
		}
		if vacuumBetween {
			// As autovacuum does after the first pass's 90,000 updates
			// (the pass every 15 minutes comes later).
			if _, err := pool.Exec(ctx, `VACUUM campaign_participants`); err != nil {
				b.Fatal(err)
			}
		}
		b.StartTimer()
		start = time.Now()
		res, err = env.App.CampaignRunner.ProcessCampaign(ctx, id)
		held := time.Since(start)
		if err != nil || res.Sent != 10_000 || res.Held != 0 {
			b.Fatalf("pass with 90,000 held: %+v %v", res, err)
		}
		start = time.Now()
		res, err = env.App.CampaignRunner.ProcessCampaign(ctx, id)
		idle := time.Since(start)
		if err != nil || res.Sent != 0 {
			b.Fatalf("idle pass: %+v %v", res, err)
		}
		b.ReportMetric(first.Seconds(), "first-pass-s")
		b.ReportMetric(held.Seconds(), "held-pass-s")
		b.ReportMetric(10_000/held.Seconds(), "emails/s")
		b.ReportMetric(float64(idle.Microseconds())/1000, "idle-pass-ms")
	}
}
