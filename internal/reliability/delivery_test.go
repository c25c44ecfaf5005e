//go:build reliability

package reliability

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/contactbook/contactbook/internal/postgres/pgtest"
)

// TestDeliveryEventsCrashTwoInstances posts 60 signed batches of 500
// provider events, each to two instances at once, kills one instance with
// SIGKILL mid-way, then retries every batch that no instance acknowledged
// (as SendGrid does) and finally replays every batch. It requires every
// event of an acknowledged batch to be recorded, every event to be
// recorded once, the engagement counters to count each email once, and the
// replay to change nothing.
func TestDeliveryEventsCrashTwoInstances(t *testing.T) {
	const (
		participants = 3000
		batches      = 60
		perBatch     = 500
	)
	ctx := context.Background()
	dbURL := pgtest.Setup(t).URL
	pool := dbPool(t, dbURL)
	a := start(t, "a", dbURL, "http://127.0.0.1:9")
	b := start(t, "b", dbURL, "http://127.0.0.1:9")
	tm := signup(t, a.base, "Events")
	if _, err := pool.Exec(ctx, `UPDATE teams SET campaign_addon = 'active' WHERE id = $1`, tm.teamID); err != nil {
		t.Fatal(err)
	}
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, _ := x509.MarshalPKIXPublicKey(&priv.PublicKey)
	tm.owner.must(t, http.StatusOK, "PUT", "/api/campaign-settings", map[string]any{"event_webhook_public_key": base64.StdEncoding.EncodeToString(der)})
	tpl := tm.key.must(t, http.StatusOK, "POST", "/api/v1/campaign-templates",
		map[string]any{"name": "Hello", "subject": "Hello", "body_html": "<p>Hi</p>"}).str("data.id")
	cid := tm.key.must(t, http.StatusOK, "POST", "/api/v1/campaigns", map[string]any{"name": "Events"}).str("data.id")
	stepID := tm.key.must(t, http.StatusOK, "POST", "/api/v1/campaigns/"+cid+"/steps", map[string]any{
		"step_type": "email", "name": "Email", "schedule_type": "immediate", "email_template_id": tpl,
	}).str("data.id")
	// Participants whose email was sent (their completion rows hold a token).
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{`INSERT INTO contacts (book_id, first_name, emails)
		  SELECT $1, 'p' || g, jsonb_build_array(jsonb_build_object('address', 'p' || g || '@example.com', 'label', 'work', 'primary', true))
		  FROM generate_series(1, $2::int) g`, []any{tm.book, participants}},
		{`INSERT INTO campaign_participants (campaign_id, contact_id, enrolled_at) SELECT $1, id, now() FROM contacts WHERE book_id = $2`,
			[]any{cid, tm.book}},
		{`INSERT INTO campaign_step_completions (step_id, participant_id, campaign_id, result, completed_at, tries, token_hash)
		  SELECT $1, id, $2, 'success', now(), 1, '\x00'::bytea FROM campaign_participants WHERE campaign_id = $2`, []any{stepID, cid}},
	} {
		if _, err := pool.Exec(ctx, q.sql, q.args...); err != nil {
			t.Fatal(err)
		}
	}
	rows, _ := pool.Query(ctx, `SELECT id::text FROM campaign_participants WHERE campaign_id = $1 ORDER BY id`, cid)
	pids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil || len(pids) != participants {
		t.Fatalf("participants: %d, %v", len(pids), err)
	}

	// Each event is an open or a click of one email (a click when its
	// number is a multiple of 3); ids are unique, each email gets several.
	type batch struct {
		body []byte
		ids  []string
	}
	all := make([]batch, batches)
	for i := range all {
		events := make([]map[string]any, perBatch)
		for j := range events {
			n := i*perBatch + j
			kind := "open"
			if n%3 == 0 {
				kind = "click"
			}
			id := fmt.Sprint("ev-", n)
			events[j] = map[string]any{"event": kind, "email": fmt.Sprintf("p%d@example.com", n%participants), "timestamp": time.Now().Unix(),
				"sg_event_id": id, "url": "https://acme.example/", "campaign_id": cid, "step_id": stepID, "participant_id": pids[n%participants]}
			all[i].ids = append(all[i].ids, id)
		}
		all[i].body, _ = json.Marshal(events)
	}
	post := func(in *instance, bt batch) (int, map[string]any) {
		ts := strconv.FormatInt(time.Now().Unix(), 10)
		sum := sha256.Sum256(append([]byte(ts), bt.body...))
		sig, _ := ecdsa.SignASN1(rand.Reader, priv, sum[:])
		req, _ := http.NewRequest("POST", in.base+"/api/mailer/events/"+tm.book, bytes.NewReader(bt.body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Twilio-Email-Event-Webhook-Signature", base64.StdEncoding.EncodeToString(sig))
		req.Header.Set("X-Twilio-Email-Event-Webhook-Timestamp", ts)
		res, err := httpClient.Do(req)
		if err != nil {
			return 0, nil
		}
		defer res.Body.Close()
		raw, _ := io.ReadAll(res.Body)
		var out struct {
			Data map[string]any `json:"data"`
		}
		_ = json.Unmarshal(raw, &out)
		return res.StatusCode, out.Data
	}

	// Batches go to both instances at once (every fourth only to a); a is
	// killed a third of the way in.
	acked := make([]atomic.Bool, batches)
	var applied atomic.Int64
	var wg sync.WaitGroup
	for i := range all {
		if i == batches/3 {
			go a.kill()
		}
		targets := []*instance{a, b}
		if i%4 == 0 {
			targets = targets[:1] // some batches reach only a: after the kill they are not acknowledged
		}
		for _, in := range targets {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if status, data := post(in, all[i]); status == http.StatusOK {
					acked[i].Store(true)
					applied.Add(int64(data["applied"].(float64)))
				}
			}()
		}
		time.Sleep(20 * time.Millisecond)
	}
	wg.Wait()
	var ackedN int
	for i := range acked {
		if acked[i].Load() {
			ackedN++
		}
	}
	// Every acknowledged batch is recorded whole.
	for i := range all {
		if !acked[i].Load() {
			continue
		}
		if n := queryInt(t, pool, `SELECT count(*) FROM delivery_events WHERE book_id = $1 AND sg_event_id = ANY($2)`, tm.book, all[i].ids); n != perBatch {
			t.Fatalf("acknowledged batch %d: %d of %d events recorded", i, n, perBatch)
		}
	}
	// The provider retries what was not acknowledged, at the survivor.
	if ackedN == batches {
		t.Fatal("every batch was acknowledged: the kill came too late to test anything")
	}
	for i := range all {
		if !acked[i].Load() {
			if status, data := post(b, all[i]); status != http.StatusOK {
				t.Fatalf("retry of batch %d: %d", i, status)
			} else {
				applied.Add(int64(data["applied"].(float64)))
			}
		}
	}
	total := batches * perBatch
	if n := queryInt(t, pool, `SELECT count(*) FROM delivery_events WHERE book_id = $1`, tm.book); n != total {
		t.Fatalf("%d events recorded, want %d", n, total)
	}
	// A replay of everything applies nothing.
	for i := range all {
		if status, data := post(b, all[i]); status != http.StatusOK || data["applied"].(float64) != 0 || int(data["duplicates"].(float64)) != perBatch {
			t.Fatalf("replay of batch %d: %d %v", i, status, data)
		}
	}
	opened := queryInt(t, pool, `SELECT opened FROM delivery_step_counts WHERE step_id = $1`, stepID)
	clicked := queryInt(t, pool, `SELECT clicked FROM delivery_step_counts WHERE step_id = $1`, stepID)
	wantOpened := queryInt(t, pool, `SELECT count(*) FROM email_deliveries WHERE step_id = $1 AND opened_at IS NOT NULL`, stepID)
	wantClicked := queryInt(t, pool, `SELECT count(*) FROM email_deliveries WHERE step_id = $1 AND clicked_at IS NOT NULL`, stepID)
	// Participant k gets clicks when k is a multiple of 3, opens otherwise.
	if opened != participants*2/3 || clicked != participants/3 || opened != wantOpened || clicked != wantClicked {
		t.Fatalf("unique opens %d (emails %d), clicks %d (emails %d), want %d and %d", opened, wantOpened, clicked, wantClicked, participants*2/3, participants/3)
	}
	report(t, "delivery events: %d batches of %d posted to two instances at once, one killed (SIGKILL) mid-way: %d acknowledged before the kill or by the survivor (the rest retried at the survivor), every acknowledged event recorded, %d events recorded once (%d applied in all answers), unique opens %d and clicks %d of %d emails (as the email rows say), a full replay applied 0",
		batches, perBatch, ackedN, total, applied.Load(), opened, clicked, participants)
	if applied.Load() != int64(total) {
		t.Fatalf("the answers applied %d events, want %d", applied.Load(), total)
	}
}
