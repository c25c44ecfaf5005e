//go:build reliability

package reliability

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/contactbook/contactbook/internal/mailer/mailertest"
	"github.com/contactbook/contactbook/internal/postgres/pgtest"
	"github.com/contactbook/contactbook/internal/transactional"
)

// TestTransactionalBurstKill accepts a burst of transactional emails on
// two instances, kills one with SIGKILL midway, lets the survivor send
// the rest, and restarts the killed one: no message reaches the provider
// twice; every message the dead instance was not sending at the kill is
// sent exactly once; the few it was sending (at most one round, 16) are
// settled as "delivery outcome unknown", never sent again, and a
// provider report on one of them makes it sent.
func TestTransactionalBurstKill(t *testing.T) {
	const total = 2000
	ctx := context.Background()
	dbURL := pgtest.Setup(t).URL
	pool := dbPool(t, dbURL)
	mail := mailertest.NewServer(t)
	mail.SetDelay(100 * time.Millisecond) // 16 at a time: about 160 a second per instance

	a := start(t, "a", dbURL, mail.URL)
	b := start(t, "b", dbURL, mail.URL)
	tm := signup(t, a.base, "Tx")
	// The email settings are saved with the add-on (sending needs none).
	if _, err := pool.Exec(ctx, `UPDATE teams SET campaign_addon = 'active' WHERE id = $1`, tm.teamID); err != nil {
		t.Fatal(err)
	}
	tm.owner.must(t, http.StatusOK, "PUT", "/api/campaign-settings", map[string]any{
		"sender_name": "Acme", "sender_email": "receipts@acme.example", "company_name": "Acme Inc.", "address_line1": "1 Main St",
		"city": "Springfield", "country": "USA", "mailer_api_key": "SG.reliability-0123456789",
	})
	tpl := tm.key.must(t, http.StatusOK, "POST", "/api/v1/campaign-templates",
		map[string]any{"name": "Receipt", "subject": "Receipt {{data.n}}", "body_html": "<p>Order {{data.n}}</p>"}).str("data.id")

	// The burst, half through each instance, 16 clients, while both send.
	began := time.Now()
	var wg sync.WaitGroup
	for w := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < total; i += 16 {
				c := tm.key
				if i%2 == 1 {
					c.base = b.base
				}
				r, err := c.do("POST", "/api/v1/transactional", map[string]any{
					"template_id": tpl, "to": map[string]any{"email": fmt.Sprintf("r%d@example.com", i)}, "data": map[string]any{"n": i},
				})
				if err != nil || r.status != http.StatusAccepted {
					t.Errorf("send %d: %v %v", i, r, err)
				}
			}
		}()
	}
	wg.Wait()
	if n := queryInt(t, pool, `SELECT count(*) FROM transactional_messages`); n != total {
		t.Fatalf("%d messages accepted, want %d", n, total)
	}
	accepted := time.Since(began)
	waitFor(t, 60*time.Second, "a quarter of the burst at the provider", func() bool { return mail.RecipientCount() >= total/4 })
	b.kill()
	atKill := mail.RecipientCount()
	if atKill >= total {
		t.Fatalf("the burst was over (%d sent) before the kill", atKill)
	}
	// The survivor sends everything but the dead instance's round in
	// flight, which stays stamped until its lease runs out.
	stamped := func() int {
		return queryInt(t, pool, `SELECT count(*) FROM transactional_messages WHERE status = 'queued' AND sending_at IS NOT NULL`)
	}
	rest := func() bool {
		return queryInt(t, pool, `SELECT count(*) FROM transactional_messages WHERE status = 'sent'`)+stamped() == total
	}
	waitFor(t, 120*time.Second, "the survivor to send the rest", rest)
	// The survivor's own last round may still be stamped: it records it
	// within a send's time.
	time.Sleep(2 * time.Second)
	if !rest() {
		t.Fatal("the survivor is still sending")
	}
	inDoubt := stamped()
	survivorDone := time.Since(began)
	if inDoubt > 16 {
		t.Errorf("%d messages in doubt after the kill, want at most one round (16)", inDoubt)
	}
	// The lease (10 minutes) is moved into the past instead of waited
	// for; the restarted instance settles those messages as it starts.
	if _, err := pool.Exec(ctx, `UPDATE transactional_messages SET sending_at = now() - interval '11 minutes'
		WHERE status = 'queued' AND sending_at IS NOT NULL`); err != nil {
		t.Fatal(err)
	}
	start(t, "b-restarted", dbURL, mail.URL)
	waitFor(t, 30*time.Second, "the messages in doubt to be settled", func() bool { return stamped() == 0 })
	time.Sleep(time.Second) // a second send, if any, would have happened by now

	got := map[string]int{}
	for _, r := range mail.Recipients() {
		got[r.CustomArgs["transactional_id"]]++
	}
	twice := 0
	for _, n := range got {
		if n > 1 {
			twice++
		}
	}
	if twice != 0 {
		t.Errorf("%d messages reached the provider more than once", twice)
	}
	sent := queryInt(t, pool, `SELECT count(*) FROM transactional_messages WHERE status = 'sent'`)
	unknown := queryInt(t, pool, `SELECT count(*) FROM transactional_messages WHERE status = 'failed' AND detail = $1`, transactional.DetailOutcomeUnknown)
	if sent+unknown != total || unknown != inDoubt {
		t.Errorf("%d sent + %d outcome unknown, want %d in all with %d unknown", sent, unknown, total, inDoubt)
	}
	// Every message recorded as sent reached the provider exactly once.
	rows, _ := pool.Query(ctx, `SELECT id::text FROM transactional_messages WHERE status = 'sent'`)
	var id string
	missing := 0
	for rows.Next() {
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		if got[id] != 1 {
			missing++
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if missing != 0 {
		t.Errorf("%d messages recorded as sent did not reach the provider exactly once", missing)
	}
	reached := 0
	rows, _ = pool.Query(ctx, `SELECT id::text FROM transactional_messages WHERE status = 'failed'`)
	for rows.Next() {
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		reached += got[id]
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	report(t, "transactional burst kill -9: %d accepted in %.1f s on two instances; killed one with %d at the provider; survivor done %.1f s after the start; %d sent exactly once, %d in doubt settled as outcome unknown (%d of them had reached the provider), 0 twice",
		total, accepted.Seconds(), atKill, survivorDone.Seconds(), sent, unknown, reached)
}
