package contacts_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/contactbook/contactbook/internal/access"
	"github.com/contactbook/contactbook/internal/books"
	"github.com/contactbook/contactbook/internal/contacts"
	"github.com/contactbook/contactbook/internal/optional"
	"github.com/contactbook/contactbook/internal/postgres"
)

// versionOf is the contact's card version now.
func versionOf(t *testing.T, b *bookEnv, id string) int64 {
	t.Helper()
	cards, err := b.svc.Cards(context.Background(), b.scope(t, b.book), []string{id + contacts.CardSuffix})
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
	sc := b.scope(t, b.book)
	ids := b.newContacts(b.book, "Card", 3)
	field := b.field(b.book, "tier", books.FieldText).String()
	label := b.label(b.book, books.LabelInput{Name: "VIP"})
	labelID := label.String()
	start, err := b.svc.CardToken(ctx, sc)
	if err != nil {
		t.Fatal(err)
	}
	bulk := func(op func(context.Context, access.Scope, contacts.BulkInput) (int, error), in contacts.BulkInput) error {
		n, err := op(ctx, b.scope(t, b.book), in)
		if err == nil && n != len(in.ContactIDs) {
			err = fmt.Errorf("%d of %d contacts changed", n, len(in.ContactIDs))
		}
		return err
	}
	gold := "gold"
	for _, step := range []struct {
		name string
		do   func() error
	}{
		{"patch", func() error {
			_, err := b.svc.Update(ctx, b.owner, uuid.MustParse(ids[0]), decode[contacts.Patch](t, map[string]any{"notes": "n"}))
			return err
		}},
		{"bulk label", func() error {
			return bulk(b.svc.BulkAddLabel, contacts.BulkInput{ContactIDs: ids, LabelID: &labelID})
		}},
		{"bulk label removed", func() error {
			return bulk(b.svc.BulkRemoveLabel, contacts.BulkInput{ContactIDs: ids, LabelID: &labelID})
		}},
		{"bulk label again", func() error {
			return bulk(b.svc.BulkAddLabel, contacts.BulkInput{ContactIDs: ids, LabelID: &labelID})
		}},
		{"bulk field", func() error {
			return bulk(b.svc.BulkUpdateField, contacts.BulkInput{ContactIDs: ids, FieldDefinitionID: &field, Value: &gold})
		}},
		{"label rename", func() error {
			_, err := b.books.UpdateLabel(ctx, b.owner, b.scope(t, b.book).Book, label, books.LabelPatch{Name: optional.Some("Friends")})
			return err
		}},
		{"field removed", func() error {
			return b.books.DeleteField(ctx, b.owner, b.scope(t, b.book).Book, uuid.MustParse(field))
		}},
		{"import update", func() error {
			// The batch writer an import's update mode runs.
			rows := []contacts.BatchRow{{Contact: contacts.Contact{FirstName: "Card 1", JobTitle: "Importer",
				Emails: []contacts.Email{{Address: "card1@example.com"}}}}}
			return postgres.InTx(ctx, b.db.DB, func(tx *postgres.Tx) error {
				res, err := b.svc.ImportBatch(ctx, tx, b.team, b.book, rows, contacts.BatchOptions{Duplicates: contacts.UpdateDuplicates}, nil)
				if err == nil && (res.Updated != 1 || res.Created+res.Failed != 0) {
					err = fmt.Errorf("import: %+v, want one contact updated", res)
				}
				return err
			})
		}},
	} {
		before := make([]int64, len(ids))
		for i, id := range ids {
			before[i] = versionOf(t, b, id)
		}
		if err := step.do(); err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
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
	ch, err := b.svc.CardChanges(ctx, b.scope(t, b.book), start)
	if err != nil || len(ch.Changed) != 3 || len(ch.Deleted) != 0 || ch.Token <= start {
		t.Fatalf("changes since the start: %+v, %v", ch, err)
	}
	// A bulk delete leaves one tombstone per contact, listed as deleted.
	if err := bulk(b.svc.BulkDelete, contacts.BulkInput{ContactIDs: ids[:2]}); err != nil {
		t.Fatal(err)
	}
	after, err := b.svc.CardChanges(ctx, b.scope(t, b.book), ch.Token)
	if err != nil || len(after.Changed) != 0 || len(after.Deleted) != 2 || after.Deleted[0] == after.Deleted[1] {
		t.Fatalf("changes after the delete: %+v, %v", after, err)
	}
	if n := b.count(`SELECT count(*)::int FROM contact_versions WHERE contact_id = ANY($1::uuid[])`, ids[:2]); n != 0 {
		t.Fatalf("%d versions of deleted contacts", n)
	}
	// Deleting the book leaves no tombstones behind it.
	other := b.newBook("Scratch", false)
	b.newContacts(other, "Gone", 2)
	if err := b.books.Delete(ctx, b.owner, b.scope(t, other).Book); err != nil {
		t.Fatal(err)
	}
	if n := b.count(`SELECT count(*)::int FROM contact_tombstones WHERE book_id = $1`, other); n != 0 {
		t.Fatalf("%d tombstones of a deleted book", n)
	}
	if n := b.count(`SELECT count(*)::int FROM contact_versions WHERE book_id = $1`, other); n != 0 {
		t.Fatalf("%d versions of a deleted book's contacts", n)
	}

	// The prune forgets old tombstones, and the tokens before them.
	prune := contacts.NewTombstonePrune(b.db.DB, time.Hour, func() time.Time { return time.Now().Add(2 * time.Hour) })
	if n, err := prune.Prune(ctx); err != nil || n != 2 {
		t.Fatalf("prune: %d, %v", n, err)
	}
	if _, err := b.svc.CardChanges(ctx, b.scope(t, b.book), ch.Token); !errors.Is(err, contacts.ErrSyncToken) {
		t.Fatalf("a token before the pruned deletions: %v", err)
	}
	now, err := b.svc.CardChanges(ctx, b.scope(t, b.book), after.Token)
	if err != nil || now.Token != after.Token || len(now.Changed)+len(now.Deleted) != 0 {
		t.Fatalf("the newest token after the prune: %+v, %v", now, err)
	}
	if _, err := b.svc.CardChanges(ctx, b.scope(t, b.book), after.Token+1000); !errors.Is(err, contacts.ErrSyncToken) {
		t.Fatalf("a token from the future: %v", err)
	}
}

// TestConcurrentBulkChangesRenumberWithoutDeadlock: bulk changes of the
// same contacts, named in opposite orders, and single edits among them,
// all renumber the contacts (in id order) and none deadlocks.
func TestConcurrentBulkChangesRenumberWithoutDeadlock(t *testing.T) {
	t.Parallel()
	b := newBookEnv(t)
	ctx := context.Background()
	ids := b.seedContacts(b.book, 2000)
	reversed := make([]string, len(ids))
	for i, id := range ids {
		reversed[len(ids)-1-i] = id
	}
	first := b.label(b.book, books.LabelInput{Name: "First"}).String()
	second := b.label(b.book, books.LabelInput{Name: "Second"}).String()
	field := b.field(b.book, "tier", books.FieldText).String()
	start, err := b.svc.CardToken(ctx, b.scope(t, b.book))
	if err != nil {
		t.Fatal(err)
	}
	gold := "gold"
	sc := b.scope(t, b.book)
	patch := decode[contacts.Patch](t, map[string]any{"notes": "edited"})
	ops := []func() error{
		func() error {
			_, err := b.svc.BulkAddLabel(ctx, sc, contacts.BulkInput{ContactIDs: ids, LabelID: &first})
			return err
		},
		func() error {
			_, err := b.svc.BulkAddLabel(ctx, sc, contacts.BulkInput{ContactIDs: reversed, LabelID: &second})
			return err
		},
		func() error {
			_, err := b.svc.BulkUpdateField(ctx, sc, contacts.BulkInput{ContactIDs: reversed, FieldDefinitionID: &field, Value: &gold})
			return err
		},
		func() error {
			for _, id := range []string{ids[1999], ids[1000], ids[0]} {
				if _, err := b.svc.Update(ctx, b.owner, uuid.MustParse(id), patch); err != nil {
					return err
				}
			}
			return nil
		},
	}
	errs := make(chan error, len(ops))
	for _, op := range ops {
		go func() { errs <- op() }()
	}
	for range ops {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	ch, err := b.svc.CardChanges(ctx, b.scope(t, b.book), start)
	if err != nil || len(ch.Changed) != len(ids) {
		t.Fatalf("changed since the start: %d of %d, %v", len(ch.Changed), len(ids), err)
	}
	if n := b.count(`SELECT count(*)::int FROM contact_versions v JOIN contact_labels l ON l.contact_id = v.contact_id WHERE v.book_id = $1`, b.book); n != 2*len(ids) {
		t.Fatalf("%d labelled versions, want %d", n, 2*len(ids))
	}
}
