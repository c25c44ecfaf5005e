package httpapi_test

import (
	"bytes"
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/contactbook/contactbook/internal/apptest"
	"github.com/contactbook/contactbook/internal/mailer/mailertest"
)

// BenchmarkFormSubmissions posts JSON submissions of a double opt-in form
// over HTTP from many client addresses at once (each from its own IP, as
// the per-IP limit wants), then waits for every confirmation email: it
// reports submissions per second at the endpoint and checks that each
// queued email went out exactly once.
func BenchmarkFormSubmissions(b *testing.B) {
	mail := mailertest.NewServer(b)
	env := apptest.Setup(b, apptest.Options{Bare: true, Env: map[string]string{"MAILER_BASE_URL": mail.URL, "TRUST_PROXY": "true", "DB_MAX_CONNS": "20"}}).Env
	owner := env.Signup("owner")
	owner.SetAddon("active") // email settings come with the Campaigns add-on
	book := owner.CreateBook("Signups")
	ob := owner.InBook(book)
	ob.Put("/api/campaign-settings", map[string]any{"sender_email": "news@acme.example", "company_name": "Acme", "mailer_api_key": apptest.MailerKey}).Expect(http.StatusOK)
	form := ob.Post("/api/forms", map[string]any{"name": "Newsletter", "fields": []map[string]any{{"key": "first_name"}}}).Expect(http.StatusCreated).String("data.id")
	url := env.URL + "/api/forms/" + form + "/submissions"
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	var n atomic.Int64
	b.SetParallelism(8)
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := n.Add(1)
			body := fmt.Sprintf(`{"email":"person%d@example.com","first_name":"P%d"}`, i, i)
			req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader([]byte(body)))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("X-Forwarded-For", fmt.Sprintf("10.%d.%d.%d", i>>16&255, i>>8&255, i&255))
			res, err := client.Do(req)
			if err != nil {
				b.Error(err)
				return
			}
			res.Body.Close()
			if res.StatusCode != http.StatusAccepted {
				b.Errorf("submission %d: %d", i, res.StatusCode)
				return
			}
		}
	})
	elapsed := time.Since(start)
	b.StopTimer()
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "submissions/s")
	env.WaitJobs()
	if got := mail.RecipientCount(); got != b.N {
		b.Fatalf("%d confirmation emails for %d submissions", got, b.N)
	}
}
