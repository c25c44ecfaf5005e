package httpapi_test

import (
	"fmt"
	"net/http"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/contactbook/contactbook/internal/apptest"
)

// benchOptions are the benchmarks' service: real time, one owner, and no
// per-key request limit (16 clients of one key far outrun a client's
// per-minute allowance on purpose; the limit has tests of its own).
var benchOptions = apptest.Options{OwnerOnly: true, RealClock: true, Env: map[string]string{"API_KEY_RATE_LIMIT": "0"}}

// benchSize is the size of a burst: TX_BENCH_N, default def (a small value
// checks the benchmark runs; make bench uses the default).
func benchSize(def int) int {
	if n, err := strconv.Atoi(os.Getenv("TX_BENCH_N")); err == nil && n > 0 {
		return n
	}
	return def
}

// burst runs n calls of do on clients goroutines and returns the elapsed time.
func burst(n, clients int, do func(i int)) time.Duration {
	var next atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1)) - 1; i < n; i = int(next.Add(1)) - 1 {
				do(i)
			}
		}()
	}
	wg.Wait()
	return time.Since(start)
}

// BenchmarkTransactional: 16 clients send a burst of transactional emails
// (accepted/s) while the sending loop works; the time from acceptance to
// the provider's answer (sent_at - created_at, median and p99) is read
// back once every message is sent.
func BenchmarkTransactional(b *testing.B) {
	c := apptest.Setup(b, benchOptions)
	c.O.ConfigureEmail()
	tpl := c.Key.NewTemplateWith("Receipt", "Receipt {{data.order}}", "<p>Thanks {{first_name}}, order {{data.order}}</p>")
	n := benchSize(5000)
	b.ResetTimer()
	for range b.N {
		c.Env.App.Pool.Exec(b.Context(), `DELETE FROM transactional_messages`)
		took := burst(n, 16, func(i int) {
			c.Key.Post("/api/v1/transactional", map[string]any{"template_id": tpl, "to": map[string]any{"email": fmt.Sprintf("r%d@example.com", i)},
				"data": map[string]any{"order": i}}).Expect(http.StatusAccepted)
		})
		b.ReportMetric(float64(n)/took.Seconds(), "accepted/s")
		for deadline := time.Now().Add(5 * time.Minute); c.Env.QueryInt(`SELECT count(*) FROM transactional_messages WHERE status = 'queued'`) > 0; {
			if time.Now().After(deadline) {
				b.Fatal("messages still queued after 5 minutes")
			}
			time.Sleep(20 * time.Millisecond)
		}
		rows, err := c.Env.App.Pool.Query(b.Context(), `SELECT extract(epoch FROM sent_at - created_at) * 1000 FROM transactional_messages WHERE status = 'sent'`)
		if err != nil {
			b.Fatal(err)
		}
		var ms []float64
		for rows.Next() {
			var v float64
			_ = rows.Scan(&v)
			ms = append(ms, v)
		}
		if len(ms) != n {
			b.Fatalf("%d of %d sent", len(ms), n)
		}
		slices.Sort(ms)
		b.ReportMetric(ms[len(ms)/2], "median-ms-to-provider")
		b.ReportMetric(ms[len(ms)*99/100], "p99-ms-to-provider")
	}
}

// BenchmarkEventIngest: 16 clients report events of existing contacts.
func BenchmarkEventIngest(b *testing.B) {
	c := apptest.Setup(b, benchOptions)
	ids := c.Env.SeedContacts(c.Book, 1000)
	n := benchSize(10000)
	b.ResetTimer()
	for range b.N {
		took := burst(n, 16, func(i int) {
			c.Key.Post("/api/v1/events", map[string]any{"name": "order.paid", "contact": map[string]any{"id": ids[i%len(ids)]},
				"properties": map[string]any{"order": i}}).Expect(http.StatusAccepted)
		})
		b.ReportMetric(float64(n)/took.Seconds(), "events/s")
	}
}

// BenchmarkEventEntry: the time from an event to the provider's receipt
// of the first email of the campaign it enters (median of events sent one
// after another, each for a new contact).
func BenchmarkEventEntry(b *testing.B) {
	c := apptest.Setup(b, benchOptions)
	c.O.ConfigureEmail()
	tpl := c.Key.NewTemplateWith("Welcome", "Welcome to {{event.plan}}", "<p>Hi {{first_name}}</p>")
	camp := c.Key.Post("/api/v1/campaigns", map[string]any{"name": "On paid", "entry_event": "order.paid"}).Expect(http.StatusOK).String("data.id")
	c.Key.NewEmailStep(camp, tpl, nil)
	c.Key.Patch("/api/v1/campaigns/"+camp, map[string]any{"status": "active"}).Expect(http.StatusOK)
	n := benchSize(20)
	ids := c.Env.SeedContacts(c.Book, n*b.N)
	b.ResetTimer()
	var ms []float64
	for i := range n * b.N {
		before := c.Mail.RecipientCount()
		start := time.Now()
		c.Key.Post("/api/v1/events", map[string]any{"name": "order.paid", "contact": map[string]any{"id": ids[i]}, "properties": map[string]any{"plan": "Pro"}}).
			Expect(http.StatusAccepted)
		for c.Mail.RecipientCount() == before {
			if time.Since(start) > time.Minute {
				b.Fatal("no email a minute after the event")
			}
			time.Sleep(5 * time.Millisecond)
		}
		ms = append(ms, float64(time.Since(start).Microseconds())/1000)
	}
	slices.Sort(ms)
	b.ReportMetric(ms[len(ms)/2], "median-ms-to-first-email")
}
