package httpapi

import (
	"net/http"

	"github.com/contactbook/contactbook/internal/access"
	"github.com/contactbook/contactbook/internal/accounts"
)

func (s *Server) signup(w http.ResponseWriter, r *http.Request, _ access.Scope) error {
	var in accounts.SignupInput
	if err := decodeJSON(w, r, &in); err != nil {
		return err
	}
	res, err := s.accounts.Signup(r.Context(), in)
	if err != nil {
		return err
	}
	s.startSession(w, r, &res.Session)
	return data(w, http.StatusCreated, res)
}

func (s *Server) login(w http.ResponseWriter, r *http.Request, _ access.Scope) error {
	var in accounts.LoginInput
	if err := decodeJSON(w, r, &in); err != nil {
		return err
	}
	ip, _ := clientIPKey(r)
	res, err := s.accounts.Login(r.Context(), in, ip)
	if err != nil {
		return err
	}
	return s.answerLogin(w, r, res)
}

// answerLogin answers a right password: the session (as a token, or the
// cookie session), or the second step's challenge without any session.
func (s *Server) answerLogin(w http.ResponseWriter, r *http.Request, res accounts.LoginResult) error {
	if res.MFA != nil {
		return data(w, http.StatusOK, res.MFA)
	}
	s.startSession(w, r, &res.Session)
	return data(w, http.StatusOK, res.Session)
}

func (s *Server) me(w http.ResponseWriter, r *http.Request, sc access.Scope) error {
	u, teams, err := s.accounts.Me(r.Context(), sc.Actor)
	if err != nil {
		return err
	}
	return data(w, http.StatusOK, map[string]any{"user": u, "teams": nonNil(teams)})
}

func (s *Server) getTeam(w http.ResponseWriter, r *http.Request, sc access.Scope) error {
	t, err := s.accounts.Team(r.Context(), sc)
	if err != nil {
		return err
	}
	return data(w, http.StatusOK, t)
}

func (s *Server) updateTeam(w http.ResponseWriter, r *http.Request, sc access.Scope) error {
	var in accounts.TeamPatch
	if err := decodeJSON(w, r, &in); err != nil {
		return err
	}
	t, err := s.accounts.UpdateTeam(r.Context(), sc, in)
	if err != nil {
		return err
	}
	return data(w, http.StatusOK, t)
}

func (s *Server) startTrial(w http.ResponseWriter, r *http.Request, sc access.Scope) error {
	t, err := s.accounts.StartTrial(r.Context(), sc)
	if err != nil {
		return err
	}
	return data(w, http.StatusOK, t)
}

func (s *Server) listMembers(w http.ResponseWriter, r *http.Request, sc access.Scope) error {
	ms, err := s.accounts.Members(r.Context(), sc)
	if err != nil {
		return err
	}
	return data(w, http.StatusOK, nonNil(ms))
}

func (s *Server) changeRole(w http.ResponseWriter, r *http.Request, sc access.Scope) error {
	userID, err := pathUUID(r, "user_id")
	if err != nil {
		return err
	}
	var in accounts.RoleInput
	if err := decodeJSON(w, r, &in); err != nil {
		return err
	}
	m, err := s.accounts.ChangeRole(r.Context(), sc, userID, in)
	if err != nil {
		return err
	}
	return data(w, http.StatusOK, m)
}

func (s *Server) removeMember(w http.ResponseWriter, r *http.Request, sc access.Scope) error {
	userID, err := pathUUID(r, "user_id")
	if err != nil {
		return err
	}
	if err := s.accounts.RemoveMember(r.Context(), sc, userID); err != nil {
		return err
	}
	return noContent(w)
}

func (s *Server) createKey(w http.ResponseWriter, r *http.Request, sc access.Scope) error {
	var in accounts.KeyInput
	if err := decodeJSON(w, r, &in); err != nil {
		return err
	}
	k, err := s.accounts.CreateKey(r.Context(), sc, in)
	if err != nil {
		return err
	}
	return data(w, http.StatusCreated, k)
}

func (s *Server) listKeys(w http.ResponseWriter, r *http.Request, sc access.Scope) error {
	ks, err := s.accounts.Keys(r.Context(), sc)
	if err != nil {
		return err
	}
	return data(w, http.StatusOK, nonNil(ks))
}

func (s *Server) revokeKey(w http.ResponseWriter, r *http.Request, sc access.Scope) error {
	keyID, err := pathUUID(r, "key_id")
	if err != nil {
		return err
	}
	if err := s.accounts.RevokeKey(r.Context(), sc, keyID); err != nil {
		return err
	}
	return noContent(w)
}
