package transfer

// Reading an uploaded file: the check at upload (records counted, nothing
// kept) and the walk over its rows that the import job does, both over
// the same readers.

import (
	"bytes"
	"errors"
	"io"

	"github.com/contactbook/contactbook/internal/apperr"
)

// parsed is a checked file: its text and how to read it.
type parsed struct {
	text  []byte
	total int
}

// check reads the whole file once, so that a file the import cannot read
// is refused before anything is queued: its encoding, its records, the
// mapping, the row limit. It returns the UTF-8 text and the record count.
func check(raw []byte, format Format, mapping map[string]string, keys fieldKeys) (parsed, error) {
	text, err := decodeText(raw)
	if err != nil {
		return parsed{}, err
	}
	total := 0
	// Records only: the rows are built (and their values checked) by
	// the job.
	err = eachRecord(bytes.NewReader(text), format, mapping, keys, func() error {
		if total++; total > MaxRows {
			return apperr.Invalidf("The file has more than %d rows; split it into several imports.", MaxRows)
		}
		return nil
	})
	if err != nil {
		return parsed{}, err
	}
	if total == 0 {
		if format == FormatVCard {
			return parsed{}, apperr.Invalidf("The file holds no vCard.")
		}
		return parsed{}, apperr.Invalidf("The file has a header row but no contacts.")
	}
	return parsed{text: text, total: total}, nil
}

// eachRecord calls fn for every record of the file, reading them without
// building their rows.
func eachRecord(text io.Reader, format Format, mapping map[string]string, keys fieldKeys, fn func() error) error {
	return walk(text, format, mapping, keys, 0, nil, fn)
}

// eachRow calls fn with every record of the file after the first skip.
func eachRow(text io.Reader, format Format, mapping map[string]string, keys fieldKeys, skip int, fn func(ImportRow) error) error {
	return walk(text, format, mapping, keys, skip, fn, nil)
}

// walk reads the records after the first skip, handing each to row as an
// import row, or, when row is nil, announcing it to record.
func walk(text io.Reader, format Format, mapping map[string]string, keys fieldKeys, skip int,
	row func(ImportRow) error, record func() error) error {
	fn := func(build func() ImportRow) error {
		if row == nil {
			return record()
		}
		return row(build())
	}
	if format == FormatVCard {
		if len(mapping) > 0 {
			return apperr.Invalidf("A mapping applies to CSV files only; a vCard's properties are read as they are.")
		}
		f := openVCard(text)
		return readRecords(f.next, f.row, skip, fn)
	}
	f, err := openCSV(text, mapping, keys)
	if err != nil {
		return err
	}
	// A count keeps no record: the reader may reuse one for the next.
	f.r.ReuseRecord = row == nil
	return readRecords(f.next, f.row, skip, fn)
}

// readRecords reads records with next until io.EOF and hands those after
// the first skip to fn, each with the function that builds its row (a
// count of the records builds none).
func readRecords[R any](next func() (R, error), row func(R) ImportRow, skip int,
	fn func(build func() ImportRow) error) error {
	for n := 1; ; n++ {
		rec, err := next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if n <= skip {
			continue
		}
		if err := fn(func() ImportRow { return row(rec) }); err != nil {
			return err
		}
	}
}
