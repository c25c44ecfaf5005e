package transfer

import (
	"context"

	"github.com/google/uuid"

	"github.com/contactbook/contactbook/internal/contacts"
	"github.com/contactbook/contactbook/internal/postgres"
)

// Import modes: what a row whose address belongs to a contact of the book
// does.
const (
	ModeSkip   Mode = "skip"
	ModeUpdate Mode = "update"
	ModeCreate Mode = "create"
)

// ImportRow is one record of an imported file: the contact it describes
// (only the non-empty fields set), the label names and custom values it
// carries, and which file column each field came from (to name the column
// of a row error).
type ImportRow struct {
	Row     int
	Contact contacts.Contact
	Labels  []string
	Custom  map[string]string
	// FieldTypes is the type of a custom field the file says (a vCard's
	// VALUE), by key: a field the import creates gets it.
	FieldTypes map[string]string
	// Columns maps a contact field ("emails", "first_name", "custom.tier",
	// "labels") to the vCard property it was read from; a CSV row leaves
	// it nil and names the column from its record (column).
	Columns map[string]string
	// Problem, when set, fails the row before anything else is looked at
	// (a value the reader could not take, such as a malformed date).
	Problem *RowError

	csv    *csvFile
	record []string
}

// rowSource is what a row error needs of an import row: its number, its
// reader's problem, and where each field was read from.
type rowSource struct {
	row     int
	problem *RowError
	columns map[string]string
	csv     *csvFile
	record  []string
}

// split parts the row into what the batch writer takes and what its
// errors are named from.
func (r ImportRow) split() (contacts.BatchRow, rowSource) {
	return contacts.BatchRow{Contact: r.Contact, Labels: r.Labels, Custom: r.Custom, FieldTypes: r.FieldTypes, Refused: r.Problem != nil},
		rowSource{row: r.Row, problem: r.Problem, columns: r.Columns, csv: r.csv, record: r.record}
}

// column names the file column (or vCard property) a contact field
// ("emails", "custom.tier") of the row was read from.
func (r rowSource) column(field string) string {
	if r.csv != nil {
		return r.csv.column(r.record, field)
	}
	return r.columns[field]
}

// chunk is up to ChunkRows rows of the file: the batch writer's rows and,
// index for index, their sources.
type chunk struct {
	rows []contacts.BatchRow
	from []rowSource
}

// RowError says why a row failed.
type RowError struct {
	Row     int    `json:"row"`
	Column  string `json:"column"`
	Message string `json:"message"`
}

// batchOptions are the import's choices as the contacts batch writer
// takes them.
func (in Import) batchOptions() contacts.BatchOptions {
	return contacts.BatchOptions{Duplicates: duplicates(in.Mode), CreateLabels: in.createLabels, CreateFields: in.createLabels,
		DryRun: in.DryRun, CreatedBy: in.CreatedBy}
}

// duplicates is what a mode asks of the batch writer.
func duplicates(mode Mode) contacts.Duplicates {
	switch mode {
	case ModeSkip:
		return contacts.SkipDuplicates
	case ModeUpdate:
		return contacts.UpdateDuplicates
	case ModeCreate:
		return contacts.CreateDuplicates
	}
	return 0
}

// writeRows hands a chunk's rows to the contacts batch writer and names
// each failure by the row's number and file column.
func (s *Service) writeRows(ctx context.Context, tx *postgres.Tx, teamID, bookID uuid.UUID, c chunk, opt contacts.BatchOptions, seen contacts.BatchSeen) (contacts.BatchResult, []RowError, error) {
	res, err := s.contacts.ImportBatch(ctx, tx, teamID, bookID, c.rows, opt, seen)
	return res, rowErrors(c.from, res.Failures), err
}

// rowErrors turns the batch writer's failures into row errors: a refused
// row reports its reader's problem, any other the file column of the
// field at fault.
func rowErrors(from []rowSource, failures []contacts.BatchFailure) []RowError {
	if failures == nil {
		return nil
	}
	out := make([]RowError, len(failures))
	for i, f := range failures {
		r := from[f.Index]
		if r.problem != nil {
			out[i] = RowError{Row: r.row, Column: r.problem.Column, Message: r.problem.Message}
			continue
		}
		out[i] = RowError{Row: r.row, Message: f.Message}
		if f.Field != "" {
			out[i].Column = r.column(f.Field)
		}
	}
	return out
}
