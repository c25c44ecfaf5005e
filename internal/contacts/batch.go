package contacts

import (
	"context"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/contactbook/contactbook/internal/apperr"
	"github.com/contactbook/contactbook/internal/events"
	"github.com/contactbook/contactbook/internal/postgres"
)

// BatchRow is one contact a batch writes: the contact (only the non-empty
// fields set) and the label names and custom values it carries.
type BatchRow struct {
	Contact Contact
	Labels  []string
	Custom  map[string]string
	// FieldTypes is, by key, the type a custom field the book lacks is
	// created with when the batch creates fields (text for a key it does
	// not name): a file that carries the types restores them.
	FieldTypes map[string]string
	// Refused fails the row before anything else is looked at: the caller
	// could not take one of its values (a malformed date) and says why
	// itself, so its failure names neither field nor message.
	Refused bool
}

// Duplicates says what a row does whose address belongs to a contact of
// the book or to an earlier row of the batch.
type Duplicates int

const (
	// SkipDuplicates leaves the contact as it is and counts the row skipped.
	SkipDuplicates Duplicates = iota + 1
	// UpdateDuplicates patches the contact with the row's values.
	UpdateDuplicates
	// CreateDuplicates creates another contact, unless the book requires
	// unique emails (then the row fails).
	CreateDuplicates
)

// BatchOptions are the choices of a batch.
type BatchOptions struct {
	Duplicates   Duplicates
	CreateLabels bool
	// CreateFields defines the custom fields the rows name that the book
	// lacks (a dry run checks the rows as if it had); without it such a
	// row fails.
	CreateFields bool
	DryRun       bool
	CreatedBy    *uuid.UUID
}

// BatchResult counts what a batch did (or, dry, would do).
type BatchResult struct {
	Created, Updated, Skipped, Failed int
	Failures                          []BatchFailure
}

// BatchFailure says why a row failed: Index is the row's place in the
// batch, Field the contact field at fault ("emails", "custom.tier",
// "labels"; "" when none is), Message what a person reads.
type BatchFailure struct {
	Index   int
	Field   string
	Message string
}

// BatchSeen carries, across the batches of one dry run, the addresses
// that earlier batches would have created: a dry run commits nothing, so
// the database cannot tell a later batch about them.
type BatchSeen map[string]struct{}

// ImportBatch writes (or, dry, evaluates) a batch of imported rows into the
// book inside tx, set-based: one insert (and one read) for the custom
// fields the rows name that the book lacks, when asked, one COPY for the
// new contacts, one UPDATE for the patched ones, one insert each for their
// labels and custom values, and their contact.created / contact.updated
// events through the outbox like every other write. seen is only read and
// filled in a dry run. The batch takes the rows: the contacts it creates
// are written into them, so the caller reads or reuses them only once it
// returns.
func (s *Service) ImportBatch(ctx context.Context, tx *postgres.Tx, teamID, bookID uuid.UUID, rows []BatchRow, opt BatchOptions, seen BatchSeen) (BatchResult, error) {
	b, err := s.startBatch(ctx, tx, bookID, rows, opt, seen)
	if err != nil {
		return BatchResult{}, err
	}
	if err := b.createFields(ctx, tx, rows); err != nil {
		return BatchResult{}, err
	}
	b.planRows(rows)
	b.patchCreated()
	if err := b.patchExisting(ctx, s.st, tx); err != nil {
		return b.res, err
	}
	b.res.Created = len(b.created)
	if opt.DryRun {
		b.remember()
		return b.res, nil
	}
	if err := b.createLabels(ctx, s.st, tx); err != nil {
		return b.res, err
	}
	if err := s.st.copyContacts(ctx, tx, b.created); err != nil {
		return b.res, s.importErr(err)
	}
	if err := s.st.updateImported(ctx, tx, b.updated); err != nil {
		return b.res, s.importErr(err)
	}
	if err := b.tag(ctx, s.st, tx); err != nil {
		return b.res, err
	}
	if err := s.emitTopicChanges(ctx, tx, teamID, bookID, b.tagged, nil, events.SubscribedImport, b.now); err != nil {
		return b.res, err
	}
	if err := b.setCustom(ctx, s.st, tx); err != nil {
		return b.res, err
	}
	return b.res, s.batchEvents(ctx, tx, teamID, b)
}

// batch is the state of one ImportBatch, filled phase by phase.
type batch struct {
	bookID uuid.UUID
	opt    BatchOptions
	seen   BatchSeen
	now    time.Time
	facts  bookFacts
	// owners maps each address of the batch that a contact of the book
	// holds to the oldest such contact.
	owners map[string]uuid.UUID
	res    BatchResult
	next   Contact // apply's scratch

	created    []*Contact
	createdIdx map[string]int // address -> index in created
	patched    map[uuid.UUID]*Contact
	patchOrder []uuid.UUID
	pending    map[*Contact][]importPatch
	updated    []*Contact
	newLabels  map[string]bool // lower names of the labels to create
	// labelNames are the labels to create, in the order the rows name
	// them first, so that the book lists them in the file's order.
	labelNames []string
	toLabel    []pendingLabels
	tagged     []labelPair // the (contact, label) pairs tag added
	custom     map[*Contact]map[string]string
}

// pendingLabels are the label keys a contact of the batch gets.
type pendingLabels struct {
	contact *Contact
	keys    []string
}

// startBatch loads what the rows are checked and matched against: the
// book's facts and the contacts already holding one of the rows' addresses.
func (s *Service) startBatch(ctx context.Context, tx *postgres.Tx, bookID uuid.UUID, rows []BatchRow, opt BatchOptions, seen BatchSeen) (*batch, error) {
	facts, err := s.st.bookFacts(ctx, tx, bookID)
	if err != nil {
		return nil, err
	}
	owners, err := s.st.emailOwners(ctx, tx, bookID, batchAddresses(rows))
	if err != nil {
		return nil, err
	}
	return &batch{
		bookID: bookID, opt: opt, seen: seen, now: s.now().UTC().Truncate(time.Microsecond),
		facts: facts, owners: owners,
		createdIdx: map[string]int{}, patched: map[uuid.UUID]*Contact{},
		pending: map[*Contact][]importPatch{}, newLabels: map[string]bool{},
		custom: map[*Contact]map[string]string{},
	}, nil
}

// batchAddresses lists every address of the rows (lower-cased), to find
// the contacts already holding one.
func batchAddresses(rows []BatchRow) []string {
	var addrs []string
	for i := range rows {
		for _, e := range rows[i].Contact.Emails {
			addrs = append(addrs, strings.ToLower(strings.TrimSpace(e.Address)))
		}
	}
	return addrs
}

// fail counts the row at index i failed.
func (b *batch) fail(i int, field, msg string) {
	b.res.Failed++
	b.res.Failures = append(b.res.Failures, BatchFailure{Index: i, Field: field, Message: msg})
}

// importErr classifies a failed write of a batch: the unique-email index
// refusing an address another writer took meanwhile fails the batch with
// a message that says so (the batch is retried and then sees the owner).
func (s *Service) importErr(err error) error {
	if postgres.IsUniqueViolation(err, duplicateEmailIndex) {
		return apperr.Wrap(err, apperr.DuplicateEmail, "Another contact in this book took one of the imported email addresses meanwhile, and the book requires unique emails.")
	}
	return err
}
