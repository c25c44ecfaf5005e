package transfer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/contactbook/contactbook/internal/apperr"
	"github.com/contactbook/contactbook/internal/contacts"
	"github.com/contactbook/contactbook/internal/postgres"
	"github.com/contactbook/contactbook/internal/suppression"
)

// ChunkRows is how many rows one transaction writes, with the checkpoint:
// large enough for set-based statements to pay off, small enough that a
// chunk commits in well under a second and that the chunks in memory (the
// one written, the one parsed) keep a 100,000-row import under 50 MB of
// RSS: 5,000 took the process to 52-54 MB for the same time, 2,000 was 8 %
// slower, and 10,000 was 6 % faster but went past 150 MB in update mode.
const ChunkRows = 2500

// turnTime bounds one attempt of an import job; an import not done by
// then is snoozed and continues from its checkpoint at once (here or on
// another instance), so no attempt nears the job timeout after which River
// would take the job for one of a dead instance.
const turnTime = 20 * time.Second

// Jobs registers the import worker; imports have no periodic job.
func (s *Service) Jobs(w *river.Workers) ([]*river.PeriodicJob, error) {
	return nil, river.AddWorkerSafely(w, &importWorker{s: s, log: s.log})
}

type importWorker struct {
	river.WorkerDefaults[ImportArgs]
	s   *Service
	log *slog.Logger
}

// Work runs the import from its checkpoint. An attempt that errs is
// retried with backoff; the last one marks the import failed with the
// reason, so an import is never left running half-done.
func (w *importWorker) Work(ctx context.Context, job *river.Job[ImportArgs]) error {
	done, err := w.s.Run(ctx, job.Args.ImportID, turnTime)
	switch {
	case err == nil && !done:
		return river.JobSnooze(0)
	case err == nil:
		return nil
	case ctx.Err() != nil:
		// Shutdown: the committed chunks stay; the same job continues
		// from the checkpoint, here after a restart or on another
		// instance, without spending an attempt.
		return river.JobSnooze(0)
	}
	final := job.Attempt >= job.MaxAttempts || apperr.Is(err, apperr.NotFound) || apperr.Is(err, apperr.InvalidInput)
	if final {
		reason := "The import stopped: " + errorText(err)
		if ferr := w.s.fail(context.WithoutCancel(ctx), job.Args.ImportID, reason); ferr != nil {
			return errors.Join(err, ferr)
		}
		w.log.Warn("import failed", "import_id", job.Args.ImportID, "err", err)
		return river.JobCancel(err)
	}
	return err
}

func errorText(err error) string {
	var ae *apperr.Error
	if errors.As(err, &ae) && ae.Code != apperr.Internal {
		return ae.Message
	}
	return "a chunk of rows could not be written, after several attempts; the rows before it are imported (processed_rows counts them)."
}

// fileGoneReason fails an import whose stored file is gone.
const fileGoneReason = "The import stopped: its file is no longer stored; upload it again."

// errStopped ends a run whose import was canceled or is worked elsewhere.
var errStopped = errors.New("import no longer running here")

// Run works an import from its checkpoint for at most turn; done is false
// when time ran out first (the caller continues later). A dry run is
// worked whole in one turn: it writes nothing it could resume from.
func (s *Service) Run(ctx context.Context, id uuid.UUID, turn time.Duration) (done bool, err error) {
	started := s.now()
	var in Import
	err = postgres.InTx(ctx, s.db, func(tx *postgres.Tx) error {
		in, err = scanImport(tx.QueryRow(ctx, `SELECT `+importColumns+` FROM imports WHERE id = $1 FOR UPDATE`, id))
		if errors.Is(err, pgx.ErrNoRows) {
			return errStopped // deleted with its book
		}
		if err != nil {
			return err
		}
		if in.Status != StatusQueued && in.Status != StatusRunning {
			return errStopped
		}
		if in.DryRun {
			// A dry run starts over: it committed nothing but its counts.
			in.ProcessedRows, in.Created, in.Updated, in.Skipped, in.Failed, in.Errors = 0, 0, 0, 0, 0, nil
			_, err = tx.Exec(ctx, `UPDATE imports SET processed_rows = 0, created = 0, updated = 0, skipped = 0, failed = 0, errors = '[]' WHERE id = $1`, id)
			if err != nil {
				return err
			}
		}
		_, err = tx.Exec(ctx, `UPDATE imports SET status = 'running', started_at = COALESCE(started_at, $2) WHERE id = $1`, id, s.now().UTC())
		return err
	})
	if errors.Is(err, errStopped) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	// The file is read as the chunks are parsed, a piece at a time, never
	// whole.
	text, err := openStoredFile(ctx, s.db, id)
	if errors.Is(err, errFileGone) {
		// Canceled meanwhile (fail then changes nothing), or the file is
		// gone: never leave the import running.
		return true, s.fail(ctx, id, fileGoneReason)
	}
	if err != nil {
		return false, err
	}
	keys, err := s.fieldKeys(ctx, in.BookID, in.createLabels)
	if err != nil {
		return false, err
	}
	opt := in.batchOptions()
	seen := contacts.BatchSeen{}
	processed := in.ProcessedRows
	errTurnOver := errors.New("turn over")
	// The file is parsed one chunk ahead of the writes: the parse (Go
	// CPU) of the next chunk overlaps the database's work on this one.
	// The writes stay in order, one chunk at a time.
	chunks, parsed, recycle, stopParse := parseAhead(ctx, text, in, keys, processed)
	defer stopParse()
	for chunk := range chunks {
		if err = s.writeChunk(ctx, in, processed, chunk, opt, seen); err != nil {
			break
		}
		processed += len(chunk.rows)
		recycle(chunk)
		if !in.DryRun && s.now().Sub(started) > turn {
			err = errTurnOver
			break
		}
	}
	if err == nil {
		err = <-parsed
	}
	switch {
	case errors.Is(err, errTurnOver):
		return false, nil
	case errors.Is(err, errStopped):
		return true, nil
	case errors.Is(err, errFileGone):
		return true, s.fail(ctx, id, fileGoneReason)
	case err != nil:
		return false, err
	}
	return true, s.finish(ctx, id)
}

// parseAhead parses the import's rows after the first skip in a goroutine
// and hands them over in chunks of ChunkRows, at most one chunk ahead of
// the consumer. parsed yields the parse's outcome once chunks is closed;
// stop ends the parse early (the consumer gave up) and waits for it. The
// consumer hands each chunk it is done with to recycle, and the parse
// fills it again: two or three chunks serve the whole file.
func parseAhead(ctx context.Context, text io.Reader, in Import, keys fieldKeys, skip int) (chunks <-chan chunk, parsed <-chan error, recycle func(chunk), stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	out := make(chan chunk)
	free := make(chan chunk, 3)
	result := make(chan error, 1)
	done := make(chan struct{})
	send := func(c chunk) error {
		select {
		case out <- c:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	fresh := func() chunk {
		select {
		case c := <-free:
			return chunk{rows: c.rows[:0], from: c.from[:0]}
		default:
			return chunk{rows: make([]contacts.BatchRow, 0, ChunkRows), from: make([]rowSource, 0, ChunkRows)}
		}
	}
	go func() {
		defer close(done)
		defer close(out)
		c := fresh()
		err := eachRow(ctxReader{ctx, text}, in.Format, in.mapping, keys, skip, func(r ImportRow) error {
			row, from := r.split()
			c.rows, c.from = append(c.rows, row), append(c.from, from)
			if len(c.rows) < ChunkRows {
				return nil
			}
			// Sent before another is taken: once the consumer takes this
			// one, it has handed back the one it wrote.
			if err := send(c); err != nil {
				return err
			}
			c = fresh()
			return nil
		})
		if err == nil && len(c.rows) > 0 {
			err = send(c)
		}
		result <- err
	}()
	recycle = func(c chunk) {
		// Let go of the rows' values until the chunk is filled again.
		clear(c.rows[:cap(c.rows)])
		clear(c.from[:cap(c.from)])
		select {
		case free <- c:
		default:
		}
	}
	return out, result, recycle, func() {
		cancel()
		// Drain what the parser had ready, so that it sees the cancel.
		for range out {
		}
		<-done
	}
}

// ctxReader stops reading once ctx ends, so that a parse given up stops
// at its next read.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// writeChunk writes a chunk of rows and the checkpoint after it in one
// transaction, provided the import is still running from where this run
// thinks it is (else another run moved it, or it was canceled).
func (s *Service) writeChunk(ctx context.Context, in Import, from int, rows chunk, opt contacts.BatchOptions, seen contacts.BatchSeen) error {
	return postgres.InTx(ctx, s.db, func(tx *postgres.Tx) error {
		var (
			status    string
			processed int
			nErrors   int
		)
		err := tx.QueryRow(ctx, `SELECT status, processed_rows, jsonb_array_length(errors) FROM imports WHERE id = $1 FOR UPDATE`, in.ID).
			Scan(&status, &processed, &nErrors)
		if errors.Is(err, pgx.ErrNoRows) {
			return errStopped
		}
		if err != nil {
			return err
		}
		if status != StatusRunning || processed != from {
			return errStopped
		}
		// The contacts' trigram index takes new entries into its pending
		// list; a larger list for this transaction lets the chunk's entries
		// be merged in one pass below instead of every 4 MB.
		if _, err := tx.Exec(ctx, `SET LOCAL gin_pending_list_limit = '64MB'`); err != nil {
			return err
		}
		res, rowErrs, err := s.writeRows(ctx, tx, in.teamID, in.BookID, rows, opt, seen)
		if err != nil {
			return err
		}
		if !opt.DryRun {
			if err := s.keepSuppressed(ctx, tx, in.BookID, rows.rows); err != nil {
				return err
			}
		}
		if !opt.DryRun && res.Created > 0 {
			// Merge the chunk's trigram entries into the index here, in one
			// pass, rather than leave a large pending list for the next
			// writer of the table to merge inline. Only the index's owner
			// may; a service connected as another role leaves it to the
			// next writer or autovacuum.
			if _, err := tx.Exec(ctx, `
				SELECT gin_clean_pending_list(c.oid) FROM pg_class c
				WHERE c.oid = 'contacts_search_trgm_idx'::regclass AND pg_has_role(c.relowner, 'USAGE')`); err != nil {
				return err
			}
		}
		keep := rowErrs[:min(len(rowErrs), max(0, maxErrors-nErrors))]
		errs, err := json.Marshal(nonNilErrors(keep))
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `
			UPDATE imports SET processed_rows = processed_rows + $2, created = created + $3, updated = updated + $4,
				skipped = skipped + $5, failed = failed + $6, errors = errors || $7::jsonb
			WHERE id = $1`, in.ID, len(rows.rows), res.Created, res.Updated, res.Skipped, res.Failed, errs)
		return err
	})
}

func nonNilErrors(e []RowError) []RowError {
	if e == nil {
		return []RowError{}
	}
	return e
}

// finish marks a running import succeeded and drops its file.
func (s *Service) finish(ctx context.Context, id uuid.UUID) error {
	return postgres.InTx(ctx, s.db, func(tx *postgres.Tx) error {
		ct, err := tx.Exec(ctx, `UPDATE imports SET status = 'succeeded', finished_at = $2 WHERE id = $1 AND status = 'running'`, id, s.now().UTC())
		if err != nil {
			return err
		}
		if ct.RowsAffected() == 0 {
			return nil
		}
		_, err = tx.Exec(ctx, `DELETE FROM import_files WHERE import_id = $1`, id)
		return err
	})
}

// fail marks a queued or running import failed with the reason; the rows
// of its committed chunks stay, as processed_rows and the counts say.
func (s *Service) fail(ctx context.Context, id uuid.UUID, reason string) error {
	return postgres.InTx(ctx, s.db, func(tx *postgres.Tx) error {
		_, err := tx.Exec(ctx, `
			UPDATE imports SET status = 'failed', failure_reason = $2, finished_at = $3
			WHERE id = $1 AND status IN ('queued', 'running')`, id, fmt.Sprint(reason), s.now().UTC())
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `DELETE FROM import_files WHERE import_id = $1`, id)
		return err
	})
}

// keepSuppressed marks the imported contacts whose addresses are all
// suppressed already, as the one suppression operation marks contacts:
// an import neither lifts a suppression nor makes one, and a contact it
// brings in with a suppressed address is as unreachable as any other.
func (s *Service) keepSuppressed(ctx context.Context, tx *postgres.Tx, bookID uuid.UUID, rows []contacts.BatchRow) error {
	// Most books have no suppression in force: one lookup spares hashing
	// and sending every address of the chunk.
	some, err := suppression.AnyInForce(ctx, tx, bookID)
	if err != nil || !some {
		return err
	}
	var addrs []string
	for _, r := range rows {
		for _, e := range r.Contact.Emails {
			addrs = append(addrs, strings.ToLower(strings.TrimSpace(e.Address)))
		}
	}
	if len(addrs) == 0 {
		return nil
	}
	// Matched by hash: an erased person's suppressions hold no address.
	inForce, err := suppression.InForce(ctx, tx, bookID, addrs)
	if err != nil || len(inForce) == 0 {
		return err
	}
	suppressed := make([]string, 0, len(inForce))
	for a := range inForce {
		suppressed = append(suppressed, a)
	}
	// Every address passed is in force already: nothing is recorded, the
	// contacts holding only such addresses are marked.
	_, err = s.suppressor.Suppress(ctx, tx, bookID, suppressed, suppression.ReasonManual, suppression.SourceImport, nil)
	return err
}
