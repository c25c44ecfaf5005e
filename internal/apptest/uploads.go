package apptest

import (
	"bytes"
	"mime/multipart"
	"testing"
)

// PNG returns a real 1x1 PNG image (a fresh copy each time, so that a
// test may append to it), for uploads the service must accept as one.
func PNG() []byte {
	return []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89" +
		"\x00\x00\x00\rIDATx\x9cc\xf8\x0f\x00\x00\x01\x01\x00\x05\x18\xd8N\x00\x00\x00\x00IEND\xaeB`\x82")
}

// File is one file part of a multipart form.
type File struct {
	Field, Name string
	Data        []byte
}

// Multipart is a multipart/form-data body with the fields and then the
// files, in their order, as a browser posts a form with file inputs.
func Multipart(t testing.TB, fields map[string]string, files ...File) Raw {
	t.Helper()
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	for k, v := range fields {
		if err := w.WriteField(k, v); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range files {
		fw, err := w.CreateFormFile(f.Field, f.Name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := fw.Write(f.Data); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return Raw{ContentType: w.FormDataContentType(), Body: buf.Bytes()}
}

// ImportForm is the multipart body of an import or its preview: file as the
// part "file" named contacts.csv (no file part when file is nil), and the
// fields.
func ImportForm(t testing.TB, file []byte, fields map[string]string) Raw {
	t.Helper()
	if file == nil {
		return Multipart(t, fields)
	}
	return Multipart(t, fields, File{Field: "file", Name: "contacts.csv", Data: file})
}
