package transactional_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/contactbook/contactbook/internal/delivery"
	"github.com/contactbook/contactbook/internal/postgres"
	"github.com/contactbook/contactbook/internal/postgres/pgtest"
	"github.com/contactbook/contactbook/internal/suppression"
	"github.com/contactbook/contactbook/internal/transactional"
)

// fakeProvider records each message it is handed, taking delay per send.
type fakeProvider struct {
	mu    sync.Mutex
	got   map[uuid.UUID]int
	delay time.Duration
	fail  func(e transactional.Email) error
}

func (p *fakeProvider) Send(ctx context.Context, e transactional.Email) (string, error) {
	time.Sleep(p.delay)
	if p.fail != nil {
		if err := p.fail(e); err != nil {
			return "", err
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.got[e.MessageID]++
	return "pm-" + e.MessageID.String(), nil
}

func (p *fakeProvider) count() (distinct, total int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, n := range p.got {
		total += n
	}
	return len(p.got), total
}

func newBook(t *testing.T, db *postgres.Database) uuid.UUID {
	t.Helper()
	var book uuid.UUID
	if err := db.QueryRow(context.Background(), `
		WITH t AS (INSERT INTO teams (name) VALUES ('T') RETURNING id)
		INSERT INTO books (team_id, name, slug) SELECT id, 'B', 'b' FROM t RETURNING id`).Scan(&book); err != nil {
		t.Fatal(err)
	}
	return book
}

// queue inserts n queued messages as Send leaves them.
func queue(t *testing.T, db *postgres.Database, book uuid.UUID, n int, at time.Time) {
	t.Helper()
	for i := range n {
		id, _ := uuid.NewV7()
		if _, err := db.Exec(context.Background(), `
			INSERT INTO transactional_messages (id, book_id, template_id, email, subject, body_html, status, next_attempt_at, created_at)
			VALUES ($1, $2, $3, $4, 'S', '<p>x</p>', 'queued', $5, $5)`,
			id, book, uuid.New(), fmt.Sprintf("r%d@example.com", i), at); err != nil {
			t.Fatal(err)
		}
	}
}

func statusCounts(t *testing.T, db *postgres.Database) map[string]int {
	t.Helper()
	rows, err := db.Query(context.Background(), `SELECT status, count(*) FROM transactional_messages GROUP BY status`)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for rows.Next() {
		var s string
		var n int
		if err := rows.Scan(&s, &n); err != nil {
			t.Fatal(err)
		}
		out[s] = n
	}
	return out
}

// TestBurstWithAStopMidwayIsSentExactlyOnce stops one of two instances in
// the middle of a burst: every message is sent, none twice.
func TestBurstWithAStopMidwayIsSentExactlyOnce(t *testing.T) {
	t.Parallel()
	db := pgtest.Setup(t).DB
	book := newBook(t, db)
	const n = 300
	queue(t, db, book, n, time.Now().Add(-time.Second))
	p := &fakeProvider{got: map[uuid.UUID]int{}, delay: 5 * time.Millisecond}
	cfg := transactional.RunnerConfig{Senders: 8, Poll: 20 * time.Millisecond}
	_, first := transactional.New(transactional.Deps{DB: db, Provider: p, Runner: cfg})
	_, second := transactional.New(transactional.Deps{DB: db, Provider: p, Runner: cfg})

	ctx1, stop1 := context.WithCancel(context.Background())
	done1 := make(chan struct{})
	go func() { _ = first.Run(ctx1); close(done1) }()
	// The first instance is stopped once it has sent part of the burst.
	for deadline := time.Now().Add(20 * time.Second); ; {
		if d, _ := p.count(); d >= n/4 || time.Now().After(deadline) {
			break
		}
		time.Sleep(2 * time.Millisecond)
	}
	stop1()
	<-done1
	sentByFirst, _ := p.count()
	if sentByFirst >= n {
		t.Fatalf("the first instance sent the whole burst before it was stopped")
	}
	ctx2, stop2 := context.WithCancel(context.Background())
	defer stop2()
	go func() { _ = second.Run(ctx2) }()
	for deadline := time.Now().Add(30 * time.Second); statusCounts(t, db)["sent"] < n && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	distinct, total := p.count()
	if distinct != n || total != n {
		t.Fatalf("provider got %d messages %d times, want %d once each", distinct, total, n)
	}
	if c := statusCounts(t, db); c["sent"] != n {
		t.Fatalf("statuses %v", c)
	}
}

// TestTwoInstancesRacingSendOnce runs two instances on one queue at once.
func TestTwoInstancesRacingSendOnce(t *testing.T) {
	t.Parallel()
	db := pgtest.Setup(t).DB
	book := newBook(t, db)
	const n = 200
	queue(t, db, book, n, time.Now().Add(-time.Second))
	p := &fakeProvider{got: map[uuid.UUID]int{}, delay: time.Millisecond}
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	for range 2 {
		_, rn := transactional.New(transactional.Deps{DB: db, Provider: p, Runner: transactional.RunnerConfig{Senders: 4, Poll: 10 * time.Millisecond}})
		go func() { _ = rn.Run(ctx) }()
	}
	for deadline := time.Now().Add(30 * time.Second); statusCounts(t, db)["sent"] < n && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	if distinct, total := p.count(); distinct != n || total != n {
		t.Fatalf("provider got %d messages %d times, want %d once each", distinct, total, n)
	}
}

// TestACrashedSendIsNeverSentAgain: a message stamped as sending by an
// instance that died (kill -9) is settled as failed once its lease has
// passed, and never handed to the provider again; a report from the
// provider on it later makes it sent.
func TestACrashedSendIsNeverSentAgain(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := pgtest.Setup(t).DB
	book := newBook(t, db)
	start := time.Now()
	queue(t, db, book, 1, start.Add(-time.Second))
	// What the dead instance left: the claim's stamp, no outcome.
	if _, err := db.Exec(ctx, `UPDATE transactional_messages SET sending_at = $1, attempts = 1`, start); err != nil {
		t.Fatal(err)
	}
	p := &fakeProvider{got: map[uuid.UUID]int{}}
	var mu sync.Mutex
	now := start
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	_, rn := transactional.New(transactional.Deps{DB: db, Provider: p, Now: clock, Runner: transactional.RunnerConfig{Lease: time.Minute}})
	if n, err := rn.Round(ctx); err != nil || n != 0 {
		t.Fatalf("Round claimed %d (%v): a message being sent was claimed again", n, err)
	}
	mu.Lock()
	now = start.Add(2 * time.Minute)
	mu.Unlock()
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { _ = rn.Run(runCtx); close(done) }()
	for deadline := time.Now().Add(10 * time.Second); statusCounts(t, db)["failed"] != 1 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	stop()
	<-done
	var detail string
	if err := db.QueryRow(ctx, `SELECT detail FROM transactional_messages`).Scan(&detail); err != nil || detail != transactional.DetailOutcomeUnknown {
		t.Fatalf("detail %q (%v)", detail, err)
	}
	if d, _ := p.count(); d != 0 {
		t.Fatalf("the crashed send went to the provider again")
	}
	// The provider then reports on it: it did go out.
	var id uuid.UUID
	if err := db.QueryRow(ctx, `SELECT id FROM transactional_messages`).Scan(&id); err != nil {
		t.Fatal(err)
	}
	delivered := start.Add(time.Minute).UTC().Truncate(time.Second)
	res, err := transactional.Feedback{}.ApplyFeedback(ctx, db, book, []delivery.TransactionalEvent{
		{ID: "e1", Kind: "delivered", MessageID: id, At: delivered},
	}, []string{"delivered"}, start)
	if err != nil || len(res.New) != 1 || len(res.Firsts) != 1 || res.Firsts[0].MessageID != id || !res.Firsts[0].At.Equal(delivered) {
		t.Fatalf("feedback %+v, %v", res, err)
	}
	var status string
	var sentAt *time.Time
	if err := db.QueryRow(ctx, `SELECT status, detail, sent_at FROM transactional_messages`).Scan(&status, &detail, &sentAt); err != nil {
		t.Fatal(err)
	}
	if status != "sent" || detail != "" || sentAt == nil || !sentAt.Equal(delivered) {
		t.Fatalf("after the provider's report: %s %q %v", status, detail, sentAt)
	}
	// A later report of the same kind is not a first.
	res, err = transactional.Feedback{}.ApplyFeedback(ctx, db, book, []delivery.TransactionalEvent{
		{ID: "e2", Kind: "delivered", MessageID: id, At: delivered.Add(time.Second)},
	}, []string{"delivered"}, start)
	if err != nil || len(res.New) != 1 || len(res.Firsts) != 0 {
		t.Fatalf("second report %+v, %v", res, err)
	}
}

// TestSuppressedAfterQueueingIsNotSent: a bounce recorded between the
// request and the send stops the message; an unsubscribe does not.
func TestSuppressedAfterQueueingIsNotSent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := pgtest.Setup(t).DB
	book := newBook(t, db)
	queue(t, db, book, 2, time.Now().Add(-time.Second))
	for addr, reason := range map[string]string{"r0@example.com": "bounce", "r1@example.com": "unsubscribe"} {
		if _, err := suppression.New(nil).Suppress(ctx, db, book, []string{addr}, suppression.Reason(reason), suppression.SourceAPI, nil); err != nil {
			t.Fatal(err)
		}
	}
	p := &fakeProvider{got: map[uuid.UUID]int{}}
	_, rn := transactional.New(transactional.Deps{DB: db, Provider: p})
	if n, err := rn.Round(ctx); err != nil || n != 2 {
		t.Fatalf("Round = %d, %v", n, err)
	}
	var status, detail string
	if err := db.QueryRow(ctx, `SELECT status, detail FROM transactional_messages WHERE email = 'r0@example.com'`).Scan(&status, &detail); err != nil {
		t.Fatal(err)
	}
	if status != "suppressed" || detail != "address suppressed (bounce)" {
		t.Fatalf("bounced: %s %q", status, detail)
	}
	if c := statusCounts(t, db); c["sent"] != 1 {
		t.Fatalf("statuses %v; the unsubscribed address should get it", c)
	}
}
