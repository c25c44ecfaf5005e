package billing_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/contactbook/contactbook/internal/apptest"
)

const webhookPath = "/api/payments/webhook"

func TestPaymentWebhookActivatesOnCompletedCheckout(t *testing.T) {
	t.Parallel()
	env := newEnv(t, newProvider(t), nil)
	ann := env.Signup("ann")

	ev := event("evt_completed_1", "checkout.session.completed", time.Now(), sessionObject(t, ann.TeamID, "cus_ann", "sub_ann"))
	r := sendEvent(t, env, testWebhookSecret, ev).Expect(http.StatusOK)
	if got := r.String("data.outcome"); got != "applied" {
		t.Fatalf("outcome %q, want applied", got)
	}
	addon, customer, sub := teamBilling(t, env, ann.TeamID)
	if addon != "active" || customer != "cus_ann" || sub != "sub_ann" {
		t.Fatalf("team = %s/%s/%s, want active/cus_ann/sub_ann", addon, customer, sub)
	}
	if n := env.QueryInt(`SELECT count(*) FROM billing_events WHERE event_id = 'evt_completed_1' AND outcome = 'applied' AND team_id = $1`, ann.TeamID); n != 1 {
		t.Fatalf("processed-event rows %d, want 1", n)
	}
}

func TestPaymentWebhookBadSignature(t *testing.T) {
	t.Parallel()
	env := newEnv(t, newProvider(t), nil)
	ann := env.Signup("ann")
	body, _ := json.Marshal(event("evt_forged", "checkout.session.completed", time.Now(), sessionObject(t, ann.TeamID, "cus_x", "sub_x")))
	raw := apptest.Raw{ContentType: "application/json", Body: body}

	// Signed with another secret.
	sendSigned(t, env, "whsec_someone_else", body).ExpectError(http.StatusBadRequest, "INVALID_INPUT")
	// No signature at all.
	env.Anonymous().Post(webhookPath, raw).ExpectError(http.StatusBadRequest, "INVALID_INPUT")
	// A garbled header.
	env.Anonymous().Post(webhookPath, raw, "Stripe-Signature", "t=abc,v1=00").ExpectError(http.StatusBadRequest, "INVALID_INPUT")
	// A valid signature of other bytes: the body was altered on the way.
	other, _ := json.Marshal(event("evt_forged", "checkout.session.completed", time.Now(), sessionObject(t, ann.TeamID, "cus_y", "sub_y")))
	good := signedHeader(other, testWebhookSecret)
	env.Anonymous().Post(webhookPath, raw, "Stripe-Signature", good).ExpectError(http.StatusBadRequest, "INVALID_INPUT")

	if addon, customer, _ := teamBilling(t, env, ann.TeamID); addon != "none" || customer != "" {
		t.Fatalf("team changed by a forged event: %s/%s", addon, customer)
	}
	if n := env.QueryInt(`SELECT count(*) FROM billing_events`); n != 0 {
		t.Fatalf("%d forged events recorded", n)
	}
}

func TestPaymentWebhookReplayedEventProcessedOnce(t *testing.T) {
	t.Parallel()
	env := newEnv(t, newProvider(t), nil)
	ann := env.Signup("ann")
	ev := event("evt_replayed", "checkout.session.completed", time.Now(), sessionObject(t, ann.TeamID, "cus_r", "sub_r"))

	sendEvent(t, env, testWebhookSecret, ev).Expect(http.StatusOK)
	// The operator takes the add-on away; a retry of the old event must not
	// give it back.
	ann.SetAddon("canceled")
	for range 2 {
		r := sendEvent(t, env, testWebhookSecret, ev).Expect(http.StatusOK)
		if got := r.String("data.outcome"); got != "duplicate" {
			t.Fatalf("replay outcome %q, want duplicate", got)
		}
	}
	if addon, _, _ := teamBilling(t, env, ann.TeamID); addon != "canceled" {
		t.Fatalf("replayed event changed the add-on to %q", addon)
	}
	if n := env.QueryInt(`SELECT count(*) FROM billing_events WHERE event_id = 'evt_replayed'`); n != 1 {
		t.Fatalf("event recorded %d times", n)
	}
}

func TestPaymentWebhookConcurrentDeliveriesApplyOnce(t *testing.T) {
	t.Parallel()
	env := newEnv(t, newProvider(t), nil)
	ann := env.Signup("ann")
	body, _ := json.Marshal(event("evt_parallel", "checkout.session.completed", time.Now(), sessionObject(t, ann.TeamID, "cus_p", "sub_p")))
	header := signedHeader(body, testWebhookSecret)

	outcomes := make(chan string, 4)
	for range 4 {
		go func() {
			req, _ := http.NewRequest(http.MethodPost, env.URL+webhookPath, strings.NewReader(string(body)))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Stripe-Signature", header)
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				outcomes <- err.Error()
				return
			}
			defer res.Body.Close()
			var out struct {
				Data struct {
					Outcome string `json:"outcome"`
				} `json:"data"`
			}
			_ = json.NewDecoder(res.Body).Decode(&out)
			outcomes <- out.Data.Outcome
		}()
	}
	counts := map[string]int{}
	for range 4 {
		counts[<-outcomes]++
	}
	if counts["applied"] != 1 || counts["duplicate"] != 3 {
		t.Fatalf("outcomes %v, want one applied and three duplicates", counts)
	}
}

func TestPaymentWebhookSubscriptionLifecycle(t *testing.T) {
	t.Parallel()
	env := newEnv(t, newProvider(t), nil)
	ann := env.Signup("ann")
	t0 := time.Now().Add(-time.Hour)
	at := func(min int) time.Time { return t0.Add(time.Duration(min) * time.Minute) }
	send := func(id, typ string, when time.Time, obj map[string]any, wantOutcome, wantAddon string) {
		t.Helper()
		r := sendEvent(t, env, testWebhookSecret, event(id, typ, when, obj)).Expect(http.StatusOK)
		if got := r.String("data.outcome"); got != wantOutcome {
			t.Fatalf("%s: outcome %q, want %q", id, got, wantOutcome)
		}
		if addon, _, _ := teamBilling(t, env, ann.TeamID); addon != wantAddon {
			t.Fatalf("%s: add-on %q, want %q", id, addon, wantAddon)
		}
	}
	sub := func(status string) map[string]any {
		return subscriptionObject(t, ann.TeamID, "sub_life", "cus_life", status)
	}

	send("evt_l1", "checkout.session.completed", at(0), sessionObject(t, ann.TeamID, "cus_life", "sub_life"), "applied", "active")
	// A failed renewal being retried keeps the add-on during dunning.
	send("evt_l2", "customer.subscription.updated", at(1), sub("past_due"), "ignored", "active")
	send("evt_l3", "customer.subscription.updated", at(2), sub("unpaid"), "applied", "canceled")
	send("evt_l4", "customer.subscription.updated", at(3), sub("active"), "applied", "active")
	send("evt_l5", "customer.subscription.updated", at(4), sub("trialing"), "applied", "active")
	send("evt_l6", "customer.subscription.deleted", at(5), sub("canceled"), "applied", "canceled")
	// A late retry of an older "active" update cannot undo the deletion.
	send("evt_l0", "customer.subscription.updated", at(0), sub("active"), "stale", "canceled")

	// A new subscription replaces the old one; news about the old one no
	// longer touches the team.
	send("evt_l7", "checkout.session.completed", at(6), sessionObject(t, ann.TeamID, "cus_life", "sub_new"), "applied", "active")
	send("evt_l8", "customer.subscription.deleted", at(7), sub("canceled"), "stale", "active")
	if _, _, s := teamBilling(t, env, ann.TeamID); s != "sub_new" {
		t.Fatalf("stored subscription %q, want sub_new", s)
	}
	// A subscription event without team metadata finds the team by its
	// stored subscription id.
	bare := subscriptionObject(t, ann.TeamID, "sub_new", "cus_life", "incomplete_expired")
	bare["metadata"] = map[string]any{}
	send("evt_l9", "customer.subscription.updated", at(8), bare, "applied", "canceled")
}

func TestPaymentWebhookPendingPaymentWaitsForSettlement(t *testing.T) {
	t.Parallel()
	env := newEnv(t, newProvider(t), nil)
	ann := env.Signup("ann")
	cs := sessionObject(t, ann.TeamID, "cus_sepa", "sub_sepa")
	cs["payment_status"] = "unpaid"

	sendEvent(t, env, testWebhookSecret, event("evt_p1", "checkout.session.completed", time.Now(), cs)).Expect(http.StatusOK)
	addon, customer, sub := teamBilling(t, env, ann.TeamID)
	if addon != "none" || customer != "cus_sepa" || sub != "sub_sepa" {
		t.Fatalf("after unpaid checkout: %s/%s/%s, want none/cus_sepa/sub_sepa", addon, customer, sub)
	}
	cs["payment_status"] = "paid"
	sendEvent(t, env, testWebhookSecret, event("evt_p2", "checkout.session.async_payment_succeeded", time.Now(), cs)).Expect(http.StatusOK)
	if addon, _, _ := teamBilling(t, env, ann.TeamID); addon != "active" {
		t.Fatalf("after settlement: %q, want active", addon)
	}
}

func TestPaymentWebhookCancelKeepsTrial(t *testing.T) {
	t.Parallel()
	env := newEnv(t, newProvider(t), nil)
	ann := env.Signup("ann")
	ann.Post("/api/teams/"+ann.TeamID+"/addons/campaigns/trial", nil).Expect(http.StatusOK)

	// A checkout whose first payment never went through ends its
	// subscription; the team's running trial stays.
	sendEvent(t, env, testWebhookSecret, event("evt_t1", "customer.subscription.updated", time.Now(),
		subscriptionObject(t, ann.TeamID, "sub_t", "cus_t", "incomplete_expired"))).Expect(http.StatusOK)
	if addon, _, _ := teamBilling(t, env, ann.TeamID); addon != "trial" {
		t.Fatalf("add-on %q, want trial", addon)
	}
}

func TestPaymentWebhookIgnoresUnknownTypesAndTeams(t *testing.T) {
	t.Parallel()
	env := newEnv(t, newProvider(t), nil)
	ann := env.Signup("ann")

	r := sendEvent(t, env, testWebhookSecret, event("evt_inv", "invoice.paid", time.Now(), fixture(t, "/v1/invoices/in_123"))).
		Expect(http.StatusOK)
	if got := r.String("data.outcome"); got != "ignored" {
		t.Fatalf("unknown type outcome %q, want ignored", got)
	}
	// A checkout of another product (one-off payment) is not the add-on.
	oneOff := sessionObject(t, ann.TeamID, "cus_o", "sub_o")
	oneOff["mode"] = "payment"
	sendEvent(t, env, testWebhookSecret, event("evt_oneoff", "checkout.session.completed", time.Now(), oneOff)).Expect(http.StatusOK)

	// Unknown teams are acknowledged (retries cannot help) and logged.
	for id, ref := range map[string]string{"evt_gone": uuid.NewString(), "evt_garbage": "not-a-team"} {
		r := sendEvent(t, env, testWebhookSecret, event(id, "checkout.session.completed", time.Now(), sessionObject(t, ref, "cus_u", "sub_u"))).
			Expect(http.StatusOK)
		if got := r.String("data.outcome"); got != "unknown_team" {
			t.Fatalf("%s outcome %q, want unknown_team", id, got)
		}
	}
	if addon, _, _ := teamBilling(t, env, ann.TeamID); addon != "none" {
		t.Fatalf("add-on %q, want none", addon)
	}
	if n := env.QueryInt(`SELECT count(*) FROM billing_events WHERE outcome = 'unknown_team' AND team_id IS NULL`); n != 2 {
		t.Fatalf("unknown-team events recorded %d, want 2", n)
	}
	if n := env.QueryInt(`SELECT count(*) FROM billing_events WHERE outcome = 'ignored'`); n != 2 {
		t.Fatalf("ignored events recorded %d, want 2", n)
	}
}

func TestPaymentWebhookAcceptsNewerAPIVersion(t *testing.T) {
	t.Parallel()
	env := newEnv(t, newProvider(t), nil)
	ann := env.Signup("ann")
	ev := event("evt_newer", "checkout.session.completed", time.Now(), sessionObject(t, ann.TeamID, "cus_n", "sub_n"))
	ev["api_version"] = "2025-03-31.basil"
	// Expanded references arrive as objects instead of ids.
	obj := ev["data"].(map[string]any)["object"].(map[string]any)
	obj["customer"] = map[string]any{"id": "cus_n", "object": "customer"}
	sendEvent(t, env, testWebhookSecret, ev).Expect(http.StatusOK)
	if addon, customer, _ := teamBilling(t, env, ann.TeamID); addon != "active" || customer != "cus_n" {
		t.Fatalf("team %s/%s, want active/cus_n", addon, customer)
	}
}

func TestPaymentWebhookLimits(t *testing.T) {
	t.Parallel()
	env := newEnv(t, newProvider(t), nil)
	big := make([]byte, 1<<20+1)
	for i := range big {
		big[i] = ' '
	}
	sendSigned(t, env, testWebhookSecret, big).ExpectError(http.StatusRequestEntityTooLarge, "PAYLOAD_TOO_LARGE")
	// Signed but not an event.
	sendSigned(t, env, testWebhookSecret, []byte(`{"object":"event"}`)).ExpectError(http.StatusBadRequest, "INVALID_INPUT")
	env.Anonymous().Get(webhookPath).ExpectError(http.StatusMethodNotAllowed, "METHOD_NOT_ALLOWED")
}

func TestPaymentWebhookWithoutSecret(t *testing.T) {
	t.Parallel()
	env := newEnv(t, newProvider(t), map[string]string{"STRIPE_WEBHOOK_SECRET": ""})
	ann := env.Signup("ann")
	r := sendEvent(t, env, testWebhookSecret, event("evt_nosecret", "checkout.session.completed", time.Now(), sessionObject(t, ann.TeamID, "c", "s"))).
		ExpectError(http.StatusServiceUnavailable, "SERVICE_UNAVAILABLE")
	if !strings.Contains(r.String("error.message"), "STRIPE_WEBHOOK_SECRET") {
		t.Errorf("message %q should name the missing setting", r.String("error.message"))
	}
}

// TestBillingFullPath: a team on the trial cannot run campaigns; checkout
// through the API, the provider's signed checkout.session.completed for
// that very session, and the team has the paid add-on and runs them. A
// second checkout is refused, and after cancellation a new checkout
// reuses the provider customer.
func TestBillingFullPath(t *testing.T) {
	t.Parallel()
	p := newProvider(t)
	env := newEnv(t, p, nil)
	owner := env.Signup("olga")
	admin := env.Join(owner, "adam", "admin")
	book := owner.CreateBook("Leads")

	owner.Post("/api/teams/"+owner.TeamID+"/addons/campaigns/trial", nil).Expect(http.StatusOK)
	ob := owner.InBook(book)
	campaign := ob.Post("/api/campaigns", map[string]any{"name": "Welcome"}).Expect(http.StatusOK).String("data.id")
	ob.Patch("/api/campaigns/"+campaign, map[string]any{"status": "active"}).Expect(http.StatusOK)
	ob.Post("/api/campaigns/"+campaign+"/run", nil).ExpectError(http.StatusForbidden, "ADDON_REQUIRED")

	admin.InBook(book).Post(checkoutPath, checkoutBody("monthly", "eur")).Expect(http.StatusOK)
	sent := p.Calls()[0].Form
	teamRef := sent.Get("client_reference_id")

	// The provider completes the session it was asked for.
	cs := sessionObject(t, teamRef, "cus_full", "sub_full")
	cs["metadata"] = map[string]any{"team_id": sent.Get("metadata[team_id]"), "plan": sent.Get("metadata[plan]")}
	sendEvent(t, env, testWebhookSecret, event("evt_full", "checkout.session.completed", time.Now(), cs)).Expect(http.StatusOK)

	r := owner.Get("/api/teams/" + owner.TeamID).Expect(http.StatusOK)
	if got := r.String("data.campaign_addon"); got != "active" {
		t.Fatalf("campaign_addon %q, want active", got)
	}
	addon, err := env.App.Accounts.Addon(context.Background(), uuid.MustParse(owner.TeamID))
	if err != nil || !addon.Paid() {
		t.Fatalf("Addon = %+v, %v: campaigns may not run", addon, err)
	}
	ob.Post("/api/campaigns/"+campaign+"/run", nil).Expect(http.StatusOK)

	// Paying twice is refused.
	admin.InBook(book).Post(checkoutPath, checkoutBody("yearly", "eur")).ExpectError(http.StatusConflict, "CONFLICT")

	sendEvent(t, env, testWebhookSecret, event("evt_full_end", "customer.subscription.deleted", time.Now().Add(time.Second),
		subscriptionObject(t, owner.TeamID, "sub_full", "cus_full", "canceled"))).Expect(http.StatusOK)
	if got := owner.Get("/api/teams/" + owner.TeamID).Expect(http.StatusOK).String("data.campaign_addon"); got != "canceled" {
		t.Fatalf("campaign_addon %q after cancellation, want canceled", got)
	}
	owner.Post(checkoutPath, checkoutBody("yearly", "eur")).Expect(http.StatusOK)
	calls := p.Calls()
	last := calls[len(calls)-1]
	if got := last.Form.Get("customer"); got != "cus_full" || last.Status != http.StatusOK {
		t.Fatalf("second checkout customer %q (stripe-mock %d), want cus_full", got, last.Status)
	}
}
