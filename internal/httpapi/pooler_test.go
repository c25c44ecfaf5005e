package httpapi_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/contactbook/contactbook/internal/apptest"
	"github.com/contactbook/contactbook/internal/postgres/pgbouncertest"
	"github.com/contactbook/contactbook/internal/postgres/pgtest"
)

// setupThroughPgBouncer starts the service with DATABASE_URL on a
// PgBouncer in transaction mode (3 server connections for the service's 8,
// so requests keep changing server sessions) and DATABASE_DIRECT_URL on
// PostgreSQL itself.
func setupThroughPgBouncer(t *testing.T, env map[string]string) *apptest.Team {
	t.Helper()
	dbURL := pgtest.Setup(t).URL
	bouncer := pgbouncertest.Start(t, dbURL, pgbouncertest.Options{PoolSize: 3})
	vars := map[string]string{
		"DATABASE_URL": bouncer.URL(dbURL), "DATABASE_DIRECT_URL": dbURL, "DATABASE_POOL_MODE": "transaction",
	}
	for k, v := range env {
		vars[k] = v
	}
	return apptest.Setup(t, apptest.Options{DatabaseURL: dbURL, Env: vars, RealClock: true})
}

// The service's flows through PgBouncer 1.18 in transaction mode: sign-up
// and the team's setup (in setupThroughPgBouncer), books, contacts, a bulk
// change, an import and a campaign run (jobs the queue finds by polling),
// an image upload, and a webhook delivery (the engine listening on the
// direct connection).
func TestFlowsThroughPgBouncerTransactionMode(t *testing.T) {
	t.Parallel()
	var (
		mu  sync.Mutex
		got []string
	)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, string(body))
		mu.Unlock()
	}))
	t.Cleanup(hook.Close)
	tm := setupThroughPgBouncer(t, nil)
	env := tm.Env
	tm.Owner.NewWebhook(hook.URL, "contact.created")
	ctx, stop := context.WithCancel(context.Background())
	engineDone := make(chan struct{})
	go func() { defer close(engineDone); _ = env.App.WebhookEngine.Run(ctx) }()
	t.Cleanup(func() { stop(); <-engineDone })

	book := tm.Owner.CreateBook("Second")
	tm.Owner.InBook(book).Get("/api/contacts").Expect(http.StatusOK)
	ids := tm.Key.NewContacts("pool", 5)
	label := tm.O.Post("/api/books/"+tm.Book+"/labels", map[string]any{"name": "Pooled"}).Expect(http.StatusCreated).String("data.id")
	tm.Key.Post("/api/v1/contacts/bulk-add-label", map[string]any{"contact_ids": ids, "label_id": label}).Expect(http.StatusOK)
	if n := tm.Key.Get("/api/v1/contacts?label_id=" + label).Expect(http.StatusOK).Len("data"); n != 5 {
		t.Fatalf("%d contacts carry the label, want 5", n)
	}
	tm.Key.Patch("/api/v1/contacts/"+ids[0], map[string]any{"job_title": "Pooled"}).Expect(http.StatusOK)

	imp := tm.Owner.Post("/api/books/"+tm.Book+"/imports",
		apptest.ImportForm(t, []byte("first_name,email\r\nAda,ada@example.com\r\nGrace,grace@example.com\r\n"), nil)).
		Expect(http.StatusAccepted).String("data.id")
	env.WaitJobs()
	if r := tm.Owner.Get("/api/books/" + tm.Book + "/imports/" + imp).Expect(http.StatusOK); r.String("data.status") != "succeeded" || r.Int("data.created") != 2 {
		t.Fatalf("import: %s", r.Body)
	}

	tm.O.Put("/api/campaign-settings", map[string]any{
		"sender_name": "Acme News", "sender_email": "news@acme.example", "reply_to_email": "help@acme.example",
		"company_name": "Acme Inc.", "address_line1": "1 Main St", "city": "Springfield", "state": "IL",
		"postal_code": "62701", "country": "USA", "mailer_api_key": "SG.test-key-0123456789",
	}).Expect(http.StatusOK)
	cid := tm.Key.NewEmailCampaign("Pooled", tm.Key.NewTemplate("Hello"))
	tm.Key.Enroll(cid, ids...)
	tm.O.Post("/api/campaigns/"+cid+"/run", nil).Expect(http.StatusOK)
	env.WaitJobs()
	if n := tm.Mail.RecipientCount(); n != len(ids) {
		t.Fatalf("the run sent %d emails, want %d", n, len(ids))
	}
	if r := tm.O.Get("/api/campaigns/" + cid + "/stats").Expect(http.StatusOK); r.Int("data.summary.completed_count") != len(ids) {
		t.Fatalf("stats: %s", r.Body)
	}

	url := uploadImage(t, tm.O, "image", "logo.png", apptest.PNG()).Expect(http.StatusOK).String("data.url")
	if res, body := getImage(t, env.URL, url[strings.LastIndex(url, "/images/"):]); res.StatusCode != http.StatusOK || string(body) != string(apptest.PNG()) {
		t.Fatalf("the uploaded image: %d", res.StatusCode)
	}

	// 7 contacts were created (5 through the API, 2 by the import).
	deadline := time.Now().Add(15 * time.Second)
	for {
		mu.Lock()
		n := len(got)
		mu.Unlock()
		if n >= 7 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d contact.created deliveries after 15 s, want 7", n)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
