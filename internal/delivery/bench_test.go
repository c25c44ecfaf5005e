package delivery_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/contactbook/contactbook/internal/apptest"
)

// Sizes of the figures docs/benchmarks.md reports.
const (
	benchParticipants = 100_000
	benchBatch        = 1_000
	statsEvents       = 500_000
	bookEvents        = 1_000_000
)

// BenchmarkDelivery measures the delivery feedback figures on one book:
//
//   - Ingest: signed batches of 1,000 events posted to the event endpoint
//     one after the other (verification, parsing, the transaction, the
//     answer), over a campaign of 100,000 participants; events/s.
//
//   - CampaignStats100k: GET the stats of that campaign once it holds
//     500,000 events.
//
//   - Deliverability1M: GET a 30-day deliverability report of the book
//     once it holds 1,000,000 events.
//
//     go test -run '^$' -bench BenchmarkDelivery ./internal/delivery/
func BenchmarkDelivery(b *testing.B) {
	env := apptest.Setup(b, apptest.Options{Bare: true, Env: map[string]string{"DB_MAX_CONNS": "16", "LOG_LEVEL": "info"}}).Env
	owner := env.Signup("bench")
	owner.SetAddon("active")
	book := owner.CreateBook("Bench")
	ob := owner.InBook(book)
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		b.Fatal(err)
	}
	der, _ := x509.MarshalPKIXPublicKey(&priv.PublicKey)
	ob.Put("/api/campaign-settings", map[string]any{"event_webhook_public_key": base64.StdEncoding.EncodeToString(der)}).Expect(http.StatusOK)
	cid := ob.Post("/api/campaigns", map[string]any{"name": "Bench"}).Expect(http.StatusOK).String("data.id")
	tpl := ob.Post("/api/campaign-templates", map[string]any{"name": "T", "subject": "S", "body_html": "<p>x</p>"}).Expect(http.StatusOK).String("data.id")
	stepID := ob.Post("/api/campaigns/"+cid+"/steps", map[string]any{
		"step_type": "email", "name": "News", "schedule_type": "immediate", "email_template_id": tpl,
	}).Expect(http.StatusOK).String("data.id")

	ctx := context.Background()
	pool := env.App.Pool
	now := env.Clock.Now()
	// 100,000 contacts, each a participant whose email was sent.
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{`INSERT INTO contacts (book_id, first_name, emails)
		  SELECT $1, 'c' || g, jsonb_build_array(jsonb_build_object('address', 'c' || g || '@example.com', 'label', 'work', 'primary', true))
		  FROM generate_series(1, $2::int) g`, []any{book, benchParticipants}},
		{`INSERT INTO campaign_participants (campaign_id, contact_id, enrolled_at) SELECT $2, id, $3 FROM contacts WHERE book_id = $1`,
			[]any{book, cid, now}},
		{`INSERT INTO campaign_step_completions (step_id, participant_id, campaign_id, result, completed_at, tries, token_hash)
		  SELECT $1, id, $2, 'success', $3, 1, '\x00'::bytea FROM campaign_participants WHERE campaign_id = $2`, []any{stepID, cid, now}},
	} {
		if _, err := pool.Exec(ctx, q.sql, q.args...); err != nil {
			b.Fatal(err)
		}
	}
	rows, err := pool.Query(ctx, `SELECT id FROM campaign_participants WHERE campaign_id = $1 ORDER BY id`, cid)
	if err != nil {
		b.Fatal(err)
	}
	var participants []uuid.UUID
	for rows.Next() {
		var id uuid.UUID
		if err := rows.Scan(&id); err != nil {
			b.Fatal(err)
		}
		participants = append(participants, id)
	}
	if _, err := pool.Exec(ctx, `VACUUM ANALYZE`); err != nil {
		b.Fatal(err)
	}

	kinds := []string{"processed", "delivered", "open", "click", "open"}
	batchNo := 0
	b.Run("Ingest", func(b *testing.B) {
		type signed struct {
			body    []byte
			sig, ts string
		}
		batches := make([]signed, b.N)
		for i := range batches {
			events := make([]map[string]any, benchBatch)
			for j := range events {
				n := batchNo*benchBatch + j
				events[j] = map[string]any{
					"event": kinds[(n/benchParticipants)%len(kinds)], "email": fmt.Sprintf("c%d@example.com", n%benchParticipants),
					"timestamp": now.Unix(), "sg_event_id": fmt.Sprint("ev-", n), "url": "https://acme.example/",
					"campaign_id": cid, "step_id": stepID, "participant_id": participants[n%benchParticipants].String(),
				}
			}
			batchNo++
			body, _ := json.Marshal(events)
			ts := strconv.FormatInt(env.Clock.Now().Unix(), 10)
			sum := sha256.Sum256(append([]byte(ts), body...))
			sig, err := ecdsa.SignASN1(rand.Reader, priv, sum[:])
			if err != nil {
				b.Fatal(err)
			}
			batches[i] = signed{body, base64.StdEncoding.EncodeToString(sig), ts}
		}
		client := env.Anonymous()
		b.ResetTimer()
		start := time.Now()
		for i := range b.N {
			res := client.Post("/api/mailer/events/"+book, apptest.Raw{ContentType: "application/json", Body: batches[i].body},
				"X-Twilio-Email-Event-Webhook-Signature", batches[i].sig, "X-Twilio-Email-Event-Webhook-Timestamp", batches[i].ts).
				Expect(http.StatusOK)
			if res.Int("data.applied") != benchBatch {
				b.Fatalf("applied %s", res.Body)
			}
		}
		b.ReportMetric(float64(b.N*benchBatch)/time.Since(start).Seconds(), "events/s")
	})

	// Fill the campaign up to 500,000 events and the book up to 1,000,000
	// (the rest in other days of the last 30), with the rows and counters
	// ingestion writes.
	have := env.QueryInt(`SELECT count(*) FROM delivery_events WHERE book_id = $1`, book)
	fill := func(n int, days int) {
		if n <= 0 {
			return
		}
		if _, err := pool.Exec(ctx, `
			INSERT INTO delivery_events (book_id, sg_event_id, contact_id, campaign_id, step_id, participant_id, kind, detail, occurred_at, received_at)
			SELECT $1, 'fill-' || g || '-' || $6::int, p.contacts[1 + g % p.n], $2, $3, p.ids[1 + g % p.n],
			       (ARRAY['delivered','opened','clicked','opened','processed'])[1 + g % 5], '',
			       $4::timestamptz - make_interval(days => g % $6::int), $4
			FROM (SELECT array_agg(id) AS ids, array_agg(contact_id) AS contacts, count(*)::int AS n
			      FROM campaign_participants WHERE campaign_id = $2) p,
			     generate_series(1, $5::int) g`,
			book, cid, stepID, now, n, days); err != nil {
			b.Fatal(err)
		}
	}
	fill(statsEvents-have, 1)
	fill(bookEvents-statsEvents, 30)
	if _, err := pool.Exec(ctx, `
		INSERT INTO email_deliveries (participant_id, step_id, state, state_at, delivered_at, opened_at, clicked_at)
		SELECT participant_id, step_id, 'delivered', max(occurred_at), min(occurred_at) FILTER (WHERE kind = 'delivered'),
		       min(occurred_at) FILTER (WHERE kind = 'opened'), min(occurred_at) FILTER (WHERE kind = 'clicked')
		FROM delivery_events WHERE book_id = $1 GROUP BY participant_id, step_id
		ON CONFLICT DO NOTHING`, book); err != nil {
		b.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `
		INSERT INTO delivery_daily_counts (book_id, day, sent, delivered, opened, clicked)
		SELECT $1, (occurred_at AT TIME ZONE 'UTC')::date, count(*) / 3, count(*) FILTER (WHERE kind = 'delivered'),
		       count(*) FILTER (WHERE kind = 'opened'), count(*) FILTER (WHERE kind = 'clicked')
		FROM delivery_events WHERE book_id = $1 GROUP BY 2
		ON CONFLICT (book_id, day) DO UPDATE SET sent = EXCLUDED.sent, delivered = EXCLUDED.delivered,
			opened = EXCLUDED.opened, clicked = EXCLUDED.clicked`, book); err != nil {
		b.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `VACUUM ANALYZE`); err != nil {
		b.Fatal(err)
	}
	if n := env.QueryInt(`SELECT count(*) FROM delivery_events WHERE book_id = $1`, book); n < bookEvents {
		b.Fatalf("the book holds %d events", n)
	}

	timed := func(b *testing.B, path string) {
		ob.Get(path).Expect(http.StatusOK) // warm
		b.ResetTimer()
		start := time.Now()
		for range b.N {
			ob.Get(path).Expect(http.StatusOK)
		}
		b.ReportMetric(float64(time.Since(start).Microseconds())/1000/float64(b.N), "ms/request")
	}
	b.Run("CampaignStats100k", func(b *testing.B) { timed(b, "/api/campaigns/"+cid+"/stats") })
	b.Run("Deliverability1M", func(b *testing.B) { timed(b, "/api/deliverability?days=30") })
}
