package transfer

import (
	"context"
	"errors"
	"io"
	"strings"

	"github.com/emersion/go-vcard"

	"github.com/contactbook/contactbook/internal/apperr"
	"github.com/contactbook/contactbook/internal/vcards"
)

// vcardFile reads the cards of a vCard file one at a time.
type vcardFile struct {
	dec    *vcard.Decoder
	record int
	zones  zoneNames
}

func openVCard(text io.Reader) *vcardFile {
	return &vcardFile{dec: vcard.NewDecoder(text)}
}

// next reads the next card; io.EOF after the last.
func (f *vcardFile) next() (vcard.Card, error) {
	card, err := f.dec.Decode()
	if errors.Is(err, io.EOF) {
		return nil, io.EOF
	}
	f.record++
	if errors.Is(err, errFileGone) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return nil, err // the stream under the decoder failed, not the card
	}
	if err != nil {
		return nil, apperr.Invalidf("Card %d cannot be read: %s; every card runs from BEGIN:VCARD to END:VCARD.", f.record, strings.TrimPrefix(err.Error(), "vcard: "))
	}
	return card, nil
}

// row turns a card into an import row (the mapping is vcards.Decode, the
// one the CardDAV server writes contacts with); the row number is the
// card's.
func (f *vcardFile) row(card vcard.Card) ImportRow {
	d := vcards.Decode(card, f.zones.valid)
	out := ImportRow{Row: f.record, Contact: d.Contact, Labels: d.Labels, Custom: d.Custom, FieldTypes: d.FieldTypes, Columns: d.Columns}
	if d.Problem != nil {
		out.Problem = &RowError{Row: f.record, Column: d.Problem.Property, Message: d.Problem.Message}
	}
	return out
}
