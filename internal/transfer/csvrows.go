package transfer

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/contactbook/contactbook/internal/apperr"
	"github.com/contactbook/contactbook/internal/contacts"
	"github.com/contactbook/contactbook/internal/csvsafe"
	"github.com/contactbook/contactbook/internal/validate"
	"github.com/contactbook/contactbook/internal/vcards"
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
// service's earlier CSV export (a column per label), which still imports.
const primarySuffix = " (primary)"

// csvFile reads the records of a CSV file (already UTF-8).
type csvFile struct {
	r      *csv.Reader
	header []string
	cols   []target
	record int // the number of the last record read, the header being 1
	zones  zoneNames
}

// openCSV reads the header and resolves its columns. The file is read
// as a stream: only the header line is looked at twice (for the
// delimiter).
func openCSV(text io.Reader, mapping map[string]string, keys fieldKeys) (*csvFile, error) {
	comma, text, err := sniffDelimiter(text)
	if err != nil {
		return nil, err
	}
	r := csv.NewReader(text)
	r.Comma = comma
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
	if f.cols, err = mapColumns(header, mapping, keys); err != nil {
		return nil, err
	}
	return f, nil
}

// sniffDelimiter reads the file up to the end of its header line (the
// first newline outside quotes) to detect the delimiter, and returns the
// file whole again.
func sniffDelimiter(text io.Reader) (rune, io.Reader, error) {
	br, ok := text.(*bufio.Reader)
	if !ok {
		br = bufio.NewReader(text)
	}
	var head []byte
	quoted := false
	for {
		line, err := br.ReadSlice('\n')
		head = append(head, line...)
		quoted = quoted != (bytes.Count(line, []byte{'"'})%2 == 1)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return 0, nil, err
		}
		if err != nil || !quoted {
			break
		}
	}
	return detectDelimiter(head), io.MultiReader(bytes.NewReader(head), br), nil
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
	// The stream under the reader failed (the stored file went away, the
	// job's context ended): not a defect of the file.
	return nil, fmt.Errorf("read the file: %w", err)
}

// row turns a record into an import row. The row keeps the record, not
// a map of field to column: the column is looked up (column) only for a
// row that fails.
func (f *csvFile) row(rec []string) ImportRow {
	out := ImportRow{Row: f.record, csv: f, record: rec}
	c := &out.Contact
	var full string
	var addrs []addressCell
	var entries []entry
	problem := func(i int, format string, args ...any) {
		if out.Problem == nil {
			out.Problem = &RowError{Row: f.record, Column: columnName(f.header, i), Message: fmt.Sprintf(format, args...)}
		}
	}
	for i, cell := range rec {
		if i >= len(f.cols) {
			break
		}
		t := f.cols[i]
		// Cells are read without the spaces around them (a blank cell is
		// empty), except notes and custom values, which are kept as
		// written: their spaces and line breaks are the value's (the
		// batch trims the value of a number, date or URL field).
		v := strings.TrimSpace(cell)
		if v == "" {
			continue
		}
		if t.num > 0 {
			entries = entryCell(entries, t, i, v, problem)
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
		case "last_name":
			c.LastName = v
		case "full_name":
			full = v
		case "company":
			c.Company = v
		case "job_title":
			c.JobTitle = v
		case "notes":
			c.Notes = cell
		case "website":
			c.Website = v
		case "time_zone":
			if v != "" && !f.zones.valid(v) {
				problem(i, "%q is not an IANA time zone name such as Europe/Berlin.", v)
			} else if v != "" {
				c.TimeZone = &v
			}
		case "birthday":
			d, ok := vcards.ParseDate(v)
			if !ok {
				problem(i, "%q is not a full date; a birthday is stored with its year, as YYYY-MM-DD.", v)
			} else if d != "" {
				c.Birthday = &d
			}
		case "starred":
			c.Starred = boolCell(i, v, problem)
		case "emails":
			for _, part := range splitList(v, ";") {
				addr, primary := strings.CutSuffix(part, primarySuffix)
				c.Emails = append(c.Emails, contacts.Email{Address: strings.TrimSpace(addr), Label: contacts.EmailLabel(label), Primary: primary})
			}
		case "phones":
			for _, part := range splitList(v, ";") {
				num, primary := strings.CutSuffix(part, primarySuffix)
				c.Phones = append(c.Phones, contacts.Phone{Number: strings.TrimSpace(num), Label: contacts.PhoneLabel(label), Primary: primary})
			}
		case "addresses":
			var a *contacts.Address
			for k := range addrs {
				if addrs[k].label == label && addrs[k].labelColumn == t.labelColumn {
					a = &addrs[k].Address
					break
				}
			}
			if a == nil {
				addrs = append(addrs, addressCell{Address: contacts.Address{Label: contacts.AddressLabel(label)}, label: label, labelColumn: t.labelColumn})
				a = &addrs[len(addrs)-1].Address
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
		case "socials":
			for _, part := range splitList(v, ";") {
				c.Socials = append(c.Socials, contacts.Social{Label: contacts.SocialLabel(label), Value: part})
			}
		case "dates":
			d, ok := vcards.ParseDate(v)
			if !ok || d == "" {
				problem(i, "%q is not a date; write it as YYYY-MM-DD.", v)
				continue
			}
			c.Dates = append(c.Dates, contacts.Date{Label: label, Value: d})
		case "labels":
			out.Labels = append(out.Labels, labelNames(v)...)
		case "custom":
			if out.Custom == nil {
				out.Custom = map[string]string{}
			}
			out.Custom[t.label] = cell
		}
	}
	for _, a := range addrs {
		c.Addresses = append(c.Addresses, a.Address)
	}
	if entries != nil {
		addEntries(c, entries)
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

// entry is a numbered entry of a record: the columns emails.2.address,
// emails.2.label and emails.2.primary fill the second email.
type entry struct {
	kind    string
	num     int
	label   string
	value   string // the address, number, profile or date
	primary bool
	address contacts.Address
}

// entryCell reads cell i of a numbered entry (t) into the record's
// entries.
func entryCell(entries []entry, t target, i int, v string, problem func(int, string, ...any)) []entry {
	k := -1
	for j := range entries {
		if entries[j].kind == t.kind && entries[j].num == t.num {
			k = j
			break
		}
	}
	if k < 0 {
		entries = append(entries, entry{kind: t.kind, num: t.num})
		k = len(entries) - 1
	}
	e := &entries[k]
	switch t.part {
	case "label":
		e.label = v
	case "primary":
		e.primary = boolCell(i, v, problem)
	case "street":
		e.address.Street = v
	case "city":
		e.address.City = v
	case "state":
		e.address.State = v
	case "zip":
		e.address.Zip = v
	case "country":
		e.address.Country = v
	case "value":
		if t.kind == "dates" {
			d, ok := vcards.ParseDate(v)
			if !ok || d == "" {
				problem(i, "%q is not a date; write it as YYYY-MM-DD.", v)
				return entries
			}
			v = d
		}
		e.value = v
	default: // address, number
		e.value = v
	}
	return entries
}

// addEntries gives the contact the record's numbered entries, in the
// order of their numbers and before the entries of label columns; an
// entry with a label but no value is nothing.
func addEntries(c *contacts.Contact, entries []entry) {
	slices.SortStableFunc(entries, func(a, b entry) int { return a.num - b.num })
	var (
		emails    []contacts.Email
		phones    []contacts.Phone
		addresses []contacts.Address
		socials   []contacts.Social
		dates     []contacts.Date
	)
	for _, e := range entries {
		label := entryLabel(e.kind, e.label)
		switch {
		case e.kind == "addresses" && e.address != (contacts.Address{}):
			e.address.Label = contacts.AddressLabel(label)
			addresses = append(addresses, e.address)
		case e.value == "":
		case e.kind == "emails":
			emails = append(emails, contacts.Email{Address: e.value, Label: contacts.EmailLabel(label), Primary: e.primary})
		case e.kind == "phones":
			phones = append(phones, contacts.Phone{Number: e.value, Label: contacts.PhoneLabel(label), Primary: e.primary})
		case e.kind == "socials":
			socials = append(socials, contacts.Social{Label: contacts.SocialLabel(label), Value: e.value})
		case e.kind == "dates":
			dates = append(dates, contacts.Date{Label: label, Value: e.value})
		}
	}
	c.Emails = append(emails, c.Emails...)
	c.Phones = append(phones, c.Phones...)
	c.Addresses = append(addresses, c.Addresses...)
	c.Socials = append(socials, c.Socials...)
	c.Dates = append(dates, c.Dates...)
}

// zoneNames remembers the time zone names a file's rows were checked
// for: loading a zone reads the zone database.
type zoneNames map[string]bool

// valid is validate.TimeZone, remembered per name.
func (z *zoneNames) valid(name string) bool {
	ok, seen := (*z)[name]
	if !seen {
		if *z == nil {
			*z = zoneNames{}
		}
		ok = validate.TimeZone(name)
		if len(*z) < 1000 { // a file of made-up names is not remembered whole
			(*z)[name] = ok
		}
	}
	return ok
}

// addressCell gathers the parts of one address of a record: the
// columns of the same label (and label column) fill one address.
type addressCell struct {
	contacts.Address
	label       string
	labelColumn int
}

// column names the file column a field of the record was read from: the
// first column of the field holding a value (a date only when it is
// one), as a row error names it.
func (f *csvFile) column(rec []string, field string) string {
	for i, v := range rec {
		if i >= len(f.cols) {
			break
		}
		if strings.TrimSpace(v) == "" {
			continue
		}
		t := f.cols[i]
		if t.num > 0 && (t.part == "label" || t.part == "primary") {
			continue // the entry's value names it
		}
		var fields []string
		switch t.kind {
		case "first_name", "last_name", "company", "job_title", "notes", "website", "time_zone", "birthday",
			"emails", "phones", "addresses", "socials", "labels":
			fields = []string{t.kind}
		case "full_name":
			fields = []string{"first_name", "last_name"}
		case "dates":
			if d, ok := vcards.ParseDate(strings.TrimSpace(v)); ok && d != "" {
				fields = []string{t.kind}
			}
		case "custom":
			fields = []string{"custom." + t.label}
		}
		for _, name := range fields {
			if name == field {
				return columnName(f.header, i)
			}
		}
	}
	return ""
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

// boolCell reads cell i as a yes or no, and reports the row's problem
// when it is neither.
func boolCell(i int, v string, problem func(int, string, ...any)) bool {
	b, ok := vcards.ParseBool(v)
	if !ok {
		problem(i, "%q is not true or false.", v)
	}
	return b
}
