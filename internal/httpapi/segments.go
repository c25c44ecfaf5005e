package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"

	"github.com/google/uuid"

	"github.com/contactbook/contactbook/internal/access"
	"github.com/contactbook/contactbook/internal/apperr"
	"github.com/contactbook/contactbook/internal/contacts"
	"github.com/contactbook/contactbook/internal/segments"
)

// Handlers of segments: list, create, read (with the count), change,
// delete, and the preview of a rule.

func (s *Server) listSegments(w http.ResponseWriter, r *http.Request, sc access.Scope) error {
	segs, err := s.segments.List(r.Context(), sc)
	if err != nil {
		return err
	}
	return data(w, http.StatusOK, nonNil(segs))
}

func (s *Server) createSegment(w http.ResponseWriter, r *http.Request, sc access.Scope) error {
	in, err := decodeSegmentBody(w, r)
	if err != nil {
		return err
	}
	seg, err := s.segments.Create(r.Context(), sc, in)
	if err != nil {
		return err
	}
	return data(w, http.StatusCreated, seg)
}

func (s *Server) getSegment(w http.ResponseWriter, r *http.Request, sc access.Scope) error {
	id, err := pathUUID(r, "id")
	if err != nil {
		return err
	}
	seg, err := s.segments.Get(r.Context(), sc, id)
	if err != nil {
		return err
	}
	return data(w, http.StatusOK, seg)
}

func (s *Server) updateSegment(w http.ResponseWriter, r *http.Request, sc access.Scope) error {
	id, err := pathUUID(r, "id")
	if err != nil {
		return err
	}
	in, err := decodeSegmentBody(w, r)
	if err != nil {
		return err
	}
	seg, err := s.segments.Update(r.Context(), sc, id, in)
	if err != nil {
		return err
	}
	return data(w, http.StatusOK, seg)
}

func (s *Server) deleteSegment(w http.ResponseWriter, r *http.Request, sc access.Scope) error {
	id, err := pathUUID(r, "id")
	if err != nil {
		return err
	}
	if err := s.segments.Delete(r.Context(), sc, id); err != nil {
		return err
	}
	return noContent(w)
}

// segmentPreview is the answer of a preview: the exact count and the
// first contacts in the contact list's default order.
type segmentPreview struct {
	Count    int64              `json:"count"`
	Contacts []contacts.Contact `json:"contacts"`
}

func (s *Server) previewSegment(w http.ResponseWriter, r *http.Request, sc access.Scope) error {
	in, err := decodeSegmentBody(w, r)
	if err != nil {
		return err
	}
	if in.Rule == nil {
		return apperr.Invalidf("`rule` is required: the rule to preview.")
	}
	p, err := s.segments.Compile(r.Context(), sc, *in.Rule)
	if err != nil {
		return err
	}
	pg, err := s.contacts.List(r.Context(), sc, contacts.Filter{Segment: p, Limit: segments.PreviewSize})
	if err != nil {
		return err
	}
	return data(w, http.StatusOK, segmentPreview{Count: pg.Total, Contacts: nonNil(pg.Items)})
}

// decodeSegmentBody reads {name, description, rule}. The rule is read
// token by token (segments.ParseRule) rather than decoded whole, so a rule
// nested megabytes deep or holding thousands of conditions is refused at
// its first excess with the place named, before the rest is read.
func decodeSegmentBody(w http.ResponseWriter, r *http.Request) (segments.Input, error) {
	var in segments.Input
	body, err := readJSON(w, r)
	if err != nil {
		return in, err
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	tok, err := dec.Token()
	if errors.Is(err, io.EOF) {
		return in, apperr.Invalidf("The body is empty; send a JSON object.")
	}
	if d, ok := tok.(json.Delim); err != nil || !ok || d != '{' {
		return in, apperr.Invalidf("The body must be a JSON object.")
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return in, apperr.Invalidf("The body is not valid JSON.")
		}
		switch key, _ := tok.(string); key {
		case "name", "description":
			var v *string
			if err := dec.Decode(&v); err != nil {
				return in, apperr.Invalidf("`%s` must be a string.", key)
			}
			if key == "name" {
				in.Name = v
			} else {
				in.Description = v
			}
		case "rule":
			rule, err := segments.ParseRule(dec, "rule")
			if err != nil {
				return in, err
			}
			in.Rule = &rule
		default: // unknown fields are ignored
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return in, jsonError(err)
			}
		}
	}
	if _, err := dec.Token(); err != nil {
		return in, apperr.Invalidf("The body is not valid JSON: it ends too early.")
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return in, apperr.Invalidf("The body must hold exactly one JSON object.")
	}
	return in, nil
}

// segmentParam resolves the segment_id query parameter of a contacts
// list or export into its compiled rule (nil when absent): a segment of
// another book is not found.
func (s *Server) segmentParam(r *http.Request, sc access.Scope) (contacts.Condition, error) {
	id, err := queryUUID(r, "segment_id")
	if err != nil || id == nil {
		return nil, err
	}
	p, err := s.segments.Members(r.Context(), sc, *id)
	if err != nil {
		return nil, err
	}
	return p, nil
}

// bulkSegment resolves the segment_id of a bulk body into its compiled
// rule, in place of contact_ids.
func (s *Server) bulkSegment(r *http.Request, sc access.Scope, in *contacts.BulkInput) error {
	if in.SegmentID == nil {
		return nil
	}
	id, err := uuid.Parse(*in.SegmentID)
	if err != nil {
		return apperr.Invalidf("`segment_id` must be a segment id (UUID).")
	}
	p, err := s.segments.Members(r.Context(), sc, id)
	if err != nil {
		return err
	}
	in.Segment = p
	return nil
}
