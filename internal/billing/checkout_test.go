package billing_test

import (
	"net/http"
	"strings"
	"testing"
)

func TestCheckoutCreatesSubscriptionSession(t *testing.T) {
	t.Parallel()
	p := newProvider(t)
	env := newEnv(t, p, map[string]string{"STRIPE_PRICE_YEARLY_EUR": "price_test_yearly_eur"})
	ann := env.Signup("ann")

	// Ann has one team: the body need not name it.
	r := ann.Post(checkoutPath, checkoutBody("yearly", "eur")).Expect(http.StatusOK)
	if u := r.String("data.url"); !strings.HasPrefix(u, "https://checkout.stripe.com/") {
		t.Fatalf("url = %q, want a checkout address", u)
	}

	calls := p.Calls()
	if len(calls) != 1 {
		t.Fatalf("provider got %d calls, want 1", len(calls))
	}
	c := calls[0]
	if c.Method != http.MethodPost || c.Path != "/v1/checkout/sessions" {
		t.Fatalf("provider call %s %s", c.Method, c.Path)
	}
	// stripe-mock validates the request against the provider's OpenAPI
	// spec: 200 means every parameter exists and is well-formed.
	if c.Status != http.StatusOK {
		t.Fatalf("stripe-mock answered %d", c.Status)
	}
	if got := c.Header.Get("Authorization"); got != "Bearer "+testSecretKey {
		t.Errorf("Authorization = %q", got)
	}
	want := map[string]string{
		"mode":                                 "subscription",
		"line_items[0][price]":                 "price_test_yearly_eur",
		"line_items[0][quantity]":              "1",
		"client_reference_id":                  ann.TeamID,
		"metadata[team_id]":                    ann.TeamID,
		"metadata[plan]":                       "yearly",
		"subscription_data[metadata][team_id]": ann.TeamID,
		"success_url":                          testPublicBase + "/billing/success?session_id={CHECKOUT_SESSION_ID}",
		"cancel_url":                           testPublicBase + "/billing/cancel",
	}
	for k, v := range want {
		if got := c.Form.Get(k); got != v {
			t.Errorf("form %s = %q, want %q", k, got, v)
		}
	}
	if c.Form.Has("customer") {
		t.Errorf("a team that never paid has no customer to reuse, got %q", c.Form.Get("customer"))
	}
	// Starting a checkout changes nothing yet.
	if addon, _, _ := teamBilling(t, env, ann.TeamID); addon != "none" {
		t.Fatalf("add-on %q after checkout start, want none", addon)
	}
}

func TestCheckoutRoles(t *testing.T) {
	t.Parallel()
	p := newProvider(t)
	env := newEnv(t, p, nil)
	owner := env.Signup("olga")
	admin := env.Join(owner, "adam", "admin")
	member := env.Join(owner, "mia", "member")
	viewer := env.Join(owner, "vic", "viewer")
	book := owner.CreateBook("Clients")

	viewer.InBook(book).Post(checkoutPath, checkoutBody("monthly", "usd")).ExpectError(http.StatusForbidden, "FORBIDDEN")
	member.Post(checkoutPath, map[string]any{"plan": "monthly", "currency": "usd", "team_id": owner.TeamID}).
		ExpectError(http.StatusForbidden, "FORBIDDEN")
	if n := len(p.Calls()); n != 0 {
		t.Fatalf("refused requests reached the provider %d times", n)
	}

	admin.InBook(book).Post(checkoutPath, checkoutBody("monthly", "gbp")).Expect(http.StatusOK)
	owner.Post(checkoutPath+"?team_id="+owner.TeamID, checkoutBody("yearly", "usd")).Expect(http.StatusOK)
	calls := p.Calls()
	if len(calls) != 2 {
		t.Fatalf("provider got %d calls, want 2", len(calls))
	}
	for i, wantPrice := range []string{"price_campaigns_monthly_gbp", "price_campaigns_yearly_usd"} {
		if got := calls[i].Form.Get("line_items[0][price]"); got != wantPrice {
			t.Errorf("call %d price %q, want %q", i, got, wantPrice)
		}
		if got := calls[i].Form.Get("client_reference_id"); got != owner.TeamID {
			t.Errorf("call %d team %q, want %q", i, got, owner.TeamID)
		}
	}
}

func TestCheckoutOtherTeam(t *testing.T) {
	t.Parallel()
	p := newProvider(t)
	env := newEnv(t, p, nil)
	alice := env.Signup("alice")
	bob := env.Signup("bob")
	aliceBook := alice.CreateBook("Alice's book")

	// A team addressed by id is not revealed to outsiders; a book in
	// X-Book-ID of another team is FORBIDDEN, as everywhere.
	bob.Post(checkoutPath, map[string]any{"plan": "monthly", "currency": "usd", "team_id": alice.TeamID}).
		ExpectError(http.StatusNotFound, "NOT_FOUND")
	bob.Post(checkoutPath+"?team_id="+alice.TeamID, checkoutBody("monthly", "usd")).
		ExpectError(http.StatusNotFound, "NOT_FOUND")
	bob.InBook(aliceBook).Post(checkoutPath, checkoutBody("monthly", "usd")).
		ExpectError(http.StatusForbidden, "FORBIDDEN")
	// Naming two different teams is a mistake, not a choice.
	alice.InBook(aliceBook).Post(checkoutPath, map[string]any{"plan": "monthly", "currency": "usd", "team_id": bob.TeamID}).
		ExpectError(http.StatusBadRequest, "INVALID_INPUT")
	if n := len(p.Calls()); n != 0 {
		t.Fatalf("refused requests reached the provider %d times", n)
	}
}

func TestCheckoutBadInput(t *testing.T) {
	t.Parallel()
	p := newProvider(t)
	env := newEnv(t, p, nil)
	ann := env.Signup("ann")

	r := ann.Post(checkoutPath, checkoutBody("weekly", "usd")).ExpectError(http.StatusBadRequest, "INVALID_INPUT")
	if msg := r.String("error.message"); !strings.Contains(msg, "plan") || !strings.Contains(msg, "monthly, yearly") {
		t.Errorf("message %q should name plan and its values", msg)
	}
	r = ann.Post(checkoutPath, checkoutBody("monthly", "USD")).ExpectError(http.StatusBadRequest, "INVALID_INPUT")
	if msg := r.String("error.message"); !strings.Contains(msg, "currency") || !strings.Contains(msg, "usd, eur, gbp") {
		t.Errorf("message %q should name currency and its values", msg)
	}
	r = ann.Post(checkoutPath, map[string]any{"currency": "usd"}).ExpectError(http.StatusBadRequest, "INVALID_INPUT")
	if msg := r.String("error.message"); !strings.Contains(msg, "plan") {
		t.Errorf("message %q should name the missing plan", msg)
	}
	ann.Post(checkoutPath, map[string]any{"plan": 12, "currency": "usd"}).ExpectError(http.StatusBadRequest, "INVALID_INPUT")
	if n := len(p.Calls()); n != 0 {
		t.Fatalf("invalid requests reached the provider %d times", n)
	}
}

func TestCheckoutNeedsTeamWhenUserHasSeveral(t *testing.T) {
	t.Parallel()
	p := newProvider(t)
	env := newEnv(t, p, nil)
	ann := env.Signup("ann")
	other := env.Signup("otto")
	env.Join(other, "x", "viewer") // other team exists with members
	env.AddMember(other, ann, "admin")

	r := ann.Post(checkoutPath, checkoutBody("monthly", "usd")).ExpectError(http.StatusBadRequest, "INVALID_INPUT")
	if !strings.Contains(r.String("error.message"), "team_id") {
		t.Errorf("message %q should ask for team_id", r.String("error.message"))
	}
	ann.Post(checkoutPath, map[string]any{"plan": "monthly", "currency": "usd", "team_id": other.TeamID}).Expect(http.StatusOK)
	if got := p.Calls()[0].Form.Get("client_reference_id"); got != other.TeamID {
		t.Fatalf("checkout for team %q, want %q", got, other.TeamID)
	}
}

func TestCheckoutWithoutStripeKey(t *testing.T) {
	t.Parallel()
	// That serve says so at start-up is internal/app's TestServe.
	env := newEnv(t, nil, nil)
	ann := env.Signup("ann")
	r := ann.Post(checkoutPath, checkoutBody("monthly", "usd")).ExpectError(http.StatusServiceUnavailable, "SERVICE_UNAVAILABLE")
	if msg := r.String("error.message"); !strings.Contains(msg, "not configured") {
		t.Errorf("message %q should say billing is not configured", msg)
	}
	// Roles and input are still checked first.
	ann.Post(checkoutPath, checkoutBody("daily", "usd")).ExpectError(http.StatusBadRequest, "INVALID_INPUT")
}

func TestCheckoutRateLimit(t *testing.T) {
	t.Parallel()
	p := newProvider(t)
	env := newEnv(t, p, nil)
	ann := env.Signup("ann")
	bob := env.Signup("bob")

	for range 5 {
		ann.Post(checkoutPath, checkoutBody("monthly", "usd")).Expect(http.StatusOK)
	}
	r := ann.Post(checkoutPath, checkoutBody("monthly", "usd")).ExpectError(http.StatusTooManyRequests, "RATE_LIMITED")
	if ra := r.Header.Get("Retry-After"); ra != "60" {
		t.Errorf("Retry-After = %q, want 60", ra)
	}
	// The limit is per IP, not per user; and without TRUST_PROXY a
	// forwarding header the client writes itself changes nothing.
	bob.Post(checkoutPath, checkoutBody("monthly", "usd"), "X-Forwarded-For", "198.51.100.7", "X-Real-IP", "198.51.100.7").
		ExpectError(http.StatusTooManyRequests, "RATE_LIMITED")
	if n := len(p.Calls()); n != 5 {
		t.Fatalf("provider got %d calls, want 5", n)
	}
	// Other endpoints are not limited.
	ann.Get("/api/me").Expect(http.StatusOK)
}

func TestCheckoutRateLimitBehindProxy(t *testing.T) {
	t.Parallel()
	p := newProvider(t)
	env := newEnv(t, p, map[string]string{"TRUST_PROXY": "true"})
	ann := env.Signup("ann")

	// The test client plays the proxy: it appends the client's address.
	for range 5 {
		ann.Post(checkoutPath, checkoutBody("monthly", "usd"), "X-Forwarded-For", "203.0.113.1").Expect(http.StatusOK)
	}
	ann.Post(checkoutPath, checkoutBody("monthly", "usd"), "X-Forwarded-For", "203.0.113.1").
		ExpectError(http.StatusTooManyRequests, "RATE_LIMITED")
	// A client cannot escape its bucket by writing its own X-Forwarded-For
	// entry (left of the proxy's) or X-Real-IP.
	ann.Post(checkoutPath, checkoutBody("monthly", "usd"), "X-Forwarded-For", "198.51.100.9, 203.0.113.1", "X-Real-IP", "198.51.100.9").
		ExpectError(http.StatusTooManyRequests, "RATE_LIMITED")
	// Another client behind the same proxy has its own bucket.
	ann.Post(checkoutPath, checkoutBody("monthly", "usd"), "X-Forwarded-For", "203.0.113.2").Expect(http.StatusOK)
}
