package webhooks_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/contactbook/contactbook/internal/postgres/pgtest"
)

// TestWebhookRecoveryCrash recovers 10,000 failed events on the real
// binary, kills it with SIGKILL while the recovery is under way, starts
// it again, and checks that every event reached the receiver, that the
// recovery queued each delivery once, and that the only repeats are the
// attempts the kill interrupted (delivery is at least once).
func TestWebhookRecoveryCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary; skipped with -short")
	}
	t.Parallel()
	const total = 10000
	dbURL := pgtest.Setup(t).URL
	rc := newDeliveryCounter(t, 5*time.Millisecond)
	counts := rc.counts
	// The killed instance's job is taken over after JOB_RESCUE_AFTER.
	svc := newBinaryService(t, dbURL, "JOB_RESCUE_AFTER=10s")
	first, base := svc.start()
	defer func() { _ = first.Process.Kill() }()
	token, teamID, webhookID := signupWithWebhook(t, base, rc.URL+"/hook")

	// An hour-long outage: every event's delivery failed for good.
	pool := pgtest.Setup(t, pgtest.On(dbURL), pgtest.MaxConns(2)).Pool
	_, err := pool.Exec(context.Background(), `
		WITH e AS (
			INSERT INTO events (id, team_id, type, body, occurred_at)
			SELECT gen_random_uuid(), $1, 'contact.created', convert_to('{"event":"contact.created","n":' || n || '}', 'UTF8'),
			       now() - interval '1 hour' + n * interval '1 millisecond'
			FROM generate_series(1, $3) n RETURNING id)
		INSERT INTO webhook_deliveries (event_id, webhook_id, status, attempts, next_attempt_at)
		SELECT id, $2, 'failed', 4, now() FROM e`, teamID, webhookID, total)
	if err != nil {
		t.Fatal(err)
	}

	body, _ := json.Marshal(map[string]string{"since": time.Now().Add(-2 * time.Hour).Format(time.RFC3339)})
	req, _ := http.NewRequest(http.MethodPost, fmt.Sprintf("%s/api/teams/%s/webhooks/%s/recover", base, teamID, webhookID), bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var queued struct {
		Data struct {
			Queued int `json:"queued"`
		} `json:"data"`
	}
	_ = json.NewDecoder(res.Body).Decode(&queued)
	res.Body.Close()
	if res.StatusCode != http.StatusAccepted || queued.Data.Queued != total {
		t.Fatalf("recover: %d, queued %d", res.StatusCode, queued.Data.Queued)
	}

	// SIGKILL as soon as the first recovered event arrives: the recovery
	// is still queueing, or has just finished.
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(time.Millisecond) {
		if d, _ := counts(); d >= 1 {
			break
		}
		if time.Now().After(deadline) {
			d, _ := counts()
			t.Fatalf("only %d of %d recovered events arrived before the kill", d, total)
		}
	}
	if err := first.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = first.Wait()
	var queuedAtKill int
	_ = pool.QueryRow(context.Background(), `SELECT count(*) FROM webhook_deliveries WHERE recovery_id IS NOT NULL`).Scan(&queuedAtKill)
	killedAt, _ := counts()

	second, _ := svc.start()
	defer func() { _ = second.Process.Kill() }()
	for deadline := time.Now().Add(120 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if d, _ := counts(); d == total {
			break
		}
		if time.Now().After(deadline) {
			d, _ := counts()
			t.Fatalf("after the restart %d of %d recovered events arrived", d, total)
		}
	}
	// The recovery queued each delivery once: each has one recovery id,
	// and succeeded.
	var recovered, succeeded int
	if err := pool.QueryRow(context.Background(), `
		SELECT count(DISTINCT recovery_id) FILTER (WHERE recovery_id IS NOT NULL), count(*) FILTER (WHERE status = 'succeeded')
		FROM webhook_deliveries`).Scan(&recovered, &succeeded); err != nil {
		t.Fatal(err)
	}
	if recovered != 1 {
		t.Errorf("%d recoveries marked the deliveries, want 1", recovered)
	}
	for deadline := time.Now().Add(10 * time.Second); succeeded != total && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		_ = pool.QueryRow(context.Background(), `SELECT count(*) FROM webhook_deliveries WHERE status = 'succeeded'`).Scan(&succeeded)
	}
	if succeeded != total {
		t.Errorf("%d deliveries succeeded, want %d", succeeded, total)
	}
	// Repeats come only from attempts the kill cut short or whose outcome
	// it kept from being recorded: at most the workers' and the result
	// queue's worth (16 + 64), not a second recovery.
	d, all := counts()
	dupes := all - d
	if dupes > 80 {
		t.Errorf("%d repeated deliveries after the kill, more than the attempts in flight could make", dupes)
	}
	t.Logf("killed after %d of %d recovered events had arrived (%d queued by then); %d repeated after the restart (at least once)",
		killedAt, total, queuedAtKill, dupes)
}
