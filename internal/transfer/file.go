package transfer

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/contactbook/contactbook/internal/postgres"
)

// The stored file of an import travels in pieces both ways, so that
// neither the upload nor the job holds a second copy of it: the upload
// streams it into import_files with a binary COPY (an INSERT's parameter
// is copied whole into the connection's buffer first), and the job reads
// it back a piece at a time (the column is stored uncompressed, so a
// substring reads only the pages it spans).

// filePiece is how much of the stored file the job reads per query.
const filePiece = 256 << 10

// errFileGone is a stored file deleted while the job read it (the import
// was canceled or failed meanwhile).
var errFileGone = errors.New("the import's file is no longer stored")

// storeFile writes the file of import id into import_files inside tx.
func storeFile(ctx context.Context, tx *postgres.Tx, id uuid.UUID, text []byte) error {
	// PostgreSQL's binary COPY: the signature, flags and header extension,
	// one tuple of two fields (uuid, bytea), and the trailer.
	head := make([]byte, 0, 64)
	head = append(head, "PGCOPY\n\xff\r\n\x00"...)
	head = binary.BigEndian.AppendUint32(head, 0)
	head = binary.BigEndian.AppendUint32(head, 0)
	head = binary.BigEndian.AppendUint16(head, 2)
	head = binary.BigEndian.AppendUint32(head, 16)
	head = append(head, id[:]...)
	head = binary.BigEndian.AppendUint32(head, uint32(len(text)))
	body := io.MultiReader(bytes.NewReader(head), bytes.NewReader(text), bytes.NewReader([]byte{0xff, 0xff}))
	if _, err := tx.Conn().PgConn().CopyFrom(ctx, body, `COPY import_files (import_id, content) FROM STDIN (FORMAT binary)`); err != nil {
		return fmt.Errorf("store import file: %w", err)
	}
	return nil
}

// storedFile reads the stored file of an import from the start.
type storedFile struct {
	ctx  context.Context
	db   postgres.DB
	id   uuid.UUID
	off  int64
	size int64
}

// openStoredFile opens the file of import id; errFileGone when there is none.
func openStoredFile(ctx context.Context, db postgres.DB, id uuid.UUID) (*bufio.Reader, error) {
	f := &storedFile{ctx: ctx, db: db, id: id}
	err := db.QueryRow(ctx, `SELECT octet_length(content) FROM import_files WHERE import_id = $1`, id).Scan(&f.size)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, errFileGone
	}
	if err != nil {
		return nil, fmt.Errorf("open import file: %w", err)
	}
	return bufio.NewReaderSize(f, filePiece), nil
}

// Read reads the next piece of the file into p.
func (f *storedFile) Read(p []byte) (int, error) {
	if f.off >= f.size {
		return 0, io.EOF
	}
	dst := pieceScanner{p: p}
	err := f.db.QueryRow(f.ctx, `SELECT substring(content FROM $2 FOR $3) FROM import_files WHERE import_id = $1`,
		f.id, f.off+1, min(int64(len(p)), f.size-f.off)).Scan(&dst)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, errFileGone
	}
	if err != nil {
		return 0, fmt.Errorf("read import file: %w", err)
	}
	if dst.n == 0 {
		return 0, io.ErrUnexpectedEOF
	}
	f.off += int64(dst.n)
	return dst.n, nil
}

// pieceScanner copies a bytea straight from the connection's buffer into
// the reader's.
type pieceScanner struct {
	p []byte
	n int
}

// ScanBytes takes the value (valid only during the call).
func (s *pieceScanner) ScanBytes(v []byte) error {
	s.n = copy(s.p, v)
	return nil
}
