package contacts

import (
	"context"
	"strings"

	"github.com/google/uuid"

	"github.com/contactbook/contactbook/internal/postgres"
)

// importPatch is a row that updates a contact, applied once the contact is
// loaded.
type importPatch struct {
	index   int
	contact *Contact // the row's, normalised
	labels  []string
	custom  map[string]string
}

// patchLater keeps the row as a patch of the contact it matched: an
// existing one (dupID), one created earlier in the batch (dupCreated >= 0),
// or, dry, one an earlier batch would have created.
func (b *batch) patchLater(i int, r BatchRow, c *Contact, labelKeys []string, dupID uuid.UUID, dupCreated int) {
	if dupID == uuid.Nil && dupCreated < 0 {
		// A dry run's earlier batch would have created it.
		b.res.Updated++
		return
	}
	var target *Contact
	if dupCreated >= 0 {
		target = b.created[dupCreated]
	} else if target = b.patched[dupID]; target == nil {
		target = &Contact{ID: dupID}
		b.patched[dupID] = target
		b.patchOrder = append(b.patchOrder, dupID)
	}
	// Counted as updated; a patch that turns out invalid moves
	// to failed when applied.
	b.res.Updated++
	// The patch is applied once the existing contacts are loaded;
	// keep it with the target.
	b.pending[target] = append(b.pending[target], importPatch{index: i, contact: c, labels: labelKeys, custom: r.Custom})
}

// apply patches cur with the rows' values in turn; a row whose patch
// would make the contact invalid fails alone.
func (b *batch) apply(target *Contact, cur Contact) (Contact, bool) {
	changed := false
	// The patched contact is built in the batch's one scratch contact, so
	// that checking it copies nothing to the heap.
	next := &b.next
	for _, p := range b.pending[target] {
		*next = cur
		next.Emails, next.Phones = append([]Email(nil), cur.Emails...), append([]Phone(nil), cur.Phones...)
		next.Addresses, next.Dates, next.Socials = append([]Address(nil), cur.Addresses...), append([]Date(nil), cur.Dates...), append([]Social(nil), cur.Socials...)
		mergeImported(next, *p.contact)
		next.normalize()
		if err := next.validate(); err != nil {
			b.res.Updated--
			b.fail(p.index, fieldOf(err), errMessage(err))
			continue
		}
		cur, changed = *next, true
		if len(p.labels) > 0 {
			b.toLabel = append(b.toLabel, pendingLabels{contact: target, keys: p.labels})
		}
		if len(p.custom) > 0 {
			if b.custom[target] == nil {
				b.custom[target] = map[string]string{}
			}
			for k, v := range p.custom {
				b.custom[target][k] = v
			}
		}
	}
	return cur, changed
}

// patchCreated applies the rows that patch a contact created earlier in
// the batch.
func (b *batch) patchCreated() {
	for _, cp := range b.created {
		if len(b.pending[cp]) > 0 {
			*cp, _ = b.apply(cp, *cp)
		}
	}
}

// patchExisting loads the existing contacts to patch, whole, and applies
// their rows; a contact deleted meanwhile skips them.
func (b *batch) patchExisting(ctx context.Context, st store, db postgres.DB) error {
	if len(b.patchOrder) == 0 {
		return nil
	}
	existing, err := st.byIDs(ctx, db, b.bookID, b.patchOrder)
	if err != nil {
		return err
	}
	byID := make(map[uuid.UUID]int, len(existing))
	for i := range existing {
		byID[existing[i].ID] = i
	}
	for _, id := range b.patchOrder {
		target := b.patched[id]
		i, ok := byID[id]
		if !ok {
			// Deleted meanwhile: its rows have nothing to update.
			b.res.Updated -= len(b.pending[target])
			b.res.Skipped += len(b.pending[target])
			continue
		}
		cur, changed := b.apply(target, existing[i])
		if !changed {
			continue
		}
		cur.UpdatedAt = b.now
		*target = cur
		b.updated = append(b.updated, target)
	}
	return nil
}

// remember notes, in a dry run, the addresses the batch would have
// created, for the batches after it.
func (b *batch) remember() {
	for _, cp := range b.created {
		for _, e := range cp.Emails {
			b.seen[strings.ToLower(e.Address)] = struct{}{}
		}
	}
}
