package httpapi

import (
	"errors"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/contactbook/contactbook/internal/access"
	"github.com/contactbook/contactbook/internal/apperr"
	"github.com/contactbook/contactbook/internal/contacts"
	"github.com/contactbook/contactbook/internal/transfer"
)

// maxImportRequest bounds the multipart request of an import: the file
// plus room for the other fields and the part headers.
const maxImportRequest = transfer.MaxFileBytes + 1<<20

// maxImportField bounds a form field other than the file (the mapping).
const maxImportField = 64 << 10

var errImportTooLarge = apperr.New(apperr.PayloadTooLarge, "The file is larger than %d MB; split it into several imports.", transfer.MaxFileBytes>>20)

func (s *Server) startImport(w http.ResponseWriter, r *http.Request, sc access.Scope) error {
	req, err := importForm(w, r)
	if err != nil {
		return err
	}
	in, err := s.transfer.Start(r.Context(), sc, req)
	if err != nil {
		return err
	}
	return data(w, http.StatusAccepted, in)
}

// previewImport answers what an import of the file would read: the same
// form as an import, nothing queued.
func (s *Server) previewImport(w http.ResponseWriter, r *http.Request, sc access.Scope) error {
	req, err := importForm(w, r)
	if err != nil {
		return err
	}
	out, err := s.transfer.Preview(r.Context(), sc, req)
	if err != nil {
		return err
	}
	return data(w, http.StatusOK, out)
}

// readPart reads a part whole into a buffer sized by the request's
// length (which bounds the part's): io.ReadAll grows its buffer as it
// reads, allocating about twice the file in all.
func readPart(r io.Reader, requestLength int64) ([]byte, error) {
	b := make([]byte, 0, min(max(requestLength, 0), maxImportRequest)+1) // +1: EOF is seen without growing
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if errors.Is(err, io.EOF) {
			return b, nil
		}
		if err != nil {
			return b, err
		}
	}
}

// importForm reads an import's multipart form.
func importForm(w http.ResponseWriter, r *http.Request) (transfer.Request, error) {
	// A declared length over the limit is refused before a byte of the body
	// is read: the 413 reaches the client while it is still sending. Read
	// up to the limit first, the answer would come after 50 MB, and the
	// connection, closed with the rest unread, could be reset before the
	// client read it. A body without a length is cut at the limit below.
	if r.ContentLength > maxImportRequest {
		return transfer.Request{}, errImportTooLarge
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxImportRequest)
	mr, err := r.MultipartReader()
	if err != nil {
		return transfer.Request{}, apperr.New(apperr.UnsupportedMediaType, "Send the import as multipart/form-data with the file in a part named file.")
	}
	req := transfer.Request{CreateLabels: true}
	seenFile := false
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return req, importReadError(err)
		}
		name := part.FormName()
		if name == "file" {
			seenFile = true
			req.File, err = readPart(io.LimitReader(part, transfer.MaxFileBytes+1), r.ContentLength)
			if err != nil {
				return req, importReadError(err)
			}
			if len(req.File) > transfer.MaxFileBytes {
				return req, errImportTooLarge
			}
			continue
		}
		raw, err := io.ReadAll(io.LimitReader(part, maxImportField+1))
		if err != nil {
			return req, importReadError(err)
		}
		if len(raw) > maxImportField {
			return req, apperr.Invalidf("The form field %s is longer than %d KB.", name, maxImportField>>10)
		}
		v := strings.TrimSpace(string(raw))
		switch name {
		case "format":
			req.Format = strings.ToLower(v)
		case "mapping":
			req.Mapping = v
		case "mode":
			req.Mode = strings.ToLower(v)
		case "dry_run":
			if req.DryRun, err = formBool(name, v); err != nil {
				return req, err
			}
		case "create_labels":
			if req.CreateLabels, err = formBool(name, v); err != nil {
				return req, err
			}
		default:
			return req, apperr.Invalidf("Unknown form field %s; send file, format, mapping, mode, dry_run, create_labels.", name)
		}
	}
	if !seenFile {
		return req, apperr.Invalidf("`file` is required: the CSV or vCard file, as a part named file.")
	}
	return req, nil
}

// formBool reads a true/false form field.
func formBool(name, v string) (bool, error) {
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, apperr.Invalidf("`%s` must be true or false.", name)
	}
	return b, nil
}

func importReadError(err error) error {
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return errImportTooLarge
	}
	return apperr.Wrap(err, apperr.InvalidInput, "The multipart body could not be read.")
}

func (s *Server) listImports(w http.ResponseWriter, r *http.Request, sc access.Scope) error {
	list, err := s.transfer.List(r.Context(), sc)
	if err != nil {
		return err
	}
	return data(w, http.StatusOK, list)
}

func (s *Server) getImport(w http.ResponseWriter, r *http.Request, sc access.Scope) error {
	id, err := pathUUID(r, "import_id")
	if err != nil {
		return err
	}
	in, err := s.transfer.Get(r.Context(), sc, id)
	if err != nil {
		return err
	}
	return data(w, http.StatusOK, in)
}

func (s *Server) cancelImport(w http.ResponseWriter, r *http.Request, sc access.Scope) error {
	id, err := pathUUID(r, "import_id")
	if err != nil {
		return err
	}
	in, err := s.transfer.Cancel(r.Context(), sc, id)
	if err != nil {
		return err
	}
	return data(w, http.StatusOK, in)
}

// exportContacts streams the book's contacts (or those the contacts list's
// filters select) as a CSV or vCard attachment. An error before the first
// byte is answered as JSON; one after it can only cut the stream short.
func (s *Server) exportContacts(w http.ResponseWriter, r *http.Request, sc access.Scope) error {
	labelID, err := queryUUID(r, "label_id")
	if err != nil {
		return err
	}
	starred, err := queryBool(r, "starred")
	if err != nil {
		return err
	}
	segment, err := s.segmentParam(r, sc)
	if err != nil {
		return err
	}
	segmentID, _ := queryUUID(r, "segment_id") // read by segmentParam
	q := r.URL.Query()
	flusher, _ := w.(http.Flusher)
	return s.streamDownload(w, "contact export", func(start func(contentType, filename string) io.Writer) error {
		return s.transfer.Export(r.Context(), sc, strings.ToLower(q.Get("format")),
			contacts.Filter{Q: q.Get("q"), LabelID: labelID, Starred: starred, Segment: segment}, segmentID,
			func(d transfer.Download) io.Writer { return start(d.ContentType, d.Filename) },
			func() {
				if flusher != nil {
					flusher.Flush()
				}
			})
	})
}

// streamDownload runs write, which calls start to begin a file answer
// (download) once it has checked what it must and is about to write the
// first byte. An error before that is answered as JSON; one after it can
// only cut the stream short, and is logged as what was cut.
func (s *Server) streamDownload(w http.ResponseWriter, what string, write func(start func(contentType, filename string) io.Writer) error) error {
	started := false
	err := write(func(contentType, filename string) io.Writer {
		started = true
		return download(w, contentType, filename)
	})
	if err != nil && started {
		s.log.Warn(what+" cut short", "err", err)
		return nil
	}
	return err
}

// download starts a file answer (200) that the browser saves as filename
// rather than shows; the body follows on the returned writer.
func download(w http.ResponseWriter, contentType, filename string) io.Writer {
	h := w.Header()
	h.Set("Content-Type", contentType)
	h.Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": filename}))
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	return w
}
