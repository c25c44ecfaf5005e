package csvsafe_test

import (
	"bytes"
	"encoding/csv"
	"testing"

	"github.com/contactbook/contactbook/internal/csvsafe"
)

func TestEveryFormulaCellIsNeutralised(t *testing.T) {
	t.Parallel()
	risky := []string{"=HYPERLINK(\"http://x\")", "+1", "-2+3", "@SUM(A1)", "\tx", "\rx", "'=1", "'+1", "'-1", "'@x", "'\tx", "''=1"}
	for _, v := range risky {
		got := csvsafe.Neutralise(v)
		if got != "'"+v {
			t.Errorf("Neutralise(%q) = %q, want a leading apostrophe", v, got)
		}
	}
	for _, v := range []string{"", "a", "a=1", "'a", "'", "''", "1-2", " =1", "Ada"} {
		if got := csvsafe.Neutralise(v); got != v {
			t.Errorf("Neutralise(%q) = %q, want it unchanged", v, got)
		}
	}
}

func TestRestoreUndoesNeutralise(t *testing.T) {
	t.Parallel()
	for _, v := range []string{"", "a", "=1", "'=1", "''=1", "'a", "'", "''", "-", "@", "'-", "x'=1"} {
		if got := csvsafe.Restore(csvsafe.Neutralise(v)); got != v {
			t.Errorf("Restore(Neutralise(%q)) = %q", v, got)
		}
	}
}

func TestWriterWritesNeutralisedCells(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	w := csvsafe.NewWriter(&buf)
	rec := []string{"=cmd|' /C calc'!A0", "plain", "-1"}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	w.Flush()
	if rec[0] != "=cmd|' /C calc'!A0" {
		t.Fatalf("Write changed its argument: %q", rec[0])
	}
	got, err := csv.NewReader(&buf).Read()
	if err != nil {
		t.Fatal(err)
	}
	if got[0] != "'=cmd|' /C calc'!A0" || got[1] != "plain" || got[2] != "'-1" {
		t.Fatalf("written %q", got)
	}
}
