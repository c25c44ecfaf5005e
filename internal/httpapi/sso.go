package httpapi

import (
	"errors"
	"net/http"
	"net/url"

	"github.com/google/uuid"

	"github.com/contactbook/contactbook/internal/access"
	"github.com/contactbook/contactbook/internal/accounts"
)

// ssoStateCookie binds a sign-in to the browser that started it: the
// callback must come with the state this browser was given, so nobody can
// make a victim's browser finish a sign-in the attacker started (login
// CSRF). SameSite=Lax, since the return is a top-level navigation from
// the identity provider's site.
const ssoStateCookie = "cb_sso_state"

func (s *Server) getSSO(w http.ResponseWriter, r *http.Request, sc access.Scope) error {
	v, err := s.sso.Settings(r.Context(), sc.Actor, sc.Team)
	if err != nil {
		return err
	}
	return data(w, http.StatusOK, v)
}

func (s *Server) putSSO(w http.ResponseWriter, r *http.Request, sc access.Scope) error {
	var in accounts.SSOInput
	if err := decodeJSON(w, r, &in); err != nil {
		return err
	}
	v, err := s.sso.SaveSettings(r.Context(), sc.Actor, sc.Team, in)
	if err != nil {
		return err
	}
	return data(w, http.StatusOK, v)
}

func (s *Server) deleteSSO(w http.ResponseWriter, r *http.Request, sc access.Scope) error {
	if err := s.sso.DeleteSettings(r.Context(), sc.Actor, sc.Team); err != nil {
		return err
	}
	return noContent(w)
}

// startSSO sends the browser to the identity provider of the team that
// signs in the address (?email=) or of ?team_id=.
func (s *Server) startSSO(w http.ResponseWriter, r *http.Request, _ access.Scope) error {
	teamID, err := queryUUID(r, "team_id")
	if err != nil {
		return err
	}
	var team uuid.UUID
	if teamID != nil {
		team = *teamID
	}
	start, err := s.sso.Start(r.Context(), r.URL.Query().Get("email"), team)
	if err != nil {
		return err
	}
	http.SetCookie(w, &http.Cookie{
		Name: ssoStateCookie, Value: start.State, Path: "/api/auth/sso", MaxAge: 600,
		HttpOnly: true, Secure: s.secureCookies, SameSite: http.SameSiteLaxMode,
	})
	w.Header().Set("Cache-Control", "no-store")
	http.Redirect(w, r, start.URL, http.StatusFound)
	return nil
}

// ssoCallback is the identity provider's return: a session cookie and
// the dashboard, or the login page saying what went wrong.
func (s *Server) ssoCallback(w http.ResponseWriter, r *http.Request, _ access.Scope) error {
	q := r.URL.Query()
	in := accounts.SSOCallback{State: q.Get("state"), Code: q.Get("code"), Error: q.Get("error"), ErrorDescription: q.Get("error_description")}
	http.SetCookie(w, &http.Cookie{
		Name: ssoStateCookie, Value: "", Path: "/api/auth/sso", MaxAge: -1,
		HttpOnly: true, Secure: s.secureCookies, SameSite: http.SameSiteLaxMode,
	})
	w.Header().Set("Cache-Control", "no-store")
	var (
		res accounts.SSOLogin
		err error
	)
	if c, cerr := r.Cookie(ssoStateCookie); cerr != nil || in.State == "" || c.Value != in.State {
		err = &accounts.SSOError{Code: accounts.SSOErrState, Cause: errors.New("the state is not the one this browser was given")}
	} else {
		res, err = s.sso.Callback(r.Context(), in)
	}
	if err != nil {
		code := accounts.SSOErrAccount
		var se *accounts.SSOError
		if errors.As(err, &se) {
			code = se.Code
		}
		s.log.InfoContext(r.Context(), "single sign-on refused", "request_id", RequestID(r.Context()), "sso_error", code, "err", err)
		http.Redirect(w, r, "/app/login?sso_error="+url.QueryEscape(code), http.StatusFound)
		return nil
	}
	s.setSessionCookies(w, &res.Session)
	http.Redirect(w, r, homePath, http.StatusFound)
	return nil
}
