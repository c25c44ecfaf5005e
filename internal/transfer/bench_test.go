package transfer_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/contactbook/contactbook/internal/apptest"
)

// peakMemory samples the process while fn runs: the peak of the Go heap
// in use, and the peak resident set (VmHWM, reset before fn). The service
// runs in this process, so the figures are the service's (the benchmark's
// own client streams and keeps nothing).
func peakMemory(b *testing.B, fn func()) (heapMB, rssMB float64) {
	runtime.GC()
	// Writing 5 to clear_refs resets VmHWM to the current RSS.
	_ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	var peak atomic.Uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			metrics.Read(sample)
			if v := sample[0].Value.Uint64(); v > peak.Load() {
				peak.Store(v)
			}
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	})
	fn()
	close(stop)
	wg.Wait()
	return float64(peak.Load()) / (1 << 20), vmHWM() / 1024
}

// vmHWM is the peak resident set of the process in kB.
func vmHWM() float64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if rest, ok := strings.CutPrefix(s.Text(), "VmHWM:"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 64)
			return kb
		}
	}
	return 0
}

// queueStreamed starts an import as a client sending the file from where
// it lies: the multipart head and tail around it, with its length, so the
// figures are the service's and not a copy the client made.
func queueStreamed(b *testing.B, url, token, book string, file []byte, mode string) uuid.UUID {
	var head bytes.Buffer
	w := multipart.NewWriter(&head)
	if err := w.WriteField("mode", mode); err != nil {
		b.Fatal(err)
	}
	if _, err := w.CreateFormFile("file", "contacts.csv"); err != nil {
		b.Fatal(err)
	}
	tail := "\r\n--" + w.Boundary() + "--\r\n"
	body := io.MultiReader(bytes.NewReader(head.Bytes()), bytes.NewReader(file), strings.NewReader(tail))
	req, err := http.NewRequest(http.MethodPost, url+"/api/books/"+book+"/imports", body)
	if err != nil {
		b.Fatal(err)
	}
	req.ContentLength = int64(head.Len() + len(file) + len(tail))
	req.Header.Set("Content-Type", w.FormDataContentType())
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer res.Body.Close()
	var out struct {
		Data struct {
			ID uuid.UUID `json:"id"`
		} `json:"data"`
	}
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil || res.StatusCode != http.StatusAccepted {
		b.Fatalf("import: %d, %v", res.StatusCode, err)
	}
	return out.Data.ID
}

// BenchmarkTransfer100k imports 100,000 CSV rows of new contacts into a
// book whose team has a webhook subscribed to the contact events (every
// contact.created written), imports the same file again in update mode
// (100,000 contact.updated), and exports the book as CSV and as vCard,
// each through the HTTP API; each reports its peak heap and RSS.
func BenchmarkTransfer100k(b *testing.B) {
	env := apptest.Setup(b, apptest.Options{Bare: true, RealClock: true}).Env
	u := env.Signup("bench")
	u.Post("/api/teams/"+u.TeamID+"/webhooks", map[string]any{
		"url": "http://127.0.0.1:9/hook", "events": []string{"contact.created", "contact.updated"},
	}).Expect(http.StatusCreated)
	file := peopleCSV(0, 100000)
	var book string
	importFile := func(b *testing.B, mode string, want string) {
		id := queueStreamed(b, env.URL, u.Token, book, file, mode)
		env.WaitJobs()
		r := u.Get("/api/books/" + book + "/imports/" + id.String()).Expect(http.StatusOK)
		if r.String("data.status") != "succeeded" || r.Int("data."+want) != 100000 {
			b.Fatalf("import: %.300s", r.Body)
		}
	}
	run := func(name string, setup func(), fn func(b *testing.B)) {
		b.Run(name, func(b *testing.B) {
			env.T = b
			var heap, rss float64
			for b.Loop() {
				b.StopTimer()
				if setup != nil {
					setup()
				}
				b.StartTimer()
				heap, rss = peakMemory(b, func() { fn(b) })
			}
			b.ReportMetric(heap, "peak-heap-MB")
			b.ReportMetric(rss, "peak-RSS-MB")
		})
	}
	run("ImportCSVNew", func() { book = u.CreateBook("Import") }, func(b *testing.B) { importFile(b, "skip", "created") })
	run("ImportCSVUpdate", nil, func(b *testing.B) { importFile(b, "update", "updated") })
	for _, format := range []string{"csv", "vcard"} {
		run("Export"+strings.ToUpper(format), nil, func(b *testing.B) {
			req, _ := http.NewRequest(http.MethodGet, env.URL+"/api/books/"+book+"/export?format="+format, nil)
			req.Header.Set("Authorization", "Bearer "+u.Token)
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			defer res.Body.Close()
			n, err := io.Copy(io.Discard, res.Body)
			if err != nil || res.StatusCode != http.StatusOK || n < 100000*50 {
				b.Fatalf("export: %d, %d bytes, %v", res.StatusCode, n, err)
			}
		})
	}
}
