//go:build reliability

package reliability

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/contactbook/contactbook/internal/campaigns"
	"github.com/contactbook/contactbook/internal/mailer/mailertest"
	"github.com/contactbook/contactbook/internal/postgres/pgtest"
)

// TestCampaignCrashTwoInstances runs one 10,000-participant email step on
// two instances at once, kills one with SIGKILL mid-run, lets the
// survivor finish, expires the dead instance's claim leases, restarts it
// and runs again: no address may get the step's email twice, and every
// participant must end with a completion record.
func TestCampaignCrashTwoInstances(t *testing.T) {
	const total = 10000
	ctx := context.Background()
	dbURL := pgtest.Setup(t).URL
	pool := dbPool(t, dbURL)
	mail := mailertest.NewServer(t)
	// 1,000 recipients per request; 600 ms each makes the run last seconds.
	mail.SetDelay(600 * time.Millisecond)

	// A dead instance's job is rescued after 20 s instead of a minute,
	// which keeps the scenario short; the mechanism is the same.
	const rescue = "JOB_RESCUE_AFTER=20s"
	a := start(t, "a", dbURL, mail.URL, rescue)
	b := start(t, "b", dbURL, mail.URL, rescue)
	tm := signup(t, a.base, "Camp")
	if _, err := pool.Exec(ctx, `UPDATE teams SET campaign_addon = 'active' WHERE id = $1`, tm.teamID); err != nil {
		t.Fatal(err)
	}
	tm.owner.must(t, http.StatusOK, "PUT", "/api/campaign-settings", map[string]any{
		"sender_name": "Acme News", "sender_email": "news@acme.example", "reply_to_email": "help@acme.example",
		"company_name": "Acme Inc.", "address_line1": "1 Main St", "city": "Springfield", "state": "IL",
		"postal_code": "62701", "country": "USA", "mailer_api_key": "SG.reliability-0123456789",
	})
	tpl := tm.key.must(t, http.StatusOK, "POST", "/api/v1/campaign-templates",
		map[string]any{"name": "Hello", "subject": "Hello {{first_name}}", "body_html": "<p>Hi {{first_name}}</p>"}).str("data.id")
	cid := tm.key.must(t, http.StatusOK, "POST", "/api/v1/campaigns", map[string]any{"name": "Crash"}).str("data.id")
	stepID := tm.key.must(t, http.StatusOK, "POST", "/api/v1/campaigns/"+cid+"/steps", map[string]any{
		"step_type": "email", "name": "Email", "schedule_type": "immediate", "email_template_id": tpl,
	}).str("data.id")

	// 10,000 contacts in one statement, then enrolled through the API.
	if _, err := pool.Exec(ctx, `
		INSERT INTO contacts (book_id, first_name, last_name, emails)
		SELECT $1, 'p' || g, 'Load', jsonb_build_array(jsonb_build_object('address', 'p' || g || '@example.com', 'label', 'work', 'primary', true))
		FROM generate_series(1, $2) AS g`, tm.book, total); err != nil {
		t.Fatal(err)
	}
	rows, _ := pool.Query(ctx, `SELECT id::text FROM contacts WHERE book_id = $1`, tm.book)
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil || len(ids) != total {
		t.Fatalf("contacts: %d, %v", len(ids), err)
	}
	if n := tm.key.must(t, http.StatusOK, "POST", "/api/v1/campaigns/"+cid+"/participants",
		map[string]any{"contact_ids": ids}).num("data.enrolled"); n != total {
		t.Fatalf("enrolled %d, want %d", n, total)
	}
	tm.key.must(t, http.StatusOK, "PATCH", "/api/v1/campaigns/"+cid, map[string]any{"status": "active"})

	run := func(in *instance) string {
		c := tm.owner
		c.base = in.base
		return c.must(t, http.StatusOK, "POST", "/api/campaigns/"+cid+"/run", nil).str("data.message")
	}
	began := time.Now()
	run(a)
	run(b)
	waitFor(t, 60*time.Second, "2,000 emails before the kill", func() bool { return mail.RecipientCount() >= 2000 })
	// Kill the instance that holds the run's job (its pid is in River's
	// client id), so the survivor can only finish through River's rescue
	// of a dead instance's job.
	holder := ""
	waitFor(t, 30*time.Second, "the run's job to be running", func() bool {
		_ = pool.QueryRow(ctx, `SELECT coalesce(attempted_by[cardinality(attempted_by)], '') FROM river_job
			WHERE kind = 'campaign_run' AND state = 'running' AND args->>'campaign_id' = $1`, cid).Scan(&holder)
		return holder != ""
	})
	if strings.Contains(holder, fmt.Sprintf("_pid%d_", a.cmd.Process.Pid)) {
		a, b = b, a
	}
	if !strings.Contains(holder, fmt.Sprintf("_pid%d_", b.cmd.Process.Pid)) {
		t.Fatalf("the run's job is held by %q, neither instance", holder)
	}
	b.kill()
	killedAt := time.Now()
	atKill := mail.RecipientCount()
	if atKill >= total {
		t.Fatalf("the run was over (%d sent) before the kill", atKill)
	}

	// The survivor finishes the run: the run is one job for both
	// instances; if the dead one held it, River's rescuer makes it
	// available again after JOB_RESCUE_AFTER (here 20 s; River looks every
	// 30 s) and the
	// survivor works it. A new run is queued only when the previous one
	// is over ("started" rather than "already being processed"), and then
	// every participant has a completion row that is either final or held
	// by one of the dead instance's claims.
	settled := func() bool {
		if !strings.Contains(run(a), "started") {
			return false
		}
		rows := queryInt(t, pool, `SELECT count(*) FROM campaign_step_completions WHERE step_id = $1`, stepID)
		open := queryInt(t, pool, `SELECT count(*) FROM campaign_step_completions WHERE step_id = $1 AND result IS NULL`, stepID)
		held := queryInt(t, pool, `SELECT coalesce(sum(cardinality(participant_ids)), 0) FROM campaign_claims WHERE campaign_id = $1`, cid)
		return rows == total && open == held
	}
	waitFor(t, 240*time.Second, "the survivor to finish", settled)
	stalled := time.Since(killedAt)
	time.Sleep(time.Second) // the last, empty pass ends
	waitFor(t, 30*time.Second, "the survivor to be idle", func() bool { return strings.Contains(run(a), "started") })
	time.Sleep(time.Second)
	stranded := queryInt(t, pool, `SELECT count(*) FROM campaign_step_completions WHERE step_id = $1 AND result IS NULL`, stepID)
	// Of those, the chunks the dead instance had handed to the provider
	// become "outcome unknown"; the rest are given back and sent.
	inFlight := queryInt(t, pool, `SELECT coalesce(sum(cardinality(participant_ids)), 0) FROM campaign_claims WHERE campaign_id = $1 AND sending_at IS NOT NULL`, cid)
	survivorDone := time.Since(began)

	// The dead instance's claims keep their rows until the lease (10
	// minutes) runs out; move it into the past instead of waiting.
	if _, err := pool.Exec(ctx, `UPDATE campaign_claims SET lease_until = now() - interval '1 second' WHERE campaign_id = $1`, cid); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `UPDATE campaign_step_completions SET lease_until = now() - interval '1 second' WHERE step_id = $1 AND result IS NULL`, stepID); err != nil {
		t.Fatal(err)
	}
	b2 := start(t, "b-restarted", dbURL, mail.URL, rescue)
	run(b2)
	waitFor(t, 60*time.Second, "every participant to have a completion", func() bool {
		return queryInt(t, pool, `SELECT count(*) FROM campaign_step_completions WHERE step_id = $1 AND result IS NOT NULL`, stepID) == total &&
			queryInt(t, pool, `SELECT count(*) FROM campaign_participants WHERE campaign_id = $1 AND status = 'completed'`, cid) == total
	})

	// At most once at the provider.
	perAddress := map[string]int{}
	for _, r := range mail.Recipients() {
		perAddress[strings.ToLower(r.Email)]++
	}
	dupes := 0
	for _, n := range perAddress {
		if n > 1 {
			dupes++
		}
	}
	if dupes != 0 {
		t.Errorf("%d addresses got the step's email more than once", dupes)
	}
	success := queryInt(t, pool, `SELECT count(*) FROM campaign_step_completions WHERE step_id = $1 AND result = 'success'`, stepID)
	unknown := queryInt(t, pool, `SELECT count(*) FROM campaign_step_completions WHERE step_id = $1 AND result = 'failed' AND result_detail = $2`, stepID, campaigns.DetailOutcomeUnknown)
	otherFailed := queryInt(t, pool, `SELECT count(*) FROM campaign_step_completions WHERE step_id = $1 AND result = 'failed' AND result_detail <> $2`, stepID, campaigns.DetailOutcomeUnknown)
	if success+unknown != total || otherFailed != 0 {
		t.Errorf("%d sent + %d outcome unknown (+%d other failures), want %d in all and no other failures", success, unknown, otherFailed, total)
	}
	if unknown != inFlight {
		t.Errorf("%d recorded as outcome unknown, but the killed instance had %d at the provider (of %d it held)", unknown, inFlight, stranded)
	}
	// Every success went out; the provider may also have taken some of the
	// emails whose answer the kill cut off (those count as outcome unknown).
	var sentRows []string
	rows, _ = pool.Query(ctx, `
		SELECT lower(c.emails->0->>'address') FROM campaign_step_completions d
		JOIN campaign_participants p ON p.id = d.participant_id JOIN contacts c ON c.id = p.contact_id
		WHERE d.step_id = $1 AND d.result = 'success'`, stepID)
	if sentRows, err = pgx.CollectRows(rows, pgx.RowTo[string]); err != nil {
		t.Fatal(err)
	}
	notAtProvider := 0
	for _, addr := range sentRows {
		if perAddress[addr] == 0 {
			notAtProvider++
		}
	}
	if notAtProvider != 0 {
		t.Errorf("%d participants recorded as sent never reached the provider", notAtProvider)
	}
	report(t, "campaign crash: %d participants, 2 instances, one killed after %d emails at the provider; "+
		"it held %d claimed rows, %d of them already at the provider; %d sent, %d recorded as %q (sends cut by the kill), "+
		"%d given back and sent after the restart, %d accepted by the provider in all, "+
		"%d addresses with duplicate emails for the step; survivor (taking over the dead instance's job) done %s after the kill, %s after the start",
		total, atKill, stranded, inFlight, success, unknown, campaigns.DetailOutcomeUnknown, stranded-inFlight,
		mail.RecipientCount(), dupes, stalled.Round(100*time.Millisecond), survivorDone.Round(100*time.Millisecond))
}
