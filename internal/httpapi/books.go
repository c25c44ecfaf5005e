package httpapi

import (
	"net/http"

	"github.com/google/uuid"

	"github.com/contactbook/contactbook/internal/access"
	"github.com/contactbook/contactbook/internal/auth"
	"github.com/contactbook/contactbook/internal/books"
)

// teamOf passes the team a team-level request names (the body's team_id,
// else ?team_id=) to the accounts service, which picks the team.
func (s *Server) teamOf(r *http.Request, a *auth.Actor, body uuid.UUID) (uuid.UUID, error) {
	if a.IsKey() {
		// A key works in its own team; the API has never read team_id
		// from a key's request, so a malformed one is not refused either.
		return s.accounts.RequestTeam(r.Context(), a, uuid.Nil)
	}
	given, err := teamParam(r, body)
	if err != nil {
		return uuid.Nil, err
	}
	return s.accounts.RequestTeam(r.Context(), a, given)
}

// teamParam is the team a request names: body (the JSON body's team_id)
// when set, else the team_id query parameter, else uuid.Nil.
func teamParam(r *http.Request, body uuid.UUID) (uuid.UUID, error) {
	if body != uuid.Nil {
		return body, nil
	}
	q, err := queryUUID(r, "team_id")
	if err != nil || q == nil {
		return uuid.Nil, err
	}
	return *q, nil
}

func (s *Server) listBooks(w http.ResponseWriter, r *http.Request, sc access.Scope) error {
	teamID, err := s.teamOf(r, sc.Actor, uuid.Nil)
	if err != nil {
		return err
	}
	bs, err := s.books.List(r.Context(), sc.Actor, teamID)
	if err != nil {
		return err
	}
	return data(w, http.StatusOK, nonNil(bs))
}

func (s *Server) getBook(w http.ResponseWriter, r *http.Request, sc access.Scope) error {
	b, err := s.books.Get(r.Context(), sc.Actor, sc.Book)
	if err != nil {
		return err
	}
	return data(w, http.StatusOK, b)
}

func (s *Server) createBook(w http.ResponseWriter, r *http.Request, sc access.Scope) error {
	var in books.CreateInput
	if err := decodeJSON(w, r, &in); err != nil {
		return err
	}
	teamID, err := s.teamOf(r, sc.Actor, in.TeamID)
	if err != nil {
		return err
	}
	in.TeamID = teamID
	b, err := s.books.Create(r.Context(), sc.Actor, in)
	if err != nil {
		return err
	}
	return data(w, http.StatusCreated, b)
}

func (s *Server) updateBook(w http.ResponseWriter, r *http.Request, sc access.Scope) error {
	var p books.Patch
	if err := decodeJSON(w, r, &p); err != nil {
		return err
	}
	b, err := s.books.Update(r.Context(), sc.Actor, sc.Book, p)
	if err != nil {
		return err
	}
	return data(w, http.StatusOK, b)
}

func (s *Server) deleteBook(w http.ResponseWriter, r *http.Request, sc access.Scope) error {
	if err := s.books.Delete(r.Context(), sc.Actor, sc.Book); err != nil {
		return err
	}
	return noContent(w)
}

func (s *Server) listLabels(w http.ResponseWriter, r *http.Request, sc access.Scope) error {
	ls, err := s.books.Labels(r.Context(), sc.Actor, sc.Book)
	if err != nil {
		return err
	}
	return data(w, http.StatusOK, nonNil(ls))
}

func (s *Server) createLabel(w http.ResponseWriter, r *http.Request, sc access.Scope) error {
	var in books.LabelInput
	if err := decodeJSON(w, r, &in); err != nil {
		return err
	}
	l, err := s.books.CreateLabel(r.Context(), sc.Actor, sc.Book, in)
	if err != nil {
		return err
	}
	return data(w, http.StatusCreated, l)
}

func (s *Server) updateLabel(w http.ResponseWriter, r *http.Request, sc access.Scope) error {
	labelID, err := pathUUID(r, "lid")
	if err != nil {
		return err
	}
	var p books.LabelPatch
	if err := decodeJSON(w, r, &p); err != nil {
		return err
	}
	l, err := s.books.UpdateLabel(r.Context(), sc.Actor, sc.Book, labelID, p)
	if err != nil {
		return err
	}
	return data(w, http.StatusOK, l)
}

func (s *Server) deleteLabel(w http.ResponseWriter, r *http.Request, sc access.Scope) error {
	labelID, err := pathUUID(r, "lid")
	if err != nil {
		return err
	}
	if err := s.books.DeleteLabel(r.Context(), sc.Actor, sc.Book, labelID); err != nil {
		return err
	}
	return noContent(w)
}

func (s *Server) listFields(w http.ResponseWriter, r *http.Request, sc access.Scope) error {
	fs, err := s.books.Fields(r.Context(), sc.Actor, sc.Book)
	if err != nil {
		return err
	}
	return data(w, http.StatusOK, nonNil(fs))
}

func (s *Server) createField(w http.ResponseWriter, r *http.Request, sc access.Scope) error {
	var in books.FieldInput
	if err := decodeJSON(w, r, &in); err != nil {
		return err
	}
	f, err := s.books.CreateField(r.Context(), sc.Actor, sc.Book, in)
	if err != nil {
		return err
	}
	return data(w, http.StatusCreated, f)
}

func (s *Server) deleteField(w http.ResponseWriter, r *http.Request, sc access.Scope) error {
	fieldID, err := pathUUID(r, "fid")
	if err != nil {
		return err
	}
	if err := s.books.DeleteField(r.Context(), sc.Actor, sc.Book, fieldID); err != nil {
		return err
	}
	return noContent(w)
}
