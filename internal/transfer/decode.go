package transfer

import (
	"bytes"
	"unicode/utf8"

	"golang.org/x/text/encoding/charmap"

	"github.com/contactbook/contactbook/internal/apperr"
)

// utf8BOM starts files saved by Excel and Windows tools as "UTF-8".
var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// decodeText returns the file as UTF-8: UTF-8 as it is (its BOM removed),
// else Windows-1252 (what Excel on Windows saves as "CSV"), converted. A
// file that is neither, or holds control bytes no text has (NUL, the C0
// controls other than tab, CR, LF, form feed), is refused: it is binary or
// in an encoding the import cannot know.
func decodeText(b []byte) ([]byte, error) {
	b = bytes.TrimPrefix(b, utf8BOM)
	if len(bytes.TrimSpace(b)) == 0 {
		return nil, apperr.Invalidf("The file is empty.")
	}
	if bad := controlByte(b); bad >= 0 {
		return nil, apperr.Invalidf("The file is not text (byte %d is a control character); send a CSV or vCard file.", bad+1)
	}
	if utf8.Valid(b) {
		return b, nil
	}
	// Windows-1252 leaves five bytes undefined; a file using them is not
	// Windows-1252 either.
	for i, c := range b {
		if c == 0x81 || c == 0x8D || c == 0x8F || c == 0x90 || c == 0x9D {
			return nil, apperr.Invalidf("The file is neither UTF-8 nor Windows-1252 (byte %d, 0x%02X); save it as UTF-8 and send it again.", i+1, c)
		}
	}
	out, err := charmap.Windows1252.NewDecoder().Bytes(b)
	if err != nil {
		return nil, apperr.Invalidf("The file is neither UTF-8 nor Windows-1252; save it as UTF-8 and send it again.")
	}
	return out, nil
}

// controlByte is the offset of the first byte no text file holds, or -1.
func controlByte(b []byte) int {
	for i, c := range b {
		if c < 0x20 && c != '\t' && c != '\n' && c != '\r' && c != '\f' {
			return i
		}
		if c == 0x7F {
			return i
		}
	}
	return -1
}

// detectFormat tells a vCard file from a CSV one by its first line.
func detectFormat(text []byte) Format {
	t := bytes.TrimLeft(text, " \t\r\n")
	if len(t) >= 11 && bytes.EqualFold(t[:11], []byte("BEGIN:VCARD")) {
		return FormatVCard
	}
	return FormatCSV
}

// detectDelimiter picks the separator of a CSV file: whichever of comma,
// semicolon and tab occurs most often outside quotes on the header line.
func detectDelimiter(text []byte) rune {
	counts := map[rune]int{}
	quoted := false
	for _, c := range text {
		if c == '"' {
			quoted = !quoted
			continue
		}
		if quoted {
			continue
		}
		if c == '\n' {
			break
		}
		if c == ',' || c == ';' || c == '\t' {
			counts[rune(c)]++
		}
	}
	best := ','
	for _, d := range []rune{';', '\t'} {
		if counts[d] > counts[best] {
			best = d
		}
	}
	return best
}
