// Command sink is the webhook receiver of the load scripts in
// scripts/bench: it answers 204 to every request, so a benchmark with a
// subscribed webhook measures the service's delivery work and not a slow
// receiver. It prints how many requests it got when stopped.
//
//	go run ./scripts/bench/sink -addr 127.0.0.1:18098
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:18098", "address to listen on")
	flag.Parse()
	var got atomic.Int64
	srv := &http.Server{
		Addr:              *addr,
		ReadHeaderTimeout: 5 * time.Second,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			got.Add(1)
			w.WriteHeader(http.StatusNoContent)
		}),
	}
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
