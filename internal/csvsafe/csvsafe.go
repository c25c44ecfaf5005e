// Package csvsafe writes CSV that a spreadsheet opens as data, never as
// formulas (CWE-1236), and reads such cells back as they were. Every CSV
// the service writes goes through Writer; every CSV it imports passes its
// cells through Restore, so an export imported again gives back the same
// values.
package csvsafe

import (
	"encoding/csv"
	"io"
)

// formulaStart reports whether c makes a spreadsheet read a cell as a
// formula (=, +, -, @) or lets one hide behind a control character (tab,
// carriage return).
func formulaStart(c byte) bool {
	switch c {
	case '=', '+', '-', '@', '\t', '\r':
		return true
	}
	return false
}

// risky reports whether s starts with a formula character, possibly after
// apostrophes: "=1", "'=1" and "”=1" are, "'a" and "a=1" are not. A cell
// of apostrophes and a formula is risky too so that Neutralise and Restore
// stay exact inverses whatever the value.
func risky(s string) bool {
	i := 0
	for i < len(s) && s[i] == '\'' {
		i++
	}
	return i < len(s) && formulaStart(s[i])
}

// Neutralise is the cell to write for value s: s with a leading apostrophe
// when it is risky, which every spreadsheet shows as text and hides.
func Neutralise(s string) string {
	if risky(s) {
		return "'" + s
	}
	return s
}

// Restore undoes Neutralise: it drops the one leading apostrophe that
// Neutralise added. A cell it did not write stays as it is.
func Restore(s string) string {
	if len(s) > 1 && s[0] == '\'' && risky(s[1:]) {
		return s[1:]
	}
	return s
}

// Writer is a csv.Writer that neutralises every cell.
type Writer struct {
	w   *csv.Writer
	buf []string
}

// NewWriter writes CSV to w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: csv.NewWriter(w)} }

// Write writes one record, each cell neutralised; record is not changed.
func (w *Writer) Write(record []string) error {
	w.buf = w.buf[:0]
	for _, c := range record {
		w.buf = append(w.buf, Neutralise(c))
	}
	return w.w.Write(w.buf)
}

// Flush writes any buffered data to the underlying writer.
func (w *Writer) Flush() { w.w.Flush() }

// Error reports any error of a previous Write or Flush.
func (w *Writer) Error() error { return w.w.Error() }
