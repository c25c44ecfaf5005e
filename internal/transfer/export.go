package transfer

import (
	"bufio"
	"context"
	"io"
	"strconv"
	"strings"

	"github.com/google/uuid"

	"github.com/emersion/go-vcard"

	"github.com/contactbook/contactbook/internal/access"
	"github.com/contactbook/contactbook/internal/audit"
	"github.com/contactbook/contactbook/internal/auth"
	"github.com/contactbook/contactbook/internal/contacts"
	"github.com/contactbook/contactbook/internal/csvsafe"
	"github.com/contactbook/contactbook/internal/enum"
	"github.com/contactbook/contactbook/internal/vcards"
)

// flushEvery is how many contacts an export writes between flushes to the
// client: the response leaves in steady pieces and nothing piles up.
const flushEvery = 500

// Download is the file an export writes, announced before its first byte.
type Download struct {
	ContentType string
	Filename    string
}

// Export writes the contacts of the book the filter selects (member: an
// export takes the whole book away, which a viewer may only look at) in
// format (csv or vcard) to the writer open returns, called once the
// request is known to be good; flush pushes what was written so far to
// the client. Memory stays flat: contacts are read through one cursor and
// written as they come. segmentID is the segment f.Segment was compiled
// from (nil: none), for the audit entry, which records the filters used.
// A read API key may export: an export is a read, and reporting and sync
// tools hold such keys (the key acts as a member for reads).
func (s *Service) Export(ctx context.Context, sc access.Scope, asked string, f contacts.Filter, segmentID *uuid.UUID,
	open func(Download) io.Writer, flush func()) error {
	if err := sc.Require(ctx, auth.RoleMember); err != nil {
		return err
	}
	b := sc.Book
	format := FormatCSV
	if asked != "" {
		var err error
		if format, err = enum.Parse(Formats, "The query parameter format", asked); err != nil {
			return err
		}
	}
	// An export changes nothing, so its entry is written before the file
	// is: a download that is cut short was still asked for.
	if err := audit.Record(ctx, s.db, audit.Entry{
		TeamID: b.TeamID, Actor: audit.From(sc.Actor), Action: "contacts.exported", TargetType: "book", TargetID: b.ID.String(),
		Details: map[string]any{"format": format, "q": f.Q, "label_id": f.LabelID, "segment_id": segmentID, "starred": f.Starred},
	}); err != nil {
		return err
	}
	name := "contacts-" + b.Slug
	if format == FormatCSV {
		var (
			out    *bufio.Writer
			cw     *csvsafe.Writer
			layout contacts.Extent
			rec    []string
		)
		n := 0
		err := s.contacts.Each(ctx, sc, f, func(e contacts.Extent) error {
			layout = csvLayout(e)
			out = bufio.NewWriterSize(open(Download{ContentType: "text/csv; charset=utf-8", Filename: name + ".csv"}), 64<<10)
			cw = csvsafe.NewWriter(out)
			header := exportHeader(layout)
			rec = make([]string, len(header))
			return cw.Write(header)
		}, func(c contacts.Contact) error {
			csvRecord(rec, c, layout)
			if err := cw.Write(rec); err != nil {
				return err
			}
			if n++; n%flushEvery == 0 {
				cw.Flush()
				if err := out.Flush(); err != nil {
					return err
				}
				flush()
			}
			return nil
		})
		if err != nil {
			return err
		}
		cw.Flush()
		if err := cw.Error(); err != nil {
			return err
		}
		return out.Flush()
	}
	var (
		out   *bufio.Writer
		enc   *vcard.Encoder
		types map[string]string
	)
	n := 0
	err := s.contacts.Each(ctx, sc, f, func(e contacts.Extent) error {
		types = make(map[string]string, len(e.Fields))
		for _, fd := range e.Fields {
			types[fd.Key] = fd.Type
		}
		out = bufio.NewWriterSize(open(Download{ContentType: "text/vcard; charset=utf-8", Filename: name + ".vcf"}), 64<<10)
		enc = vcard.NewEncoder(out)
		return nil
	}, func(c contacts.Contact) error {
		if err := enc.Encode(vcards.Encode(c, types)); err != nil {
			return err
		}
		if n++; n%flushEvery == 0 {
			if err := out.Flush(); err != nil {
				return err
			}
			flush()
		}
		return nil
	})
	if err != nil {
		return err
	}
	return out.Flush()
}

// csvLayout is the extent the CSV export writes: as many numbered entries
// of each kind as the contact with the most needs, and at least one
// email, phone and address, so that even a file of contacts without any
// shows where they go.
func csvLayout(e contacts.Extent) contacts.Extent {
	e.Emails, e.Phones, e.Addresses = max(e.Emails, 1), max(e.Phones, 1), max(e.Addresses, 1)
	return e
}

// exportHeader is the header of this service's CSV: every column is named
// by its mapping target, so the file imports back without a mapping. A
// contact's emails, phones, addresses, profiles and dates are numbered
// entries (emails.1.address, emails.1.label, emails.1.primary), in the
// contact's order, each with its label: a column per label could hold
// neither the order across labels nor two addresses of one label.
func exportHeader(e contacts.Extent) []string {
	h := []string{"first_name", "last_name", "company", "job_title"}
	entries := func(kind string, n int) {
		for i := 1; i <= n; i++ {
			for _, p := range entryParts[kind] {
				h = append(h, kind+"."+strconv.Itoa(i)+"."+p)
			}
		}
	}
	entries("emails", e.Emails)
	entries("phones", e.Phones)
	entries("addresses", e.Addresses)
	h = append(h, "website", "time_zone", "birthday", "starred", "notes", "labels")
	entries("socials", e.Socials)
	entries("dates", e.Dates)
	for _, fd := range e.Fields {
		h = append(h, "custom."+fd.Key)
	}
	return h
}

// csvRecord fills rec (laid out as exportHeader) with the contact; the
// cells of the entries it does not have stay empty.
func csvRecord(rec []string, c contacts.Contact, e contacts.Extent) {
	w := &cells{rec: rec}
	w.put(c.FirstName, c.LastName, c.Company, c.JobTitle)
	putEntries(w, e.Emails, c.Emails, 3, func(x contacts.Email) []string {
		return []string{x.Address, string(x.Label), strconv.FormatBool(x.Primary)}
	})
	putEntries(w, e.Phones, c.Phones, 3, func(x contacts.Phone) []string {
		return []string{x.Number, string(x.Label), strconv.FormatBool(x.Primary)}
	})
	putEntries(w, e.Addresses, c.Addresses, 6, func(x contacts.Address) []string {
		return []string{string(x.Label), x.Street, x.City, x.State, x.Zip, x.Country}
	})
	zone, birthday := "", ""
	if c.TimeZone != nil {
		zone = *c.TimeZone
	}
	if c.Birthday != nil {
		birthday = *c.Birthday
	}
	names := make([]string, len(c.Labels))
	for j, l := range c.Labels {
		names[j] = l.Name
	}
	w.put(c.Website, zone, birthday, strconv.FormatBool(c.Starred), c.Notes, strings.Join(names, "; "))
	putEntries(w, e.Socials, c.Socials, 2, func(x contacts.Social) []string { return []string{string(x.Label), x.Value} })
	putEntries(w, e.Dates, c.Dates, 2, func(x contacts.Date) []string { return []string{x.Label, x.Value} })
	for _, fd := range e.Fields {
		w.put(c.CustomFields[fd.Key])
	}
}

// cells writes a record's cells in order.
type cells struct {
	rec []string
	i   int
}

func (w *cells) put(vs ...string) { w.i += copy(w.rec[w.i:], vs) }

func (w *cells) blank(n int) {
	clear(w.rec[w.i : w.i+n])
	w.i += n
}

// putEntries writes the header's slots of one kind of entry: each of the
// contact's entries as width cells, blanks for the slots it has no entry
// for (the widest contact of the export set how many there are).
func putEntries[T any](w *cells, slots int, have []T, width int, cellsOf func(T) []string) {
	for n := range slots {
		if n < len(have) {
			w.put(cellsOf(have[n])...)
		} else {
			w.blank(width)
		}
	}
}
