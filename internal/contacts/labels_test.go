package contacts_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/contactbook/contactbook/internal/apperr"
	"github.com/contactbook/contactbook/internal/books"
	"github.com/contactbook/contactbook/internal/contacts"
)

// TestLabels: a contact takes labels of its own book only (another book's
// label is invalid, an unknown one not found); adding twice or removing an
// absent label is silent, with no event; each change is one
// contact.updated and leaves updated_at alone (that follows the contact's
// own fields); deleting a label takes it off its contacts.
func TestLabels(t *testing.T) {
	t.Parallel()
	b := newBookEnv(t)
	ctx := context.Background()
	book := b.book
	c, err := b.svc.Create(ctx, b.scope(t, book), decode[contacts.CreateInput](t, map[string]any{"first_name": "Ada"}))
	if err != nil {
		t.Fatal(err)
	}
	color := "#112233"
	vip := b.label(book, books.LabelInput{Name: "VIP", Color: &color})
	other := b.newBook("Other", false)
	foreign := b.label(other, books.LabelInput{Name: "Elsewhere"})
	before := b.events()
	labels := func() []contacts.LabelRef {
		t.Helper()
		got, err := b.svc.Get(ctx, b.owner, c.ID)
		if err != nil {
			t.Fatal(err)
		}
		if !got.UpdatedAt.Equal(c.UpdatedAt) {
			t.Fatalf("a label change rewrote the contact row: updated_at %v, was %v", got.UpdatedAt, c.UpdatedAt)
		}
		return got.Labels
	}

	b.clock.Advance(time.Second)
	if added, err := b.svc.AddLabel(ctx, b.owner, c.ID, vip); err != nil || !added {
		t.Fatalf("add: %v, %v", added, err)
	}
	if l := labels(); len(l) != 1 || l[0].ID != vip || l[0].Name != "VIP" || l[0].Color != "#112233" {
		t.Fatalf("labels %+v", l)
	}
	if added, err := b.svc.AddLabel(ctx, b.owner, c.ID, vip); err != nil || added {
		t.Fatalf("add again: %v, %v; want silent", added, err)
	}
	if _, err := b.svc.AddLabel(ctx, b.owner, c.ID, foreign); !apperr.Is(err, apperr.InvalidInput) {
		t.Fatalf("another book's label: %v", err)
	}
	if _, err := b.svc.AddLabel(ctx, b.owner, c.ID, uuid.New()); !apperr.Is(err, apperr.NotFound) {
		t.Fatalf("unknown label: %v", err)
	}
	if _, err := b.svc.AddLabel(ctx, b.owner, uuid.New(), vip); !apperr.Is(err, apperr.NotFound) {
		t.Fatalf("unknown contact: %v", err)
	}
	if n := b.events() - before; n != 1 {
		t.Fatalf("%d events after adding, want 1", n)
	}

	for _, id := range []uuid.UUID{vip, vip, uuid.New()} { // then absent, then unknown: silent
		if err := b.svc.RemoveLabel(ctx, b.owner, c.ID, id); err != nil {
			t.Fatalf("remove: %v", err)
		}
	}
	if l := labels(); len(l) != 0 {
		t.Fatalf("label not removed: %+v", l)
	}
	if n := b.events() - before; n != 2 {
		t.Fatalf("%d events after removing, want 2", n)
	}

	// Deleting the label removes it from contacts.
	if _, err := b.svc.AddLabel(ctx, b.owner, c.ID, vip); err != nil {
		t.Fatal(err)
	}
	if err := b.books.DeleteLabel(ctx, b.owner, b.scope(t, book).Book, vip); err != nil {
		t.Fatal(err)
	}
	if l := labels(); len(l) != 0 || b.count(`SELECT count(*)::int FROM contact_labels WHERE label_id = $1`, vip) != 0 {
		t.Fatal("deleted label still on the contact")
	}
}
