package mailer

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/contactbook/contactbook/internal/postgres/pgtest"
)

// Two instances (two Paces on one database) sending for the same book
// share its rate: together they stay within 10 % of it.
func TestPaceHoldsTheRateAcrossInstances(t *testing.T) {
	db := pgtest.Setup(t).DB
	a, b := NewPace(db, nil), NewPace(db, nil)
	acct := &Account{Key: "book-x", MaxRate: 50}
	var sent atomic.Int64
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	start := time.Now()
	for _, p := range []*Pace{a, b} {
		for range 3 { // three senders per instance
			wg.Add(1)
			go func() {
				defer wg.Done()
				s := p.schedule(acct)
				for ctx.Err() == nil {
					if s.wait(ctx, 1000) != nil {
						return
					}
					sent.Add(1)
				}
			}()
		}
	}
	time.Sleep(2 * time.Second)
	cancel()
	wg.Wait()
	elapsed := time.Since(start).Seconds()
	rate := float64(sent.Load()) / elapsed
	if rate > 55 || rate < 35 {
		t.Fatalf("%d sends in %.2fs: %.1f/s for a rate of 50", sent.Load(), elapsed, rate)
	}
}

func TestSlowdownAfterTemporaryFailures(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	p := NewPace(nil, func() time.Time { return now })
	acct := &Account{Key: "b"}
	if p.Slowed("b") != 0 {
		t.Fatal("slowed before any failure")
	}
	p.slowDown(acct)
	first := p.Slowed("b")
	p.slowDown(acct)
	if first != slowFirst || p.Slowed("b") != 2*slowFirst {
		t.Fatalf("slowdown %v then %v", first, p.Slowed("b"))
	}
	for range 10 {
		p.slowDown(acct)
	}
	if p.Slowed("b") != slowMax {
		t.Fatalf("capped at %v, want %v", p.Slowed("b"), slowMax)
	}
	now = now.Add(slowFor + time.Second)
	if p.Slowed("b") != 0 {
		t.Fatal("the slowdown did not wear off")
	}
}

func TestParseSMTPURL(t *testing.T) {
	for raw, want := range map[string]SMTPAccount{
		"smtp://user%40x:p%3Ass@mail.example.com": {Host: "mail.example.com", Port: 587, Security: SecurityStartTLS, Username: "user@x", Password: "p:ss", MaxConnections: 2},
		"smtps://mail.example.com":                {Host: "mail.example.com", Port: 465, Security: SecurityTLS, MaxConnections: 2},
		"smtp://127.0.0.1:1025?security=none":     {Host: "127.0.0.1", Port: 1025, Security: SecurityNone, MaxConnections: 2},
	} {
		got, err := ParseSMTPURL(raw)
		if err != nil || got != want {
			t.Errorf("%s: %+v, %v", raw, got, err)
		}
	}
	for _, bad := range []string{"http://x", "smtp://", "smtp://x:0", "smtp://x:99999"} {
		if _, err := ParseSMTPURL(bad); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}

func TestPlainText(t *testing.T) {
	got := PlainText(`<html><head><style>p{}</style><title>x</title></head><body><h1>News</h1><p>Hello <b>Ann</b>,<br>read
	<a href="https://acme.example/a">our post</a>.</p><ul><li>one</li><li>two</li></ul><script>alert(1)</script>
	<p><img alt="Logo" src="x.png"> &amp; more</p></body></html>`)
	want := "News\n\nHello Ann,\nread our post [https://acme.example/a].\n\n- one\n- two\n\nLogo & more\n"
	if got != want {
		t.Fatalf("got %q\nwant %q", got, want)
	}
}
