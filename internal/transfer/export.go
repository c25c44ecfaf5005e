package transfer

import (
	"bufio"
	"context"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/emersion/go-vcard"

	"github.com/contactbook/contactbook/internal/apperr"
	"github.com/contactbook/contactbook/internal/audit"
	"github.com/contactbook/contactbook/internal/auth"
	"github.com/contactbook/contactbook/internal/books"
	"github.com/contactbook/contactbook/internal/contacts"
	"github.com/contactbook/contactbook/internal/csvsafe"
	"github.com/contactbook/contactbook/internal/enum"
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
// written as they come.
func (s *Service) Export(ctx context.Context, sc books.Scope, format string, f contacts.Filter,
	open func(Download) io.Writer, flush func()) error {
	if err := sc.Require(ctx, auth.RoleMember); err != nil {
		return err
	}
	b := sc.Book
	if format == "" {
		format = FormatCSV
	}
	if _, ok := enum.Parse(Formats, format); !ok {
		return apperr.Invalidf("The query parameter format must be %s.", enum.Or(Formats))
	}
	// An export changes nothing, so its entry is written before the file
	// is: a download that is cut short was still asked for.
	if err := audit.Record(ctx, s.db, audit.Entry{
		TeamID: b.TeamID, Actor: audit.From(sc.Actor), Action: "contacts.exported", TargetType: "book", TargetID: b.ID.String(),
		Details: map[string]any{"format": format, "q": f.Q, "label_id": f.LabelID, "starred": f.Starred},
	}); err != nil {
		return err
	}
	var (
		keys, dateLabels []string
	)
	if format == FormatCSV {
		km, err := s.contacts.CustomFieldKeys(ctx, b.ID)
		if err != nil {
			return err
		}
		for k := range km {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		if dateLabels, err = s.contacts.DateLabels(ctx, b.ID); err != nil {
			return err
		}
	}
	name := "contacts-" + b.Slug
	if format == FormatCSV {
		out := bufio.NewWriterSize(open(Download{ContentType: "text/csv; charset=utf-8", Filename: name + ".csv"}), 64<<10)
		cw := csvsafe.NewWriter(out)
		header := exportHeader(keys, dateLabels)
		if err := cw.Write(header); err != nil {
			return err
		}
		n := 0
		rec := make([]string, len(header))
		err := s.contacts.Each(ctx, sc, f, func(c contacts.Contact) error {
			csvRecord(rec, c, keys, dateLabels)
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
	out := bufio.NewWriterSize(open(Download{ContentType: "text/vcard; charset=utf-8", Filename: name + ".vcf"}), 64<<10)
	enc := vcard.NewEncoder(out)
	n := 0
	err := s.contacts.Each(ctx, sc, f, func(c contacts.Contact) error {
		if err := enc.Encode(contactCard(c)); err != nil {
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

// exportHeader is the header of this service's CSV: every column is named
// by its mapping target, so the file imports back without a mapping.
func exportHeader(keys, dateLabels []string) []string {
	h := []string{"first_name", "last_name", "company", "job_title"}
	for _, l := range emailLabels {
		h = append(h, "emails."+l)
	}
	for _, l := range phoneLabels {
		h = append(h, "phones."+l)
	}
	for _, l := range addressLabels {
		for _, p := range addressParts {
			h = append(h, "addresses."+l+"."+p)
		}
	}
	h = append(h, "website", "time_zone", "birthday", "starred", "notes", "labels")
	for _, l := range socialLabels {
		h = append(h, "socials."+l)
	}
	for _, l := range dateLabels {
		h = append(h, "dates."+l)
	}
	for _, k := range keys {
		h = append(h, "custom."+k)
	}
	return h
}

// csvRecord fills rec (laid out as exportHeader) with the contact. A cell
// holds several emails, phones or profiles of one label separated by "; ",
// the primary one marked " (primary)".
func csvRecord(rec []string, c contacts.Contact, keys, dateLabels []string) {
	i := 0
	put := func(v string) { rec[i] = v; i++ }
	put(c.FirstName)
	put(c.LastName)
	put(c.Company)
	put(c.JobTitle)
	for _, l := range emailLabels {
		var vs []string
		for _, e := range c.Emails {
			if string(e.Label) == l {
				vs = append(vs, e.Address+primaryMark(e.Primary))
			}
		}
		put(strings.Join(vs, "; "))
	}
	for _, l := range phoneLabels {
		var vs []string
		for _, p := range c.Phones {
			if string(p.Label) == l {
				vs = append(vs, p.Number+primaryMark(p.Primary))
			}
		}
		put(strings.Join(vs, "; "))
	}
	for _, l := range addressLabels {
		var a contacts.Address
		for _, x := range c.Addresses {
			if string(x.Label) == l {
				a = x
				break
			}
		}
		put(a.Street)
		put(a.City)
		put(a.State)
		put(a.Zip)
		put(a.Country)
	}
	put(c.Website)
	if c.TimeZone != nil {
		put(*c.TimeZone)
	} else {
		put("")
	}
	if c.Birthday != nil {
		put(*c.Birthday)
	} else {
		put("")
	}
	put(strconv.FormatBool(c.Starred))
	put(c.Notes)
	names := make([]string, len(c.Labels))
	for j, l := range c.Labels {
		names[j] = l.Name
	}
	put(strings.Join(names, "; "))
	for _, l := range socialLabels {
		var vs []string
		for _, s := range c.Socials {
			if string(s.Label) == l {
				vs = append(vs, s.Value)
			}
		}
		put(strings.Join(vs, "; "))
	}
	for _, l := range dateLabels {
		v := ""
		for _, d := range c.Dates {
			if d.Label == l {
				v = d.Value
				break
			}
		}
		put(v)
	}
	for _, k := range keys {
		put(c.CustomFields[k])
	}
}

func primaryMark(p bool) string {
	if p {
		return primarySuffix
	}
	return ""
}
