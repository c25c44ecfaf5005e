package contacts

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/google/uuid"

	"github.com/contactbook/contactbook/internal/apperr"
	"github.com/contactbook/contactbook/internal/books"
)

// planRows checks and normalises each row, matches it against the
// contacts of the book and the rows before it, and decides what it does:
// create a contact, patch one, be skipped, or fail.
func (b *batch) planRows(rows []BatchRow) {
	for i, r := range rows {
		if r.Refused {
			b.fail(i, "", "")
			continue
		}
		// Normalised in place: the batch takes the rows, and a patch or a
		// contact to create keeps pointing at its row.
		c := &rows[i].Contact
		c.normalize()
		if !b.checkCustom(i, r) {
			continue
		}
		labelKeys, problem := b.labelsOf(r)
		if problem != "" {
			b.fail(i, "labels", problem)
			continue
		}
		if b.placeDuplicate(i, r, c, labelKeys) {
			continue
		}
		b.create(i, r, c, labelKeys)
	}
}

// checkCustom fails the row when one of its custom values names no field
// of the book or does not fit the field's type. An empty value sets
// nothing and is not looked at. A value of a number, date or URL field
// loses the spaces around it, which it cannot hold; a text value is kept
// as written.
func (b *batch) checkCustom(i int, r BatchRow) bool {
	for key, v := range r.Custom {
		if v == "" {
			continue
		}
		f, ok := b.facts.fields[key]
		if !ok {
			msg := fmt.Sprintf("No custom field with the key %q in this book; create it first or import with create_labels=true.", key)
			if b.opt.CreateFields {
				msg = fmt.Sprintf("%q cannot be the key of a custom field: a key is a lower-case letter, then up to 63 lower-case letters, digits and _.", key)
			}
			b.fail(i, "custom."+key, msg)
			return false
		}
		if f.typ != string(books.FieldText) && strings.TrimSpace(v) != v {
			v = strings.TrimSpace(v)
			r.Custom[key] = v
		}
		if err := checkFieldValue(f.typ, v); err != nil {
			b.fail(i, "custom."+key, strings.Replace(errMessage(err), "`value`", "The value", 1))
			return false
		}
	}
	return true
}

// labelsOf resolves a row's label names; unknown names are created when
// asked, else they fail the row.
func (b *batch) labelsOf(r BatchRow) ([]string, string) {
	var out []string
	for _, name := range r.Labels {
		key := strings.ToLower(name)
		if _, ok := b.facts.labels[key]; !ok {
			if !b.opt.CreateLabels {
				return nil, fmt.Sprintf("The label %q does not exist in this book; create it first or import with create_labels=true.", name)
			}
			if !b.newLabels[key] {
				b.newLabels[key] = true
				b.labelNames = append(b.labelNames, name)
			}
		}
		out = append(out, key)
	}
	return out, ""
}

// duplicate finds the first address of c that a contact of the book
// (dupID), an earlier row of the batch (dupCreated, an index in created,
// else -1) or, dry, an earlier batch holds.
func (b *batch) duplicate(c Contact) (dupID uuid.UUID, dupCreated int, dupAddr string) {
	dupCreated = -1
	for _, e := range c.Emails {
		a := strings.ToLower(e.Address)
		if id, ok := b.owners[a]; ok {
			return id, dupCreated, a
		}
		if i, ok := b.createdIdx[a]; ok {
			return dupID, i, a
		}
		if _, ok := b.seen[a]; ok && b.opt.DryRun {
			return dupID, dupCreated, a
		}
	}
	return dupID, dupCreated, ""
}

// placeDuplicate deals with a row whose address is taken as the batch's
// Duplicates says; it reports whether the row is dealt with.
func (b *batch) placeDuplicate(i int, r BatchRow, c *Contact, labelKeys []string) bool {
	dupID, dupCreated, dupAddr := b.duplicate(*c)
	switch {
	case dupAddr != "" && b.opt.Duplicates == SkipDuplicates:
		b.res.Skipped++
		return true
	case dupAddr != "" && b.opt.Duplicates == UpdateDuplicates:
		b.patchLater(i, r, c, labelKeys, dupID, dupCreated)
		return true
	case dupAddr != "" && b.opt.Duplicates == CreateDuplicates && b.facts.uniqueEmails:
		b.fail(i, "emails", fmt.Sprintf("Another contact in this book already has the email address %s, and the book requires unique emails.", dupAddr))
		return true
	}
	return false
}

// create validates the row's contact and adds it to the contacts to create.
func (b *batch) create(i int, r BatchRow, c *Contact, labelKeys []string) {
	// The contact to create lives in the caller's row (ImportBatch takes
	// the rows), and is checked there: a batch allocates no contact of
	// its own per row.
	cp := c
	if err := cp.validate(); err != nil {
		b.fail(i, fieldOf(err), errMessage(err))
		return
	}
	cp.ID, cp.BookID, cp.CreatedBy, cp.CreatedAt, cp.UpdatedAt = uuid.New(), b.bookID, b.opt.CreatedBy, b.now, b.now
	b.created = append(b.created, cp)
	for _, e := range cp.Emails {
		a := strings.ToLower(e.Address)
		if _, ok := b.createdIdx[a]; !ok {
			b.createdIdx[a] = len(b.created) - 1
		}
	}
	if len(labelKeys) > 0 {
		b.toLabel = append(b.toLabel, pendingLabels{contact: cp, keys: labelKeys})
	}
	if len(r.Custom) > 0 {
		b.custom[cp] = r.Custom
	}
}

// fieldInMessage finds the field an error message names (`emails[0].address`).
var fieldInMessage = regexp.MustCompile("`([a-z_]+)")

// fieldOf names the contact field a validation error is about ("" when it
// names none).
func fieldOf(err error) string {
	if errors.Is(err, errNoName) {
		return ""
	}
	if m := fieldInMessage.FindStringSubmatch(errMessage(err)); m != nil {
		return m[1]
	}
	return ""
}

// errMessage is the message of a validation error as a person reads it.
func errMessage(err error) string {
	var ae *apperr.Error
	if errors.As(err, &ae) {
		if errors.Is(err, errNoName) {
			return "The row has none of first name, last name or company; a contact needs at least one."
		}
		return ae.Message
	}
	return err.Error()
}
