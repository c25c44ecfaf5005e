package campaigns_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/contactbook/contactbook/internal/access"
	"github.com/contactbook/contactbook/internal/apptest"
	"github.com/contactbook/contactbook/internal/auth"
	"github.com/contactbook/contactbook/internal/books"
	"github.com/contactbook/contactbook/internal/campaigns"
	"github.com/contactbook/contactbook/internal/mailer"
	"github.com/contactbook/contactbook/internal/postgres"
)

// cancelAfter is a pool that ends a context once the first statement
// whose SQL contains match has been read to its end: a request or pass
// that is gone at a chosen point of its work, without timing.
type cancelAfter struct {
	postgres.Pool
	match  string
	cancel context.CancelFunc
	fired  atomic.Bool
}

func (p *cancelAfter) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	rows, err := p.Pool.Query(ctx, sql, args...)
	if err != nil || !strings.Contains(sql, p.match) {
		return rows, err
	}
	return &rowsThen{Rows: rows, then: p.fire}, nil
}

func (p *cancelAfter) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	row := p.Pool.QueryRow(ctx, sql, args...)
	if !strings.Contains(sql, p.match) {
		return row
	}
	return rowThen{Row: row, then: p.fire}
}

func (p *cancelAfter) fire() {
	if p.fired.CompareAndSwap(false, true) {
		p.cancel()
	}
}

// rowsThen calls then once the rows are closed.
type rowsThen struct {
	pgx.Rows
	then func()
}

func (r *rowsThen) Close() {
	r.Rows.Close()
	r.then()
}

// rowThen calls then once the row is scanned.
type rowThen struct {
	pgx.Row
	then func()
}

func (r rowThen) Scan(dest ...any) error {
	err := r.Row.Scan(dest...)
	r.then()
	return err
}

// countingSender counts the batches handed to the provider's client.
type countingSender struct {
	mailer.Sender
	batches atomic.Int64
}

func (c *countingSender) Send(ctx context.Context, b mailer.Batch) (string, error) {
	c.batches.Add(1)
	return c.Sender.Send(ctx, b)
}

// A test email whose request is gone once its merge data are read (the
// last database read before rendering) is rendered but never handed to
// the provider's client. The sender is where this shows: the client
// itself refuses a context that has ended, so the fake provider would
// receive nothing either way.
func TestSendTestRequestGone(t *testing.T) {
	t.Parallel()
	setup := apptest.Setup(t, apptest.Options{OwnerOnly: true})
	env, mail := setup.Env, setup.Mail
	tm := newTeam(t, setup, "SG.acme")
	tm.O.NewContact("Ann", "ann@example.com")
	actor := auth.UserActor(uuid.MustParse(tm.Owner.ID), env.App.Accounts)
	book, tpl := uuid.MustParse(tm.Book), uuid.MustParse(tm.tpl)
	resolved, err := env.App.Books.Resolve(context.Background(), actor, book, books.AsContext)
	if err != nil {
		t.Fatal(err)
	}
	sc := access.InBook(actor, resolved)

	for _, tc := range []struct {
		name      string
		goneAfter string // SQL read after which the request is gone; "" never
		wantSent  int64
	}{
		{name: "request still there", wantSent: 1},
		{name: "gone after the merge data are read", goneAfter: "FROM contacts ct WHERE ct.book_id = $1 AND ($2::uuid IS NULL OR ct.id = $2)", wantSent: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mail.Reset()
			reqCtx, leave := context.WithCancel(context.Background())
			defer leave()
			gone := &cancelAfter{Pool: env.App.DB, match: tc.goneAfter, cancel: leave}
			var db postgres.Pool = env.App.Pool
			if tc.goneAfter != "" {
				db = gone
			}
			sender := &countingSender{Sender: mailer.NewSender(mail.URL, nil)}
			svc := serviceOn(env, db, sender)

			err := svc.SendTest(reqCtx, sc, tpl, campaigns.SendTestInput{Email: "ann@example.com"})
			if tc.goneAfter != "" && !gone.fired.Load() {
				t.Fatal("the merge data query was not seen: the test no longer ends the request where it means to")
			}
			if got := sender.batches.Load(); got != tc.wantSent || int64(mail.RecipientCount()) != tc.wantSent {
				t.Fatalf("batches handed to the sender %d, recipients at the provider %d; want %d", got, mail.RecipientCount(), tc.wantSent)
			}
			if tc.wantSent == 0 && !errors.Is(err, context.Canceled) {
				t.Fatalf("err = %v, want the request's cancellation", err)
			}
			if tc.wantSent == 1 && err != nil {
				t.Fatal(err)
			}
		})
	}
}

// A pass whose context ends after it claimed its first chunk and before
// the chunk is rendered sends nothing: the chunk is given back (no tries
// counted, no token, no lease, no claim left), the next pass sends every
// participant exactly once, and a pass after that sends nothing. Both
// template shapes are covered: one batch for the chunk, and a request
// of its own per recipient (too many merge expressions to batch).
func TestCampaignPassEndedWhileRendering(t *testing.T) {
	t.Parallel()
	var many strings.Builder
	for i := range mailer.MaxSubstitutions + 1 {
		fmt.Fprintf(&many, `<p>{{first_name | default: "friend %d"}}</p>`, i)
	}
	const participants = 5
	for _, tc := range []struct {
		name, body string
		requests   int // provider requests of the pass that sends them all
	}{
		{name: "batched", body: "<p>{{first_name}}</p>", requests: 1},
		{name: "request per recipient", body: many.String(), requests: participants},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			setup := apptest.Setup(t, apptest.Options{OwnerOnly: true})
			env, mail := setup.Env, setup.Mail
			tm := newTeam(t, setup, "SG.acme")
			tm.tpl = tm.O.Post("/api/campaign-templates", map[string]any{"name": "Shape", "subject": "S", "body_html": tc.body}).
				Expect(http.StatusOK).String("data.id")
			cid := uuid.MustParse(tm.campaign(t, "c", participants))

			passCtx, end := context.WithCancel(context.Background())
			defer end()
			db := &cancelAfter{Pool: env.App.DB, match: "INSERT INTO campaign_claims", cancel: end}
			sender := &countingSender{Sender: mailer.NewSender(mail.URL, nil)}
			svc := runnerOn(env, db, sender, campaigns.ProcessingOptions{ChunkSize: 2, Senders: 1})
			res, _ := svc.ProcessCampaign(passCtx, cid) // its final sweep fails on the ended context
			if !db.fired.Load() {
				t.Fatal("no claim was seen: the test no longer ends the pass where it means to")
			}
			if res.Sent != 0 || sender.batches.Load() != 0 || mail.RecipientCount() != 0 {
				t.Fatalf("ended pass: %+v, %d batches to the sender, %d recipients at the provider", res, sender.batches.Load(), mail.RecipientCount())
			}
			if n := env.QueryInt(`SELECT count(*) FROM campaign_step_completions
				WHERE result IS NOT NULL OR lease_until IS NOT NULL OR tries <> 0 OR token_hash IS NOT NULL`); n != 0 {
				t.Fatalf("%d completion rows still claimed or settled", n)
			}
			if n := env.QueryInt(`SELECT count(*) FROM campaign_claims`); n != 0 {
				t.Fatalf("%d claims left", n)
			}

			res, err := env.App.CampaignRunner.ProcessCampaign(context.Background(), cid)
			if err != nil || res.Sent != participants || res.Reaped != 0 || mail.RequestCount() != tc.requests {
				t.Fatalf("next pass: %+v %v, %d provider requests, want %d", res, err, mail.RequestCount(), tc.requests)
			}
			seen := map[string]int{}
			for _, r := range mail.Recipients() {
				seen[r.Email]++
			}
			for i := 1; i <= participants; i++ {
				if addr := fmt.Sprintf("c%d@example.com", i); seen[addr] != 1 {
					t.Fatalf("%s got %d emails; provider saw %v", addr, seen[addr], seen)
				}
			}
			if res, err := env.App.CampaignRunner.ProcessCampaign(context.Background(), cid); err != nil || res.Sent != 0 || mail.RecipientCount() != participants {
				t.Fatalf("third pass: %+v %v, provider got %d", res, err, mail.RecipientCount())
			}
		})
	}
}
