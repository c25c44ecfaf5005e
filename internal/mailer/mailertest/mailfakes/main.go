// Command mailfakes runs the mail test servers of package mailertest as
// a process of their own, for the browser tests: an SMTP relay
// (STARTTLS, AUTH PLAIN) and a fake Amazon SES that checks SigV4
// signatures. It prints one JSON line saying where they are and which
// credentials they take, and the file of the certificate authority their
// TLS certificates come from, then serves until stdin closes or it is
// signalled.
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/contactbook/contactbook/internal/mailer/mailertest"
)

// proc is the mailertest.TB of a process: cleanups run at exit, a fatal
// error ends it.
type proc struct{ cleanups []func() }

func (p *proc) Helper()           {}
func (p *proc) Cleanup(f func())  { p.cleanups = append(p.cleanups, f) }
func (p *proc) Fatal(args ...any) { fmt.Fprintln(os.Stderr, args...); p.stop(); os.Exit(1) }
func (p *proc) stop() {
	for i := len(p.cleanups) - 1; i >= 0; i-- {
		p.cleanups[i]()
	}
}

func main() {
	p := &proc{}
	dir, err := os.MkdirTemp("", "mailfakes-")
	if err != nil {
		p.Fatal(err)
	}
	p.Cleanup(func() { _ = os.RemoveAll(dir) })
	cert := mailertest.NewCert(p)
	smtp := mailertest.NewSMTPServer(p, mailertest.SMTPOptions{Username: "relay", Password: "relay-secret", Cert: cert})
	ses := mailertest.NewSESServer(p, "us-east-1", "AKIDBROWSERTESTS", "ses-browser-secret")
	ca := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(ca, cert.CAPEM, 0o600); err != nil {
		p.Fatal(err)
	}
	_ = json.NewEncoder(os.Stdout).Encode(map[string]any{
		"ca_file": ca,
		"smtp":    map[string]any{"host": smtp.Host, "port": smtp.Port, "username": "relay", "password": "relay-secret"},
		"ses":     map[string]any{"url": ses.URL, "region": ses.Region, "access_key_id": "AKIDBROWSERTESTS", "secret_access_key": "ses-browser-secret"},
	})
	done := make(chan struct{})
	go func() { _, _ = io.Copy(io.Discard, os.Stdin); close(done) }()
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	select {
	case <-done:
	case <-sig:
	}
	p.stop()
}
