package contacts_test

import (
	"context"
	"testing"

	"github.com/google/uuid"

	"github.com/contactbook/contactbook/internal/books"
	"github.com/contactbook/contactbook/internal/contacts"
)

// TestListFilters: the search matches names, companies and addresses,
// trimmed and case-insensitively, taking % and _ literally; the starred
// and label filters combine; a filtered total is counted while the
// unfiltered one is the book's maintained counter.
func TestListFilters(t *testing.T) {
	t.Parallel()
	b := newBookEnv(t)
	ctx := context.Background()
	book := b.book
	ids := b.seedContacts(book, 230)
	b.seedContacts(b.newBook("Other", false), 5)
	sc := b.scope(t, book)
	list := func(f contacts.Filter) contacts.Page {
		t.Helper()
		if f.Limit == 0 {
			f.Limit = 50
		}
		p, err := b.svc.List(ctx, sc, f)
		if err != nil {
			t.Fatalf("list %+v: %v", f, err)
		}
		return p
	}
	for q, want := range map[string]int64{
		"P12@SEED.example": 1, "person 12": 11, "co 3": 33, "nobody": 0, "%": 0, "_": 0, "  person 230  ": 1, "@seed": 230,
	} {
		if p := list(contacts.Filter{Q: q}); p.Total != want || len(p.Items) != int(min(want, 50)) {
			t.Errorf("q=%q: total %d, %d items; want %d", q, p.Total, len(p.Items), want)
		}
	}
	yes, no := true, false
	if p := list(contacts.Filter{Starred: &yes, Limit: 200}); p.Total != 76 || len(p.Items) != 76 || !p.Items[0].Starred {
		t.Fatalf("starred: %d of %d", len(p.Items), p.Total)
	}
	if p := list(contacts.Filter{Starred: &no}); p.Total != 154 {
		t.Fatalf("unstarred: %d", p.Total)
	}

	red := "#FF0000"
	labelID := b.label(book, books.LabelInput{Name: "VIP", Color: &red})
	label := labelID.String()
	if n, err := b.svc.BulkAddLabel(ctx, sc, contacts.BulkInput{ContactIDs: ids[:7], LabelID: &label}); err != nil || n != 7 {
		t.Fatalf("label 7 contacts: %d, %v", n, err)
	}
	p := list(contacts.Filter{LabelID: &labelID, Sort: "created_at"})
	if p.Total != 7 || len(p.Items) != 7 || len(p.Items[0].Labels) != 1 || p.Items[0].Labels[0].ID != labelID || p.Items[0].Labels[0].Name != "VIP" {
		t.Fatalf("label filter: %d of %d, %+v", len(p.Items), p.Total, p.Items)
	}
	unknown := uuid.New()
	if list(contacts.Filter{LabelID: &unknown}).Total != 0 {
		t.Fatal("unknown label filter")
	}
	if list(contacts.Filter{LabelID: &labelID, Starred: &yes}).Total != 2 {
		t.Fatal("label and starred combined")
	}
	// The unfiltered total is the book's maintained counter, not a count
	// of rows: prove it by making the two disagree.
	for _, sql := range []string{`DELETE FROM book_contact_counts WHERE book_id = $1`,
		`INSERT INTO book_contact_counts (book_id, slot, n) VALUES ($1, 0, 4242)`} {
		b.exec(sql, book)
	}
	if n := list(contacts.Filter{}).Total; n != 4242 {
		t.Fatalf("unfiltered total %d: not taken from the book's counter", n)
	}
	if n := list(contacts.Filter{Q: "person"}).Total; n != 230 {
		t.Fatalf("filtered total %d: must be counted", n)
	}
}
