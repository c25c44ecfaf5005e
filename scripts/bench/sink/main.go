// Command sink is the receiver of the load scripts in scripts/bench: the
// webhook receiver, answering 204 to every request, so a benchmark with a
// subscribed webhook measures the service's delivery work and not a slow
// receiver; and a stand-in for the email provider's send endpoint
// (POST /v3/mail/send, answered 202 with an X-Message-Id as SendGrid
// answers), counting the recipients of every batch. GET /count answers
// the recipients received so far and the time of the last batch, so a
// script can tell when a campaign's last email arrived. With -smtp it also
// listens for SMTP (plain, no AUTH, as a local relay would), accepting
// every message and counting its recipients in the same counter, so a
// campaign sent through SMTP by contactbook or listmonk ends the same
// way. It prints how many requests and messages it got when stopped.
//
//	go run ./scripts/bench/sink -addr 127.0.0.1:18098 -smtp 127.0.0.1:18097
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

	"github.com/emersion/go-smtp"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:18098", "address to listen on")
	smtpAddr := flag.String("smtp", "", "address to accept SMTP on (none when empty)")
	flag.Parse()
	var got, recipients, lastBatch, batches, messages atomic.Int64
	if *smtpAddr != "" {
		srv := smtp.NewServer(smtp.BackendFunc(func(*smtp.Conn) (smtp.Session, error) {
			return &smtpSession{done: func(rcpts int) {
				messages.Add(1)
				recipients.Add(int64(rcpts))
				lastBatch.Store(time.Now().UnixNano())
			}}, nil
		}))
		srv.Addr, srv.Domain, srv.MaxRecipients = *smtpAddr, "sink.localhost", 1000
		srv.ReadTimeout, srv.WriteTimeout = time.Minute, time.Minute
		srv.ErrorLog = log.New(io.Discard, "", 0)
		go func() {
			if err := srv.ListenAndServe(); err != nil && !errors.Is(err, smtp.ErrServerClosed) {
				log.Fatal(err)
			}
		}()
		defer srv.Close()
	}
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
	fmt.Printf("sink: %d requests, %d SMTP messages\n", got.Load(), messages.Load())
}

// smtpSession takes one connection's messages, reading and dropping each
// body; done gets each message's recipient count.
type smtpSession struct {
	rcpts int
	done  func(rcpts int)
}

func (s *smtpSession) Mail(string, *smtp.MailOptions) error { return nil }
func (s *smtpSession) Rcpt(string, *smtp.RcptOptions) error { s.rcpts++; return nil }
func (s *smtpSession) Reset()                               { s.rcpts = 0 }
func (s *smtpSession) Logout() error                        { return nil }

func (s *smtpSession) Data(r io.Reader) error {
	if _, err := io.Copy(io.Discard, r); err != nil {
		return err
	}
	s.done(s.rcpts)
	s.rcpts = 0
	return nil
}
