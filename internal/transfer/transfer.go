// Package transfer moves contacts in and out of a book: imports of CSV
// (Google Contacts, Outlook, Mailchimp and this service's own columns) and
// vCard 3.0/4.0 files, run as River jobs that work the file in chunks with
// their progress and checkpoint in the imports table, and exports of a
// book (or a filter of it) as CSV or vCard streamed row by row.
package transfer

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/contactbook/contactbook/internal/access"
	"github.com/contactbook/contactbook/internal/apperr"
	"github.com/contactbook/contactbook/internal/audit"
	"github.com/contactbook/contactbook/internal/auth"
	"github.com/contactbook/contactbook/internal/contacts"
	"github.com/contactbook/contactbook/internal/enum"
	"github.com/contactbook/contactbook/internal/jobs"
	"github.com/contactbook/contactbook/internal/postgres"
	"github.com/contactbook/contactbook/internal/suppression"
)

// Format is how a file of contacts is written.
type Format string

// Formats of a file.
const (
	FormatCSV   Format = "csv"
	FormatVCard Format = "vcard"
)

// Formats is every file format.
var Formats = []Format{FormatCSV, FormatVCard}

// ParseFormat reads an import's `format`.
func ParseFormat(s string) (Format, error) {
	return enum.Parse(Formats, "`format`", s)
}

// Mode is what an import does with a row whose address belongs to a
// contact of the book.
type Mode string

// Modes is every import mode.
var Modes = []Mode{ModeSkip, ModeUpdate, ModeCreate}

// ParseMode reads an import's `mode` ("" is skip).
func ParseMode(s string) (Mode, error) {
	if s == "" {
		return ModeSkip, nil
	}
	return enum.Parse(Modes, "`mode`", s)
}

// Statuses of an import.
const (
	StatusQueued    = "queued"
	StatusRunning   = "running"
	StatusSucceeded = "succeeded"
	StatusFailed    = "failed"
	StatusCanceled  = "canceled"
)

// Statuses is every import status, in the order an import may pass them.
var Statuses = []string{StatusQueued, StatusRunning, StatusSucceeded, StatusFailed, StatusCanceled}

// maxErrors bounds the row errors an import keeps.
const maxErrors = 1000

// Import is an import as the API returns it.
type Import struct {
	ID            uuid.UUID  `json:"id"`
	BookID        uuid.UUID  `json:"book_id"`
	Status        string     `json:"status"`
	Format        Format     `json:"format"`
	Mode          Mode       `json:"mode"`
	DryRun        bool       `json:"dry_run"`
	TotalRows     int        `json:"total_rows"`
	ProcessedRows int        `json:"processed_rows"`
	Created       int        `json:"created"`
	Updated       int        `json:"updated"`
	Skipped       int        `json:"skipped"`
	Failed        int        `json:"failed"`
	Errors        []RowError `json:"errors"`
	FailureReason *string    `json:"failure_reason"`
	CreatedBy     *uuid.UUID `json:"created_by"`
	CreatedAt     time.Time  `json:"created_at"`
	StartedAt     *time.Time `json:"started_at"`
	FinishedAt    *time.Time `json:"finished_at"`

	teamID       uuid.UUID
	createLabels bool
	mapping      map[string]string
}

// Request is what POST /books/{id}/imports asks for.
type Request struct {
	File         []byte
	Format       string // "" detects
	Mapping      string // JSON object, header -> target; "" maps by name
	Mode         string // "" is skip
	DryRun       bool
	CreateLabels bool
}

// Service starts, lists and cancels imports and writes exports.
type Service struct {
	db       postgres.Pool
	contacts *contacts.Service
	queue    Queue
	now      func() time.Time
	log      *slog.Logger
	// suppressor marks imported contacts whose addresses are suppressed.
	suppressor suppression.Suppressor
}

// Queue enqueues a job in the caller's transaction (the River client,
// jobs.Client).
type Queue interface {
	InsertTx(ctx context.Context, tx pgx.Tx, args river.JobArgs, opts *river.InsertOpts) (*rivertype.JobInsertResult, error)
}

// Deps are what the service works with.
type Deps struct {
	DB       postgres.Pool
	Contacts *contacts.Service
	// Queue takes the import jobs, which the service's own worker works
	// (Jobs).
	Queue Queue
	Now   func() time.Time // nil: time.Now
	Log   *slog.Logger     // nil: discarded
}

// NewService wires the service.
func NewService(d Deps) *Service {
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.Log == nil {
		d.Log = slog.New(slog.DiscardHandler)
	}
	return &Service{db: d.DB, contacts: d.Contacts, queue: d.Queue, now: d.Now, log: d.Log, suppressor: suppression.New(d.Now).WithOutbox(d.Contacts.Outbox())}
}

// Start checks the file and queues its import (member): the import row,
// the file and the job are written in one transaction.
func (s *Service) Start(ctx context.Context, sc access.Scope, req Request) (Import, error) {
	if err := sc.Require(ctx, auth.RoleMember); err != nil {
		return Import{}, err
	}
	b := sc.Book
	mode, err := ParseMode(req.Mode)
	if err != nil {
		return Import{}, err
	}
	in := Import{ID: uuid.New(), BookID: b.ID, Status: StatusQueued, Mode: mode, DryRun: req.DryRun, Errors: []RowError{},
		CreatedBy: sc.Actor.CreatedBy(), CreatedAt: s.now().UTC().Truncate(time.Microsecond), teamID: b.TeamID, createLabels: req.CreateLabels}
	u, err := s.readUpload(ctx, b.ID, req)
	if err != nil {
		return Import{}, err
	}
	in.Format, in.mapping, in.TotalRows = u.format, u.mapping, u.total
	mapping, _ := json.Marshal(nonNilMap(in.mapping))
	err = postgres.InTx(ctx, s.db, func(tx *postgres.Tx) error {
		_, err := tx.Exec(ctx, `
			INSERT INTO imports (id, book_id, team_id, status, format, mode, dry_run, create_labels, mapping, total_rows, created_by, created_at)
			VALUES (@id, @book_id, @team_id, @status, @format, @mode, @dry_run, @create_labels, @mapping, @total_rows, @created_by, @created_at)`,
			pgx.StrictNamedArgs{
				"id": in.ID, "book_id": in.BookID, "team_id": in.teamID, "status": in.Status, "format": in.Format, "mode": in.Mode,
				"dry_run": in.DryRun, "create_labels": in.createLabels, "mapping": mapping, "total_rows": in.TotalRows,
				"created_by": in.CreatedBy, "created_at": in.CreatedAt,
			})
		if err != nil {
			return err
		}
		// The file is stored as UTF-8 text: the job need not guess again.
		if err := storeFile(ctx, tx, in.ID, u.text); err != nil {
			return err
		}
		if _, err := s.queue.InsertTx(ctx, tx, ImportArgs{ImportID: in.ID}, nil); err != nil {
			return apperr.Wrap(err, apperr.Internal, "queue import")
		}
		return audit.Record(ctx, tx, audit.Entry{
			TeamID: in.teamID, Actor: audit.From(sc.Actor), Action: "import.started", TargetType: "import", TargetID: in.ID.String(),
			Details: map[string]any{"book_id": in.BookID, "format": in.Format, "mode": in.Mode, "dry_run": in.DryRun, "total_rows": in.TotalRows},
		})
	})
	if err != nil {
		return Import{}, err
	}
	return in, nil
}

func nonNilMap(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}

var errImportNotFound = apperr.NotFoundf("No import with this id in the book.")

// importColumns are an import's columns, in scanImport's order.
const importColumns = `id, book_id, team_id, status, format, mode, dry_run, create_labels, mapping, total_rows, processed_rows,
	created, updated, skipped, failed, errors, failure_reason, created_by, created_at, started_at, finished_at`

func scanImport(row pgx.Row) (Import, error) {
	var (
		in     Import
		errs   []byte
		mapRaw []byte
	)
	err := row.Scan(&in.ID, &in.BookID, &in.teamID, &in.Status, &in.Format, &in.Mode, &in.DryRun, &in.createLabels, &mapRaw,
		&in.TotalRows, &in.ProcessedRows, &in.Created, &in.Updated, &in.Skipped, &in.Failed, &errs, &in.FailureReason,
		&in.CreatedBy, &in.CreatedAt, &in.StartedAt, &in.FinishedAt)
	if err != nil {
		return in, err
	}
	if err := json.Unmarshal(errs, &in.Errors); err != nil {
		return in, err
	}
	if in.Errors == nil {
		in.Errors = []RowError{}
	}
	return in, json.Unmarshal(mapRaw, &in.mapping)
}

// List returns the book's imports, newest first (viewer).
func (s *Service) List(ctx context.Context, sc access.Scope) ([]Import, error) {
	if err := sc.Require(ctx, auth.RoleViewer); err != nil {
		return nil, err
	}
	b := sc.Book
	rows, _ := s.db.Query(ctx, `SELECT `+importColumns+` FROM imports WHERE book_id = $1 ORDER BY created_at DESC, id DESC LIMIT 200`, b.ID)
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Import, error) { return scanImport(r) })
	if err != nil {
		return nil, err
	}
	if out == nil {
		out = []Import{}
	}
	return out, nil
}

// Get returns an import of the book (viewer).
func (s *Service) Get(ctx context.Context, sc access.Scope, id uuid.UUID) (Import, error) {
	if err := sc.Require(ctx, auth.RoleViewer); err != nil {
		return Import{}, err
	}
	b := sc.Book
	return s.byID(ctx, s.db, b.ID, id, false)
}

func (s *Service) byID(ctx context.Context, db postgres.DB, bookID, id uuid.UUID, lock bool) (Import, error) {
	q := `SELECT ` + importColumns + ` FROM imports WHERE id = $1 AND book_id = $2`
	if lock {
		q += ` FOR UPDATE`
	}
	in, err := scanImport(db.QueryRow(ctx, q, id, bookID))
	if errors.Is(err, pgx.ErrNoRows) {
		return Import{}, errImportNotFound
	}
	return in, err
}

// Cancel stops a queued or running import (member): the chunk in flight,
// if any, finishes (its rows are written and counted), then the job stops
// at its next chunk. An import already over is returned as it is.
func (s *Service) Cancel(ctx context.Context, sc access.Scope, id uuid.UUID) (Import, error) {
	if err := sc.Require(ctx, auth.RoleMember); err != nil {
		return Import{}, err
	}
	b := sc.Book
	var out Import
	err := postgres.InTx(ctx, s.db, func(tx *postgres.Tx) error {
		in, err := s.byID(ctx, tx, b.ID, id, true)
		if err != nil {
			return err
		}
		if in.Status == StatusQueued || in.Status == StatusRunning {
			now := s.now().UTC()
			if _, err := tx.Exec(ctx, `UPDATE imports SET status = 'canceled', finished_at = $2 WHERE id = $1`, id, now); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `DELETE FROM import_files WHERE import_id = $1`, id); err != nil {
				return err
			}
			in.Status, in.FinishedAt = StatusCanceled, &now
		}
		out = in
		return nil
	})
	return out, err
}

// ImportArgs is the job of one import; unique while queued or running, so
// one import is worked by one instance at a time.
type ImportArgs struct {
	ImportID uuid.UUID `json:"import_id"`
}

// Kind names the job in river_job.
func (ImportArgs) Kind() string { return "contact_import" }

// InsertOpts makes the job unique per import.
func (ImportArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{MaxAttempts: 5, UniqueOpts: river.UniqueOpts{ByArgs: true, ByState: jobs.QueuedStates}}
}

// upload is an import's file as read and checked before anything is
// queued: its format (detected when not given), the mapping sent, the
// custom field keys its columns may name, and every record read.
type upload struct {
	parsed
	format  Format
	mapping map[string]string
	keys    fieldKeys
}

// readUpload makes the checks of an import's request that Start and
// Preview share: the mapping, the format, and every record of the file.
func (s *Service) readUpload(ctx context.Context, bookID uuid.UUID, req Request) (upload, error) {
	var u upload
	if strings.TrimSpace(req.Mapping) != "" {
		if err := json.Unmarshal([]byte(req.Mapping), &u.mapping); err != nil {
			return u, apperr.Invalidf("`mapping` must be a JSON object of column name to field, such as {\"E-mail\": \"emails.work\"}.")
		}
	}
	if len(req.File) == 0 {
		return u, apperr.Invalidf("The file is empty.")
	}
	if req.Format == "" {
		text, err := decodeText(req.File)
		if err != nil {
			return u, err
		}
		u.format = detectFormat(text)
	} else {
		format, err := ParseFormat(req.Format)
		if err != nil {
			return u, err
		}
		u.format = format
	}
	var err error
	if u.keys, err = s.fieldKeys(ctx, bookID, req.CreateLabels); err != nil {
		return u, err
	}
	u.parsed, err = check(req.File, u.format, u.mapping, u.keys)
	return u, err
}

// fieldKeys are the custom field keys an import's columns may name: any
// when the import creates the fields the book lacks (create_labels, which
// covers labels and custom fields alike), else the book's.
func (s *Service) fieldKeys(ctx context.Context, bookID uuid.UUID, create bool) (fieldKeys, error) {
	if create {
		return fieldKeys{any: true}, nil
	}
	keys, err := s.contacts.CustomFieldKeys(ctx, bookID)
	return fieldKeys{book: keys}, err
}

// PreviewRows is how many records a preview shows.
const PreviewRows = 5

// Preview is what an import of a file would read, before it starts: the
// format, the number of records, each CSV column with the field it goes
// to (detected by name, or from the mapping sent), and the first records
// (CSV: as written; vCard: name, email, company as read).
type Preview struct {
	Format    Format          `json:"format"`
	TotalRows int             `json:"total_rows"`
	Columns   []PreviewColumn `json:"columns"`
	Rows      [][]string      `json:"rows"`
}

// PreviewColumn is a CSV column and where its values go.
type PreviewColumn struct {
	Header string `json:"header"`
	Target string `json:"target"`
}

// Preview reads a file as Start would, without queueing anything
// (member): the same checks, the same column detection.
func (s *Service) Preview(ctx context.Context, sc access.Scope, req Request) (Preview, error) {
	if err := sc.Require(ctx, auth.RoleMember); err != nil {
		return Preview{}, err
	}
	b := sc.Book
	u, err := s.readUpload(ctx, b.ID, req)
	if err != nil {
		return Preview{}, err
	}
	out := Preview{Format: u.format, TotalRows: u.total, Columns: []PreviewColumn{}, Rows: [][]string{}}
	if out.Format == FormatVCard {
		f := openVCard(bytes.NewReader(u.text))
		for len(out.Rows) < PreviewRows {
			card, err := f.next()
			if err != nil {
				break // the check read every card: only the end stops here
			}
			c := f.row(card).Contact
			email := ""
			if len(c.Emails) > 0 {
				email = c.Emails[0].Address
			}
			out.Rows = append(out.Rows, []string{strings.TrimSpace(c.FirstName + " " + c.LastName), email, c.Company})
		}
		return out, nil
	}
	f, err := openCSV(bytes.NewReader(u.text), u.mapping, u.keys)
	if err != nil {
		return Preview{}, err
	}
	for i, h := range f.header {
		out.Columns = append(out.Columns, PreviewColumn{Header: h, Target: f.cols[i].String()})
	}
	for len(out.Rows) < PreviewRows {
		rec, err := f.next()
		if err != nil {
			break // the check read every record: only the end stops here
		}
		out.Rows = append(out.Rows, rec)
	}
	return out, nil
}
