package transfer

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/contactbook/contactbook/internal/apperr"
	"github.com/contactbook/contactbook/internal/contacts"
	"github.com/contactbook/contactbook/internal/csvsafe"
	"github.com/contactbook/contactbook/internal/validate"
)

// Limits of an imported file.
const (
	// MaxFileBytes bounds the uploaded file (413 beyond).
	MaxFileBytes = 50 << 20
	// MaxRows bounds the records of a file (400 beyond).
	MaxRows = 200000
	// maxColumns bounds a CSV record: no export has more than a few hundred.
	maxColumns = 1000
)

// primarySuffix marks the primary email or phone in a cell of this
// service's own CSV export.
const primarySuffix = " (primary)"

// csvFile reads the records of a CSV file (already UTF-8).
type csvFile struct {
	r      *csv.Reader
	header []string
	cols   []target
	record int // the number of the last record read, the header being 1
}

// openCSV reads the header and resolves its columns.
func openCSV(text []byte, mapping map[string]string, customKeys map[string]bool) (*csvFile, error) {
	r := csv.NewReader(bytes.NewReader(text))
	r.Comma = detectDelimiter(text)
	r.FieldsPerRecord = -1
	r.ReuseRecord = false
	f := &csvFile{r: r}
	header, err := f.next()
	if errors.Is(err, io.EOF) {
		return nil, apperr.Invalidf("The file is empty.")
	}
	if err != nil {
		return nil, err
	}
	f.header = header
	if f.cols, err = mapColumns(header, mapping, customKeys); err != nil {
		return nil, err
	}
	return f, nil
}

// next reads the next record, answering for the file's defects.
func (f *csvFile) next() ([]string, error) {
	rec, err := f.r.Read()
	if err == nil {
		f.record++
		if len(rec) > maxColumns {
			return nil, apperr.Invalidf("Row %d has %d columns; a file may have at most %d.", f.record, len(rec), maxColumns)
		}
		// A cell that an export wrote with a leading apostrophe, so that a
		// spreadsheet reads it as text, gets its value back.
		for i, c := range rec {
			rec[i] = csvsafe.Restore(c)
		}
		return rec, nil
	}
	if errors.Is(err, io.EOF) {
		return nil, err
	}
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		switch {
		case errors.Is(pe.Err, csv.ErrQuote):
			return nil, apperr.Invalidf("Row %d (line %d): a quoted field is never closed or a quote stands inside an unquoted field; check the quotes from that line on.", f.record+1, pe.StartLine)
		case errors.Is(pe.Err, csv.ErrBareQuote):
			return nil, apperr.Invalidf("Row %d (line %d): a quote stands inside an unquoted field; quote the whole field and double the inner quote.", f.record+1, pe.Line)
		}
		return nil, apperr.Invalidf("Row %d (line %d) cannot be read: %v.", f.record+1, pe.Line, pe.Err)
	}
	return nil, apperr.Invalidf("The file cannot be read as CSV: %v.", err)
}

// row turns a record into an import row.
func (f *csvFile) row(rec []string) ImportRow {
	out := ImportRow{Row: f.record, Columns: map[string]string{}, Custom: map[string]string{}}
	c := &out.Contact
	var full string
	addrs := map[string]*contacts.Address{}
	var addrOrder []string
	problem := func(i int, format string, args ...any) {
		if out.Problem == nil {
			out.Problem = &RowError{Row: f.record, Column: columnName(f.header, i), Message: fmt.Sprintf(format, args...)}
		}
	}
	note := func(field string, i int) {
		if _, ok := out.Columns[field]; !ok {
			out.Columns[field] = columnName(f.header, i)
		}
	}
	for i, v := range rec {
		if i >= len(f.cols) {
			break
		}
		t := f.cols[i]
		v = strings.TrimSpace(v)
		if v == "" {
			continue
		}
		label := t.label
		if t.labelColumn >= 0 && t.labelColumn < len(rec) && strings.TrimSpace(rec[t.labelColumn]) != "" {
			label = entryLabel(t.kind, rec[t.labelColumn])
		}
		switch t.kind {
		case "ignore":
		case "first_name":
			c.FirstName = v
			note(t.kind, i)
		case "last_name":
			c.LastName = v
			note(t.kind, i)
		case "full_name":
			full = v
			note("first_name", i)
			note("last_name", i)
		case "company":
			c.Company = v
			note(t.kind, i)
		case "job_title":
			c.JobTitle = v
			note(t.kind, i)
		case "notes":
			c.Notes = v
			note(t.kind, i)
		case "website":
			c.Website = v
			note(t.kind, i)
		case "time_zone":
			if v != "" && !validate.TimeZone(v) {
				problem(i, "%q is not an IANA time zone name such as Europe/Berlin.", v)
			} else if v != "" {
				c.TimeZone = &v
			}
			note(t.kind, i)
		case "birthday":
			d, ok := parseDate(v)
			if !ok {
				problem(i, "%q is not a full date; a birthday is stored with its year, as YYYY-MM-DD.", v)
			} else if d != "" {
				c.Birthday = &d
			}
			note(t.kind, i)
		case "starred":
			b, ok := parseBool(v)
			if !ok {
				problem(i, "%q is not true or false.", v)
			}
			c.Starred = b
		case "emails":
			for _, part := range splitList(v, ";") {
				addr, primary := strings.CutSuffix(part, primarySuffix)
				c.Emails = append(c.Emails, contacts.Email{Address: strings.TrimSpace(addr), Label: label, Primary: primary})
			}
			note(t.kind, i)
		case "phones":
			for _, part := range splitList(v, ";") {
				num, primary := strings.CutSuffix(part, primarySuffix)
				c.Phones = append(c.Phones, contacts.Phone{Number: strings.TrimSpace(num), Label: label, Primary: primary})
			}
			note(t.kind, i)
		case "addresses":
			key := fmt.Sprintf("%s/%d", label, t.labelColumn)
			a := addrs[key]
			if a == nil {
				a = &contacts.Address{Label: label}
				addrs[key] = a
				addrOrder = append(addrOrder, key)
			}
			switch t.part {
			case "street":
				a.Street = v
			case "city":
				a.City = v
			case "state":
				a.State = v
			case "zip":
				a.Zip = v
			case "country":
				a.Country = v
			}
			note(t.kind, i)
		case "socials":
			for _, part := range splitList(v, ";") {
				c.Socials = append(c.Socials, contacts.Social{Label: label, Value: part})
			}
			note(t.kind, i)
		case "dates":
			d, ok := parseDate(v)
			if !ok || d == "" {
				problem(i, "%q is not a date; write it as YYYY-MM-DD.", v)
				continue
			}
			c.Dates = append(c.Dates, contacts.Date{Label: label, Value: d})
			note(t.kind, i)
		case "labels":
			out.Labels = append(out.Labels, labelNames(v)...)
			note(t.kind, i)
		case "custom":
			out.Custom[t.label] = v
			note("custom."+t.label, i)
		}
	}
	for _, k := range addrOrder {
		c.Addresses = append(c.Addresses, *addrs[k])
	}
	if full != "" && c.FirstName == "" && c.LastName == "" {
		if i := strings.LastIndexByte(full, ' '); i > 0 {
			c.FirstName, c.LastName = strings.TrimSpace(full[:i]), strings.TrimSpace(full[i+1:])
		} else {
			c.FirstName = full
		}
	}
	return out
}

// splitList splits a cell holding several values.
func splitList(v, sep string) []string {
	var out []string
	for _, p := range strings.Split(v, sep) {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// labelNames reads a labels cell: names separated by ";" or "," (or
// Google's " ::: "), without Google's system group "* myContacts" and the
// star Google puts before starred groups.
func labelNames(v string) []string {
	v = strings.ReplaceAll(v, ":::", ";")
	var out []string
	for _, p := range strings.FieldsFunc(v, func(r rune) bool { return r == ';' || r == ',' }) {
		p = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(p), "* "))
		if p == "" || strings.EqualFold(p, "myContacts") || strings.EqualFold(p, "* myContacts") {
			continue
		}
		out = append(out, p)
	}
	return out
}

// dateLayouts are the date forms exports write: ISO, then the US form of
// Outlook and Google.
var dateLayouts = []string{time.DateOnly, "2006/01/02", "20060102", "1/2/2006", "01/02/2006"}

// parseDate reads a date into YYYY-MM-DD; "" with ok for Outlook's
// "0/0/00" (no date).
func parseDate(v string) (string, bool) {
	if v == "0/0/00" || v == "0/0/0000" {
		return "", true
	}
	for _, l := range dateLayouts {
		if t, err := time.Parse(l, v); err == nil {
			return t.Format(time.DateOnly), true
		}
	}
	return "", false
}

func parseBool(v string) (bool, bool) {
	switch strings.ToLower(v) {
	case "true", "yes", "y", "1", "x", "starred":
		return true, true
	case "false", "no", "n", "0":
		return false, true
	}
	return false, false
}
