package contacts_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"

	"github.com/contactbook/contactbook/internal/apperr"
	"github.com/contactbook/contactbook/internal/books"
	"github.com/contactbook/contactbook/internal/contacts"
)

// withEmails is a create input of a contact named first with addresses.
func withEmails(t *testing.T, first string, addrs ...string) contacts.CreateInput {
	t.Helper()
	return decode[contacts.CreateInput](t, map[string]any{"first_name": first, "emails": emails(addrs...)})
}

// TestDuplicateEmail: a book that enforces unique emails refuses an
// address another of its contacts holds, in any case, naming it; a contact
// keeps its own; a deleted contact frees its addresses; a book that does
// not enforce, and other books, take duplicates; enforcement cannot be
// turned on over duplicates.
func TestDuplicateEmail(t *testing.T) {
	t.Parallel()
	b := newBookEnv(t)
	ctx := context.Background()
	strict := b.scope(t, b.strictBook(t, "Strict"))
	loose := b.scope(t, b.book)
	count := func() int { return b.count(`SELECT count(*)::int FROM contacts`) }

	first, err := b.svc.Create(ctx, strict, withEmails(t, "A", "dup@example.com"))
	if err != nil {
		t.Fatal(err)
	}
	before := count()
	_, err = b.svc.Create(ctx, strict, withEmails(t, "B", "other@x.example", "DUP@example.com"))
	expectRule(t, err, apperr.DuplicateEmail, "dup@example.com")
	if count() != before {
		t.Fatal("a refused duplicate was written")
	}
	second, err := b.svc.Create(ctx, strict, withEmails(t, "B", "b@example.com"))
	if err != nil {
		t.Fatal(err)
	}
	setEmails := func(id uuid.UUID, addrs ...string) error {
		t.Helper()
		_, err := b.svc.Update(ctx, b.owner, id, decode[contacts.Patch](t, map[string]any{"emails": emails(addrs...)}))
		return err
	}
	if err := setEmails(second.ID, "Dup@example.com"); !apperr.Is(err, apperr.DuplicateEmail) {
		t.Fatalf("patch onto a taken address: %v", err)
	}
	// A contact keeps its own address through a patch; swapping case is fine.
	if err := setEmails(first.ID, "DUP@EXAMPLE.COM", "more@example.com"); err != nil {
		t.Fatal(err)
	}
	if _, err := b.svc.Update(ctx, b.owner, first.ID, decode[contacts.Patch](t, map[string]any{"notes": "still unique"})); err != nil {
		t.Fatal(err)
	}
	// Freed addresses can be taken.
	if err := b.svc.Delete(ctx, b.owner, first.ID); err != nil {
		t.Fatal(err)
	}
	if err := setEmails(second.ID, "dup@example.com"); err != nil {
		t.Fatal(err)
	}
	// A book that does not enforce takes duplicates; other books are separate.
	for _, name := range []string{"C", "D"} {
		if _, err := b.svc.Create(ctx, loose, withEmails(t, name, "dup@example.com")); err != nil {
			t.Fatal(err)
		}
	}

	enforce := func(on bool) error {
		t.Helper()
		sc := b.scope(t, b.book)
		_, err := b.books.Update(ctx, sc.Actor, sc.Book, decode[books.Patch](t, map[string]any{"enforce_unique_emails": on}))
		return err
	}
	// Turning enforcement on with duplicates present is refused.
	if err := enforce(true); !apperr.Is(err, apperr.DuplicateEmail) {
		t.Fatalf("enforcing over duplicates: %v", err)
	}
	if b.scope(t, b.book).Book.EnforceUniqueEmails {
		t.Fatal("enforcement turned on despite duplicates")
	}
	page, err := b.svc.List(ctx, loose, contacts.Filter{Q: "dup@", Limit: 10})
	if err != nil || len(page.Items) != 2 {
		t.Fatalf("the loose book's duplicates: %+v, %v", page, err)
	}
	if err := b.svc.Delete(ctx, b.owner, page.Items[0].ID); err != nil {
		t.Fatal(err)
	}
	if err := enforce(true); err != nil {
		t.Fatal(err)
	}
	if _, err := b.svc.Create(ctx, b.scope(t, b.book), withEmails(t, "E", "dup@example.com")); !apperr.Is(err, apperr.DuplicateEmail) {
		t.Fatalf("a duplicate once enforced: %v", err)
	}
	// And off again.
	if err := enforce(false); err != nil {
		t.Fatal(err)
	}
	if _, err := b.svc.Create(ctx, b.scope(t, b.book), withEmails(t, "E", "dup@example.com")); err != nil {
		t.Fatal(err)
	}
}

// TestDuplicateEmailConcurrent: of concurrent creates, or patches, onto
// one address of a book that enforces unique emails, exactly one wins and
// the others are refused as duplicates.
func TestDuplicateEmailConcurrent(t *testing.T) {
	t.Parallel()
	b := newBookEnv(t)
	ctx := context.Background()
	book := b.strictBook(t, "Strict")
	sc := b.scope(t, book)
	outcome := func(errs []error) (won, refused int) {
		t.Helper()
		for _, err := range errs {
			switch {
			case err == nil:
				won++
			case apperr.Is(err, apperr.DuplicateEmail):
				refused++
			default:
				t.Fatalf("unexpected %v", err)
			}
		}
		return won, refused
	}
	for round := range 3 {
		addr := fmt.Sprintf("race%d@example.com", round)
		errs := make([]error, 10)
		var wg sync.WaitGroup
		for i := range errs {
			wg.Go(func() {
				_, errs[i] = b.svc.Create(ctx, sc, withEmails(t, fmt.Sprint("Racer ", i), addr))
			})
		}
		wg.Wait()
		if won, refused := outcome(errs); won != 1 || refused != 9 {
			t.Fatalf("round %d: %d created, %d refused; want 1 and 9", round, won, refused)
		}
		if n := b.count(`SELECT count(*)::int FROM contact_emails WHERE book_id = $1 AND address_lower = $2`, book, addr); n != 1 {
			t.Fatalf("%d rows hold %s", n, addr)
		}
	}
	ids := make([]uuid.UUID, 6)
	for i := range ids {
		c, err := b.svc.Create(ctx, sc, decode[contacts.CreateInput](t, map[string]any{"first_name": fmt.Sprint("P", i)}))
		if err != nil {
			t.Fatal(err)
		}
		ids[i] = c.ID
	}
	errs := make([]error, len(ids))
	var wg sync.WaitGroup
	for i, id := range ids {
		wg.Go(func() {
			_, errs[i] = b.svc.Update(ctx, b.owner, id, decode[contacts.Patch](t, map[string]any{"emails": emails("Patched@example.com")}))
		})
	}
	wg.Wait()
	if won, _ := outcome(errs); won != 1 {
		t.Fatalf("%d patches won, want exactly one: %v", won, errs)
	}
	if n := b.count(`SELECT count(*)::int FROM contacts WHERE book_id = $1 AND search LIKE '%patched@example.com%'`, book); n != 1 {
		t.Fatalf("%d contacts hold the patched address", n)
	}
}

// TestCheckEmail: the check compares trimmed and case-insensitively within
// the book, names the holder (its full name, or its company), leaves out
// the excluded contact, follows patches and says whether the book
// enforces uniqueness.
func TestCheckEmail(t *testing.T) {
	t.Parallel()
	b := newBookEnv(t)
	ctx := context.Background()
	sc := b.scope(t, b.book)
	ada, err := b.svc.Create(ctx, sc, decode[contacts.CreateInput](t, map[string]any{
		"first_name": "Ada", "last_name": "L", "emails": emails("Ada@Example.com", "second@example.com")}))
	if err != nil {
		t.Fatal(err)
	}
	company, err := b.svc.Create(ctx, sc, decode[contacts.CreateInput](t, map[string]any{"company": "Acme", "emails": emails("info@acme.example")}))
	if err != nil {
		t.Fatal(err)
	}
	other := b.scope(t, b.newBook("Other", false))
	if _, err := b.svc.Create(ctx, other, withEmails(t, "Z", "z@example.com")); err != nil {
		t.Fatal(err)
	}
	check := func(email string, exclude *uuid.UUID) contacts.EmailCheck {
		t.Helper()
		r, err := b.svc.CheckEmail(ctx, b.scope(t, b.book), email, exclude)
		if err != nil {
			t.Fatalf("check %q: %v", email, err)
		}
		return r
	}
	if r := check(" ada@EXAMPLE.com", nil); !r.Exists || r.Enforced || r.ContactID == nil || *r.ContactID != ada.ID || r.Name == nil || *r.Name != "Ada L" {
		t.Fatalf("exists: %+v", r)
	}
	if r := check("info@acme.example", nil); r.ContactID == nil || *r.ContactID != company.ID || r.Name == nil || *r.Name != "Acme" {
		t.Fatalf("company name: %+v", r)
	}
	if r := check("second@example.com", &ada.ID); r.Exists || r.ContactID != nil || r.Name != nil {
		t.Fatalf("excluded: %+v", r)
	}
	if check("z@example.com", nil).Exists {
		t.Fatal("another book's address")
	}
	// Changing a contact's emails changes what the check sees.
	if _, err := b.svc.Update(ctx, b.owner, ada.ID, decode[contacts.Patch](t, map[string]any{"emails": emails("new@example.com")})); err != nil {
		t.Fatal(err)
	}
	if check("ada@example.com", nil).Exists || !check("NEW@example.com", nil).Exists {
		t.Fatal("after patch")
	}
	now := b.scope(t, b.book)
	if _, err := b.books.Update(ctx, now.Actor, now.Book, decode[books.Patch](t, map[string]any{"enforce_unique_emails": true})); err != nil {
		t.Fatal(err)
	}
	if !check("nobody@example.com", nil).Enforced {
		t.Fatal("enforced flag")
	}
	for _, bad := range []string{"", " ", strings.Repeat("a", 250) + "@b.co"} {
		if _, err := b.svc.CheckEmail(ctx, sc, bad, nil); !apperr.Is(err, apperr.InvalidInput) {
			t.Errorf("check %q: %v", bad, err)
		}
	}
}
