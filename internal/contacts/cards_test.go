package contacts_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/contactbook/contactbook/internal/apptest"
	"github.com/contactbook/contactbook/internal/contacts"
)

// versionOf is the contact's card version now.
func versionOf(t *testing.T, b *bookEnv, id string) int64 {
	t.Helper()
	cards, err := b.svc.Cards(context.Background(), b.scope(t, b.tm.Book), []string{id + contacts.CardSuffix})
	if err != nil || len(cards) != 1 {
		t.Fatalf("card of %s: %v, %v", id, cards, err)
	}
	return cards[0].Version
}

// TestCardVersionsFollowEveryPath: a contact's card version changes with
// every change of the contact, by whichever path, bulk ones included, and
// the book's token follows; deletions are listed once.
func TestCardVersionsFollowEveryPath(t *testing.T) {
	t.Parallel()
	b := newBookEnv(t)
	ctx := context.Background()
	c := b.tm.O
	ids := c.NewContacts("Card", 3)
	field := b.tm.Owner.Post("/api/books/"+b.tm.Book+"/fields", map[string]any{"key": "tier", "name": "Tier", "type": "text"}).Expect(http.StatusCreated).String("data.id")
	label := b.tm.Owner.Post("/api/books/"+b.tm.Book+"/labels", map[string]any{"name": "VIP"}).Expect(http.StatusCreated).String("data.id")
	start, err := b.svc.CardToken(ctx, b.scope(t, b.tm.Book))
	if err != nil {
		t.Fatal(err)
	}
	for _, step := range []struct {
		name string
		do   func()
	}{
		{"patch", func() { c.Patch("/api/contacts/"+ids[0], map[string]any{"notes": "n"}).Expect(http.StatusOK) }},
		{"bulk label", func() {
			c.Post("/api/contacts/bulk-add-label", map[string]any{"contact_ids": ids, "label_id": label}).Expect(http.StatusOK)
		}},
		{"bulk field", func() {
			c.Post("/api/contacts/bulk-update-field", map[string]any{"contact_ids": ids, "field_definition_id": field, "value": "gold"}).Expect(http.StatusOK)
		}},
		{"label rename", func() {
			b.tm.Owner.Patch("/api/books/"+b.tm.Book+"/labels/"+label, map[string]any{"name": "Friends"}).Expect(http.StatusOK)
		}},
		{"field removed", func() {
			b.tm.Owner.Delete("/api/books/" + b.tm.Book + "/fields/" + field).Expect(http.StatusNoContent)
		}},
		{"import update", func() {
			csv := "First name,Email,Job title\nCard 1,card1@example.com,Importer\n"
			id := c.Post("/api/books/"+b.tm.Book+"/imports", apptest.ImportForm(t, []byte(csv), map[string]string{"mode": "update"})).Expect(http.StatusAccepted).String("data.id")
			b.tm.Env.WaitJobs()
			c.Get("/api/books/" + b.tm.Book + "/imports/" + id).Expect(http.StatusOK)
		}},
	} {
		before := make([]int64, len(ids))
		for i, id := range ids {
			before[i] = versionOf(t, b, id)
		}
		step.do()
		changed := 0
		for i, id := range ids {
			if versionOf(t, b, id) != before[i] {
				changed++
			}
		}
		if changed == 0 {
			t.Errorf("%s: no card version changed", step.name)
		}
	}
	ch, err := b.svc.CardChanges(ctx, b.scope(t, b.tm.Book), start)
	if err != nil || len(ch.Changed) != 3 || len(ch.Deleted) != 0 || ch.Token <= start {
		t.Fatalf("changes since the start: %+v, %v", ch, err)
	}
	// A bulk delete leaves one tombstone per contact, listed as deleted.
	c.Post("/api/contacts/bulk-delete", map[string]any{"contact_ids": ids[:2]}).Expect(http.StatusOK)
	after, err := b.svc.CardChanges(ctx, b.scope(t, b.tm.Book), ch.Token)
	if err != nil || len(after.Changed) != 0 || len(after.Deleted) != 2 || after.Deleted[0] == after.Deleted[1] {
		t.Fatalf("changes after the delete: %+v, %v", after, err)
	}
	// Deleting the book leaves no tombstones behind it.
	other := b.tm.Owner.CreateBook("Scratch")
	b.tm.Owner.InBook(other).NewContacts("Gone", 2)
	b.tm.Owner.Delete("/api/books/" + other).Expect(http.StatusNoContent)
	if n := b.tm.Env.QueryInt(`SELECT count(*)::int FROM contact_tombstones WHERE book_id = $1`, other); n != 0 {
		t.Fatalf("%d tombstones of a deleted book", n)
	}

	// The prune forgets old tombstones, and the tokens before them.
	prune := contacts.NewTombstonePrune(b.tm.Env.App.DB, time.Hour, func() time.Time { return time.Now().Add(2 * time.Hour) })
	if n, err := prune.Prune(ctx); err != nil || n != 2 {
		t.Fatalf("prune: %d, %v", n, err)
	}
	if _, err := b.svc.CardChanges(ctx, b.scope(t, b.tm.Book), ch.Token); !errors.Is(err, contacts.ErrSyncToken) {
		t.Fatalf("a token before the pruned deletions: %v", err)
	}
	now, err := b.svc.CardChanges(ctx, b.scope(t, b.tm.Book), after.Token)
	if err != nil || now.Token != after.Token || len(now.Changed)+len(now.Deleted) != 0 {
		t.Fatalf("the newest token after the prune: %+v, %v", now, err)
	}
	if _, err := b.svc.CardChanges(ctx, b.scope(t, b.tm.Book), after.Token+1000); !errors.Is(err, contacts.ErrSyncToken) {
		t.Fatalf("a token from the future: %v", err)
	}
}
