package suppression_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/contactbook/contactbook/internal/apptest"
	"github.com/contactbook/contactbook/internal/postgres"
	"github.com/contactbook/contactbook/internal/suppression"
)

// A contact becomes suppressed once every address it holds is; a
// repeated suppression records nothing; another book is not touched.
func TestSuppressMarksContactsWhoseEveryAddressIs(t *testing.T) {
	t.Parallel()
	env := apptest.Setup(t, apptest.Options{Bare: true}).Env
	owner := env.Signup("owner")
	book := owner.CreateBook("B")
	other := owner.CreateBook("Other")
	key := owner.NewKey()
	contact := func(bookID string, addresses ...string) string {
		emails := []any{}
		for _, a := range addresses {
			emails = append(emails, map[string]any{"address": a, "label": "work"})
		}
		return key.InBook(bookID).Post("/api/v1/contacts", map[string]any{"first_name": "A", "emails": emails}).Expect(http.StatusCreated).String("data.id")
	}
	both := contact(book, "ann@example.com", "ann@work.example")
	one := contact(book, "bob@example.com")
	elsewhere := contact(other, "ann@example.com")

	sp := suppression.New(env.Clock.Now)
	suppress := func(addresses ...string) suppression.Result {
		t.Helper()
		tx, err := env.App.Pool.Begin(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback(context.Background()) //nolint:errcheck // committed below
		res, err := sp.Suppress(context.Background(), tx, uuid.MustParse(book), addresses, suppression.ReasonBounce, suppression.SourceProvider, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := tx.Commit(context.Background()); err != nil {
			t.Fatal(err)
		}
		return res
	}
	suppressed := func(id string) bool {
		return env.QueryInt(`SELECT count(*) FROM contacts WHERE id = $1 AND suppressed_at IS NOT NULL`, id) == 1
	}

	if got := suppress(" ANN@example.com ", "", "bob@example.com"); got != (suppression.Result{Recorded: 2, Contacts: 1}) {
		t.Fatalf("first suppression: %+v", got)
	}
	if suppressed(both) || !suppressed(one) || suppressed(elsewhere) {
		t.Fatalf("suppressed: both %v, one %v, elsewhere %v", suppressed(both), suppressed(one), suppressed(elsewhere))
	}
	env.Clock.Advance(time.Hour)
	if got := suppress("ann@work.example", "ann@example.com"); got != (suppression.Result{Recorded: 1, Contacts: 1}) {
		t.Fatalf("second suppression: %+v", got)
	}
	if !suppressed(both) || suppressed(elsewhere) {
		t.Fatal("the contact whose every address is suppressed must be suppressed, and only in its book")
	}
	if got := suppress("ann@example.com"); got != (suppression.Result{}) {
		t.Fatalf("a repeated suppression changes nothing: %+v", got)
	}
	if n := env.QueryInt(`SELECT count(*) FROM suppressions WHERE book_id = $1 AND reason = 'bounce' AND source = 'provider'
		AND created_by IS NULL AND lifted_at IS NULL AND email IN ('ann@example.com', 'ann@work.example', 'bob@example.com')`, book); n != 3 {
		t.Fatalf("%d suppression records, want 3", n)
	}
	if n := env.QueryInt(`SELECT count(*) FROM suppressions WHERE email = 'ann@work.example' AND created_at = $1`, env.Clock.Now()); n != 1 {
		t.Fatal("a suppression is stamped with the clock")
	}
}

// Lifting keeps the record with who and when, unmarks the contacts that
// hold the address, and a new suppression of the address is recorded anew.
func TestLiftKeepsTheRecordAndUnmarksContacts(t *testing.T) {
	t.Parallel()
	env := apptest.Setup(t, apptest.Options{Bare: true}).Env
	owner := env.Signup("owner")
	book := owner.CreateBook("B")
	key := owner.NewKey()
	contact := key.InBook(book).Post("/api/v1/contacts", map[string]any{"first_name": "A",
		"emails": []any{map[string]any{"address": "ann@example.com", "label": "work"}}}).Expect(http.StatusCreated).String("data.id")
	sp := suppression.New(env.Clock.Now)
	ctx := context.Background()
	inTx := func(fn func(tx *postgres.Tx) error) {
		t.Helper()
		if err := postgres.InTx(ctx, env.App.DB, fn); err != nil {
			t.Fatal(err)
		}
	}
	inTx(func(tx *postgres.Tx) error {
		_, err := sp.Suppress(ctx, tx, uuid.MustParse(book), []string{"ann@example.com"}, suppression.ReasonComplaint, suppression.SourceProvider, nil)
		return err
	})
	var id uuid.UUID
	if err := env.App.Pool.QueryRow(ctx, `SELECT id FROM suppressions WHERE book_id = $1`, book).Scan(&id); err != nil {
		t.Fatal(err)
	}
	reasons, err := suppression.InForce(ctx, env.App.DB, uuid.MustParse(book), []string{"ann@example.com", "bob@example.com"})
	if err != nil || len(reasons) != 1 || reasons["ann@example.com"] != suppression.ReasonComplaint {
		t.Fatalf("in force: %v %v", reasons, err)
	}
	env.Clock.Advance(time.Hour)
	who := uuid.MustParse(owner.ID)
	inTx(func(tx *postgres.Tx) error { return sp.Lift(ctx, tx, id, &who) })
	if n := env.QueryInt(`SELECT count(*) FROM suppressions WHERE id = $1 AND lifted_by = $2 AND lifted_at = $3`, id, who, env.Clock.Now()); n != 1 {
		t.Fatal("the lifted record does not say who lifted it and when")
	}
	if n := env.QueryInt(`SELECT count(*) FROM contacts WHERE id = $1 AND suppressed_at IS NULL`, contact); n != 1 {
		t.Fatal("the contact stays suppressed after its only suppression was lifted")
	}
	env.Clock.Advance(time.Hour)
	inTx(func(tx *postgres.Tx) error { return sp.Lift(ctx, tx, id, nil) })
	if n := env.QueryInt(`SELECT count(*) FROM suppressions WHERE id = $1 AND lifted_by = $2`, id, who); n != 1 {
		t.Fatal("lifting again changed the record")
	}
	inTx(func(tx *postgres.Tx) error {
		res, err := sp.Suppress(ctx, tx, uuid.MustParse(book), []string{"ann@example.com"}, suppression.ReasonManual, suppression.SourceAPI, &who)
		if err == nil && res.Recorded != 1 {
			t.Errorf("suppressing again after a lift: %+v", res)
		}
		return err
	})
}

// Forgetting an address keeps its suppressions in force by hash: the
// record holds no address any more, yet every check still finds it, a
// contact that brings the address back is marked, and LiftUnsubscribe
// lifts only unsubscribes.
func TestForgottenAddressStaysSuppressed(t *testing.T) {
	t.Parallel()
	env := apptest.Setup(t, apptest.Options{Bare: true}).Env
	owner := env.Signup("owner")
	book := uuid.MustParse(owner.CreateBook("B"))
	sp := suppression.New(env.Clock.Now)
	ctx := context.Background()
	inTx := func(fn func(tx *postgres.Tx) error) {
		t.Helper()
		if err := postgres.InTx(ctx, env.App.DB, fn); err != nil {
			t.Fatal(err)
		}
	}
	inTx(func(tx *postgres.Tx) error {
		_, err := sp.Suppress(ctx, tx, book, []string{"gone@example.com"}, suppression.ReasonBounce, suppression.SourceProvider, nil)
		if err != nil {
			return err
		}
		_, err = sp.Suppress(ctx, tx, book, []string{"left@example.com"}, suppression.ReasonUnsubscribe, suppression.SourceUnsubscribePage, nil)
		return err
	})
	inTx(func(tx *postgres.Tx) error {
		n, err := suppression.Forget(ctx, tx, book, []string{"GONE@example.com"})
		if n != 1 {
			t.Errorf("forgot %d records, want 1", n)
		}
		return err
	})
	if env.QueryInt(`SELECT count(*) FROM suppressions WHERE email IS NULL AND email_hash = $1`, suppression.Hash("gone@example.com")) != 1 {
		t.Fatal("the forgotten record must keep only the hash")
	}
	got, err := suppression.InForce(ctx, env.App.DB, book, []string{"gone@example.com", "left@example.com", "new@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	if got["gone@example.com"] != suppression.ReasonBounce || got["left@example.com"] != suppression.ReasonUnsubscribe || len(got) != 2 {
		t.Fatalf("in force: %v", got)
	}
	// Suppressing the address again records nothing new.
	inTx(func(tx *postgres.Tx) error {
		res, err := sp.Suppress(ctx, tx, book, []string{"gone@example.com"}, suppression.ReasonManual, suppression.SourceAPI, nil)
		if res.Recorded != 0 {
			t.Errorf("recorded %d, want 0", res.Recorded)
		}
		return err
	})
	inTx(func(tx *postgres.Tx) error {
		for addr, want := range map[string]bool{"gone@example.com": false, "left@example.com": true} {
			lifted, err := sp.LiftUnsubscribe(ctx, tx, book, addr)
			if err != nil {
				return err
			}
			if lifted != want {
				t.Errorf("LiftUnsubscribe(%s) = %v, want %v", addr, lifted, want)
			}
		}
		return nil
	})
	if suppression.Hash(" Gone@Example.com ") != suppression.Hash("gone@example.com") || len(suppression.Hash("x")) != 64 {
		t.Fatal("the hash must ignore case and surrounding space")
	}
}
