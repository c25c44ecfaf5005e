package httpapi

import (
	"net/http"
	"strconv"
	"time"

	"github.com/google/uuid"

	"github.com/contactbook/contactbook/internal/access"
	"github.com/contactbook/contactbook/internal/accounts"
	"github.com/contactbook/contactbook/internal/apperr"
	"github.com/contactbook/contactbook/internal/audit"
	"github.com/contactbook/contactbook/internal/csvsafe"
)

// Two-factor sign-in, sessions and the audit log (docs/security.md and
// docs/accounts.md).

func (s *Server) setupTwoFactor(w http.ResponseWriter, r *http.Request, sc access.Scope) error {
	setup, err := s.accounts.SetupTwoFactor(r.Context(), sc.Actor)
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "no-store")
	return data(w, http.StatusOK, setup)
}

func (s *Server) enableTwoFactor(w http.ResponseWriter, r *http.Request, sc access.Scope) error {
	var in accounts.CodeInput
	if err := decodeJSON(w, r, &in); err != nil {
		return err
	}
	codes, err := s.accounts.EnableTwoFactor(r.Context(), sc.Actor, in)
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "no-store")
	return data(w, http.StatusOK, codes)
}

func (s *Server) disableTwoFactor(w http.ResponseWriter, r *http.Request, sc access.Scope) error {
	var in accounts.DisableInput
	if err := decodeJSON(w, r, &in); err != nil {
		return err
	}
	if err := s.accounts.DisableTwoFactor(r.Context(), sc.Actor, in); err != nil {
		return err
	}
	return noContent(w)
}

func (s *Server) loginSecondStep(w http.ResponseWriter, r *http.Request, _ access.Scope) error {
	var in accounts.SecondStepInput
	if err := decodeJSON(w, r, &in); err != nil {
		return err
	}
	ip, _ := clientIPKey(r)
	sess, err := s.accounts.LoginSecondStep(r.Context(), in, ip)
	if err != nil {
		return err
	}
	s.startSession(w, r, &sess)
	return data(w, http.StatusOK, sess)
}

func (s *Server) listSessions(w http.ResponseWriter, r *http.Request, sc access.Scope) error {
	list, err := s.accounts.Sessions(r.Context(), sc.Actor)
	if err != nil {
		return err
	}
	return data(w, http.StatusOK, nonNil(list))
}

func (s *Server) endSessionByID(w http.ResponseWriter, r *http.Request, sc access.Scope) error {
	id, err := pathUUID(r, "id")
	if err != nil {
		return err
	}
	if err := s.accounts.EndSession(r.Context(), sc.Actor, id); err != nil {
		return err
	}
	if id == sc.Actor.SessionID {
		s.endSession(w, r)
	}
	return noContent(w)
}

// auditFilter reads the audit log's query: action, actor_id, since and
// until (RFC 3339), limit and cursor.
func auditFilter(r *http.Request) (audit.Filter, error) {
	q := r.URL.Query()
	f := audit.Filter{Action: q.Get("action"), Cursor: q.Get("cursor")}
	if v := q.Get("actor_id"); v != "" {
		id, err := uuid.Parse(v)
		if err != nil {
			return f, apperr.Invalidf("`actor_id` must be a UUID.")
		}
		f.ActorID = id
	}
	for name, dst := range map[string]*time.Time{"since": &f.Since, "until": &f.Until} {
		if v := q.Get(name); v != "" {
			t, err := time.Parse(time.RFC3339, v)
			if err != nil {
				return f, apperr.Invalidf("`%s` must be an RFC 3339 time such as 2026-11-26T09:00:00Z.", name)
			}
			*dst = t
		}
	}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return f, apperr.Invalidf("`limit` must be an integer from 1 to %d.", audit.MaxLimit)
		}
		f.Limit = min(n, audit.MaxLimit)
	}
	return f, nil
}

// auditPage is the audit log's meta: the cursor of the next page.
type auditPage struct {
	NextCursor *string `json:"next_cursor"`
}

func (s *Server) listAuditLog(w http.ResponseWriter, r *http.Request, sc access.Scope) error {
	f, err := auditFilter(r)
	if err != nil {
		return err
	}
	list, next, err := s.audit.List(r.Context(), sc.Actor, sc.Team, f)
	if err != nil {
		return err
	}
	meta := auditPage{}
	if next != "" {
		meta.NextCursor = &next
	}
	writeJSON(w, http.StatusOK, pageBody{Data: nonNil(list), Meta: meta})
	return nil
}

// auditHeader is the audit log CSV's header.
var auditHeader = []string{"id", "at", "actor_type", "actor_id", "actor_name", "action", "target_type", "target_id", "ip", "user_agent", "details"}

func (s *Server) exportAuditLog(w http.ResponseWriter, r *http.Request, sc access.Scope) error {
	f, err := auditFilter(r)
	if err != nil {
		return err
	}
	var out *csvsafe.Writer
	rec := make([]string, len(auditHeader))
	err = s.audit.Export(r.Context(), sc.Actor, sc.Team, f, func(v audit.View) error {
		if out == nil {
			out = csvsafe.NewWriter(download(w, "text/csv; charset=utf-8", "audit-log.csv"))
			if err := out.Write(auditHeader); err != nil {
				return err
			}
		}
		actorID := ""
		if v.Actor.ID != nil {
			actorID = v.Actor.ID.String()
		}
		rec = append(rec[:0], v.ID.String(), v.At.UTC().Format(time.RFC3339Nano), string(v.Actor.Type), actorID, v.Actor.Name,
			v.Action, v.Target.Type, v.Target.ID, v.IP, v.UserAgent, string(v.Details))
		return out.Write(rec)
	})
	if out == nil && err == nil {
		out = csvsafe.NewWriter(download(w, "text/csv; charset=utf-8", "audit-log.csv"))
		err = out.Write(auditHeader)
	}
	if out != nil {
		out.Flush()
		if err != nil {
			s.log.Warn("audit log export cut short", "err", err)
			return nil
		}
		return out.Error()
	}
	return err
}
