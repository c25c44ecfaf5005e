package httpapi_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/contactbook/contactbook/internal/apptest"
)

func TestWebhookOperationsRolesAndValidation(t *testing.T) {
	t.Parallel()
	env := apptest.Setup(t, apptest.Options{Bare: true}).Env
	owner := env.Signup("ann")
	adminUser := env.Join(owner, "adam", "admin")
	member := env.Join(owner, "mia", "member")
	stranger := env.Signup("olga")
	id := owner.Post(webhooksPath(owner.TeamID), map[string]any{"url": "https://hooks.example.com/", "events": []string{"book.created"}}).
		Expect(http.StatusCreated).String("data.webhook.id")
	one := webhooksPath(owner.TeamID, "/", id)
	since := map[string]any{"since": env.Clock.Now().Add(-time.Hour).Format(time.RFC3339)}

	delivery := adminUser.Post(one+"/test", nil).Expect(http.StatusAccepted).String("data.delivery_id")
	adminUser.Post(one+"/recover", since).Expect(http.StatusAccepted)
	for _, u := range []*apptest.User{member, stranger} {
		status, code := http.StatusForbidden, "FORBIDDEN"
		if u == stranger {
			status, code = http.StatusNotFound, "NOT_FOUND"
		}
		u.Post(one+"/test", nil).ExpectError(status, code)
		u.Post(one+"/deliveries/"+delivery+"/retry", nil).ExpectError(status, code)
		u.Post(one+"/recover", since).ExpectError(status, code)
	}
	// A delivery whose attempt is under way cannot be retried until it ends.
	env.QueryInt(`UPDATE webhook_deliveries SET lease_owner = 'elsewhere', lease_until = $2 WHERE id = $1 RETURNING 0`,
		delivery, env.Clock.Now().Add(time.Minute))
	owner.Post(one+"/deliveries/"+delivery+"/retry", nil).ExpectError(http.StatusConflict, "CONFLICT")
	owner.Post(one+"/deliveries/not-a-uuid/retry", nil).ExpectError(http.StatusNotFound, "NOT_FOUND")

	for _, body := range []any{map[string]any{}, map[string]any{"since": "yesterday"},
		map[string]any{"since": env.Clock.Now().Add(-31 * 24 * time.Hour).Format(time.RFC3339)}} {
		owner.Post(one+"/recover", body).ExpectError(http.StatusBadRequest, "INVALID_INPUT")
	}
	// A switched-off webhook is recovered too (what it queues waits for the
	// webhook to be switched on).
	owner.Patch(one, map[string]any{"active": false}).Expect(http.StatusOK)
	if q := owner.Post(one+"/recover", since).Expect(http.StatusAccepted).Int("data.queued"); q != 0 {
		t.Errorf("a webhook that never failed: queued %d", q)
	}

	for _, q := range []string{"?event=nope", "?since=monday", "?cursor=!!!", "?cursor=bm90IGEgY3Vyc29y", "?success=maybe"} {
		owner.Get(one+"/deliveries"+q).ExpectError(http.StatusBadRequest, "INVALID_INPUT")
	}
	for _, body := range []any{map[string]any{"rate_limit": 0}, map[string]any{"rate_limit": 1001}} {
		owner.Patch(one, body).ExpectError(http.StatusBadRequest, "INVALID_INPUT")
		owner.Post(webhooksPath(owner.TeamID), map[string]any{"url": "https://hooks.example.com/", "events": []string{"book.created"},
			"rate_limit": body.(map[string]any)["rate_limit"]}).ExpectError(http.StatusBadRequest, "INVALID_INPUT")
	}
}

func TestWebhookDeliveryLogFiltersAndCursor(t *testing.T) {
	t.Parallel()
	env := apptest.Setup(t, apptest.Options{Bare: true}).Env
	owner := env.Signup("ann")
	id := owner.Post(webhooksPath(owner.TeamID), map[string]any{"url": "https://hooks.example.com/", "events": []string{"book.created"}}).
		Expect(http.StatusCreated).String("data.webhook.id")
	// A log written directly: 25 attempts a minute apart, every third a
	// failure, the last five of book.deleted.
	start := env.Clock.Now()
	for i := range 25 {
		typ := "book.created"
		if i >= 20 {
			typ = "book.deleted"
		}
		env.QueryInt(`
			WITH e AS (INSERT INTO events (team_id, type, body, occurred_at) VALUES ($1, $2, '{}', $3) RETURNING id)
			INSERT INTO webhook_attempts (delivery_id, webhook_id, event_id, event_type, attempt, response_status, duration_ms, success, created_at)
			SELECT gen_random_uuid(), $4, e.id, $2, 1, 200, 5, $5, $3 FROM e RETURNING 0`,
			owner.TeamID, typ, start.Add(time.Duration(i)*time.Minute), id, i%3 != 0)
	}
	path := webhooksPath(owner.TeamID, "/", id, "/deliveries")
	// Walk the whole log by cursor, 7 at a time: newest first, each once.
	var seen []string
	next := ""
	for page := 0; ; page++ {
		r := owner.Get(path + "?limit=7" + next).Expect(http.StatusOK)
		for i := range r.Len("data") {
			seen = append(seen, r.String(fmt.Sprintf("data.%d.created_at", i)))
		}
		if r.Int("meta.limit") != 7 {
			t.Errorf("meta.limit = %d", r.Int("meta.limit"))
		}
		if r.Value("meta.next_cursor") == nil {
			break
		}
		next = "&cursor=" + r.String("meta.next_cursor")
		if page > 5 {
			t.Fatal("the cursor does not end")
		}
	}
	if len(seen) != 25 || seen[0] != start.Add(24*time.Minute).Format(time.RFC3339) || seen[24] != start.Format(time.RFC3339) {
		t.Fatalf("walked %d entries: %v", len(seen), seen)
	}
	for i := 1; i < len(seen); i++ {
		if seen[i] >= seen[i-1] {
			t.Fatalf("entry %d (%s) is not older than the one before (%s)", i, seen[i], seen[i-1])
		}
	}
	for q, want := range map[string]int{
		"?event=book.deleted": 5, "?success=false": 9, "?success=false&event=book.deleted": 2,
		"?since=" + start.Add(20*time.Minute).Format(time.RFC3339): 5, "?event=webhook.test": 0,
	} {
		r := owner.Get(path + q).Expect(http.StatusOK)
		if r.Len("data") != want || r.Value("meta.next_cursor") != nil {
			t.Errorf("%s: %d entries, want %d", q, r.Len("data"), want)
		}
	}
}
