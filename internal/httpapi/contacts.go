package httpapi

import (
	"net/http"

	"github.com/google/uuid"

	"github.com/contactbook/contactbook/internal/access"
	"github.com/contactbook/contactbook/internal/apperr"
	"github.com/contactbook/contactbook/internal/contacts"
)

func (s *Server) listContacts(w http.ResponseWriter, r *http.Request, sc access.Scope) error {
	p, err := offsetPaging(r, contacts.DefaultPageSize, contacts.MaxPageSize)
	if err != nil {
		return err
	}
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
	q := r.URL.Query()
	pg, err := s.contacts.List(r.Context(), sc, contacts.Filter{
		Q: q.Get("q"), LabelID: labelID, Starred: starred, Sort: q.Get("sort"), Limit: p.Limit, Offset: p.Offset,
		Cursor: p.Cursor, Segment: segment,
	})
	if err != nil {
		return err
	}
	return cursorPage(w, nonNil(pg.Items), p, pg.Total, pg.NextCursor)
}

func (s *Server) createContact(w http.ResponseWriter, r *http.Request, sc access.Scope) error {
	var in contacts.CreateInput
	if err := decodeJSON(w, r, &in); err != nil {
		return err
	}
	c, err := s.contacts.Create(r.Context(), sc, in)
	if err != nil {
		return err
	}
	return data(w, http.StatusCreated, c)
}

func (s *Server) getContact(w http.ResponseWriter, r *http.Request, sc access.Scope) error {
	id, err := pathUUID(r, "id")
	if err != nil {
		return err
	}
	c, err := s.contacts.Get(r.Context(), sc.Actor, id)
	if err != nil {
		return err
	}
	return data(w, http.StatusOK, c)
}

func (s *Server) updateContact(w http.ResponseWriter, r *http.Request, sc access.Scope) error {
	id, err := pathUUID(r, "id")
	if err != nil {
		return err
	}
	var p contacts.Patch
	if err := decodeJSON(w, r, &p); err != nil {
		return err
	}
	c, err := s.contacts.Update(r.Context(), sc.Actor, id, p)
	if err != nil {
		return err
	}
	return data(w, http.StatusOK, c)
}

func (s *Server) deleteContact(w http.ResponseWriter, r *http.Request, sc access.Scope) error {
	id, err := pathUUID(r, "id")
	if err != nil {
		return err
	}
	if err := s.contacts.Delete(r.Context(), sc.Actor, id); err != nil {
		return err
	}
	return noContent(w)
}

// labelBody is the body of POST /contacts/{id}/labels.
type labelBody struct {
	LabelID *string `json:"label_id"`
}

func (s *Server) addContactLabel(w http.ResponseWriter, r *http.Request, sc access.Scope) error {
	id, err := pathUUID(r, "id")
	if err != nil {
		return err
	}
	var in labelBody
	if err := decodeJSON(w, r, &in); err != nil {
		return err
	}
	if in.LabelID == nil || *in.LabelID == "" {
		return apperr.Invalidf("`label_id` is required.")
	}
	labelID, err := uuid.Parse(*in.LabelID)
	if err != nil {
		return apperr.Invalidf("`label_id` must be a UUID.")
	}
	added, err := s.contacts.AddLabel(r.Context(), sc.Actor, id, labelID)
	if err != nil {
		return err
	}
	if !added {
		return message(w, "The contact already has this label.")
	}
	return message(w, "Label added to the contact.")
}

func (s *Server) removeContactLabel(w http.ResponseWriter, r *http.Request, sc access.Scope) error {
	id, err := pathUUID(r, "id")
	if err != nil {
		return err
	}
	labelID, err := pathUUID(r, "lid")
	if err != nil {
		return err
	}
	if err := s.contacts.RemoveLabel(r.Context(), sc.Actor, id, labelID); err != nil {
		return err
	}
	return noContent(w)
}

// checkEmail answers whether an address is taken in the X-Book-ID book.
func (s *Server) checkEmail(w http.ResponseWriter, r *http.Request, sc access.Scope) error {
	exclude, err := queryUUID(r, "exclude")
	if err != nil {
		return err
	}
	res, err := s.contacts.CheckEmail(r.Context(), sc, r.URL.Query().Get("email"), exclude)
	if err != nil {
		return err
	}
	return data(w, http.StatusOK, res)
}
