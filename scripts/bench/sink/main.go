// Command sink is the receiver of the load scripts in scripts/bench: the
// webhook receiver, answering 204 to every request, so a benchmark with a
// subscribed webhook measures the service's delivery work and not a slow
// receiver; and a stand-in for the email provider's send endpoint
// (POST /v3/mail/send, answered 202 with an X-Message-Id as SendGrid
// answers), counting the recipients of every batch. GET /count answers
// the recipients received so far and the time of the last batch, so a
// script can tell when a campaign's last email arrived. It prints how many
// requests it got when stopped.
//
//	go run ./scripts/bench/sink -addr 127.0.0.1:18098
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:18098", "address to listen on")
	flag.Parse()
	var got, recipients, lastBatch, batches atomic.Int64
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v3/mail/send", func(w http.ResponseWriter, r *http.Request) {
		got.Add(1)
		var body struct {
			Personalizations []json.RawMessage `json:"personalizations"`
		}
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		recipients.Add(int64(len(body.Personalizations)))
		lastBatch.Store(time.Now().UnixNano())
		w.Header().Set("X-Message-Id", "sink-"+strconv.FormatInt(batches.Add(1), 10))
		w.WriteHeader(http.StatusAccepted)
	})
	mux.HandleFunc("GET /count", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintf(w, "%d %d\n", recipients.Load(), lastBatch.Load())
	})
	mux.HandleFunc("POST /reset", func(w http.ResponseWriter, _ *http.Request) {
		recipients.Store(0)
		lastBatch.Store(0)
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		got.Add(1)
		w.WriteHeader(http.StatusNoContent)
	})
	srv := &http.Server{Addr: *addr, ReadHeaderTimeout: 5 * time.Second, Handler: mux}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		_ = srv.Shutdown(context.Background())
	}()
	if err := srv.ListenAndServe(); !errors.Is(err, http.ErrServerClosed) {
		log.Fatal(err)
	}
	fmt.Printf("sink: %d requests\n", got.Load())
}
