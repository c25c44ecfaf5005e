package httpapi

import (
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/contactbook/contactbook/internal/access"
	"github.com/contactbook/contactbook/internal/accounts"
	"github.com/contactbook/contactbook/internal/apperr"
)

func (s *Server) invite(w http.ResponseWriter, r *http.Request, sc access.Scope) error {
	var in accounts.InvitationInput
	if err := decodeJSON(w, r, &in); err != nil {
		return err
	}
	inv, err := s.accounts.Invite(r.Context(), sc, in)
	if err != nil {
		return err
	}
	return data(w, http.StatusCreated, inv)
}

func (s *Server) listInvitations(w http.ResponseWriter, r *http.Request, sc access.Scope) error {
	invs, err := s.accounts.Invitations(r.Context(), sc)
	if err != nil {
		return err
	}
	return data(w, http.StatusOK, nonNil(invs))
}

func (s *Server) revokeInvitation(w http.ResponseWriter, r *http.Request, sc access.Scope) error {
	id, err := pathUUID(r, "id")
	if err != nil {
		return err
	}
	if err := s.accounts.RevokeInvitation(r.Context(), sc, id); err != nil {
		return err
	}
	return noContent(w)
}

// lookupInvitation reads an invitation by the token in its path (links of
// older emails; the access log redacts the token).
func (s *Server) lookupInvitation(w http.ResponseWriter, r *http.Request, _ access.Scope) error {
	v, err := s.accounts.LookupInvitation(r.Context(), chi.URLParam(r, "token"))
	if err != nil {
		return err
	}
	return data(w, http.StatusOK, v)
}

// lookupInvitationByBody reads an invitation by the token in the body,
// which no log, proxy or browser history keeps.
func (s *Server) lookupInvitationByBody(w http.ResponseWriter, r *http.Request, _ access.Scope) error {
	var in struct {
		Token string `json:"token"`
	}
	if err := decodeJSON(w, r, &in); err != nil {
		return err
	}
	if in.Token == "" {
		return apperr.Invalidf("`token` is required.")
	}
	v, err := s.accounts.LookupInvitation(r.Context(), in.Token)
	if err != nil {
		return err
	}
	return data(w, http.StatusOK, v)
}

func (s *Server) acceptInvitation(w http.ResponseWriter, r *http.Request, _ access.Scope) error {
	var in accounts.AcceptInput
	if err := decodeJSON(w, r, &in); err != nil {
		return err
	}
	res, err := s.accounts.AcceptInvitation(r.Context(), optionalActor(r.Context()), in)
	if err != nil {
		return err
	}
	s.startSession(w, r, &res.Session)
	return data(w, http.StatusOK, res)
}

// resetRequested is the one answer to a reset request, whatever happened.
const resetRequested = "If an account uses this email, a link to choose a new password is on its way. It works once, within an hour."

func (s *Server) requestReset(w http.ResponseWriter, r *http.Request, _ access.Scope) error {
	var in accounts.ResetRequest
	if err := decodeJSON(w, r, &in); err != nil {
		return err
	}
	if err := s.accounts.RequestPasswordReset(r.Context(), in); err != nil {
		return err
	}
	return data(w, http.StatusAccepted, map[string]string{"message": resetRequested})
}

func (s *Server) confirmReset(w http.ResponseWriter, r *http.Request, _ access.Scope) error {
	var in accounts.ResetConfirm
	if err := decodeJSON(w, r, &in); err != nil {
		return err
	}
	res, err := s.accounts.ConfirmPasswordReset(r.Context(), in)
	if err != nil {
		return err
	}
	return s.answerLogin(w, r, res)
}

func (s *Server) changePassword(w http.ResponseWriter, r *http.Request, sc access.Scope) error {
	var in accounts.PasswordChange
	if err := decodeJSON(w, r, &in); err != nil {
		return err
	}
	sess, err := s.accounts.ChangePassword(r.Context(), sc.Actor, in)
	if err != nil {
		return err
	}
	s.startSession(w, r, &sess)
	return data(w, http.StatusOK, sess)
}

func (s *Server) logout(w http.ResponseWriter, r *http.Request, sc access.Scope) error {
	if err := s.accounts.Logout(r.Context(), sc.Actor); err != nil {
		return err
	}
	s.endSession(w, r)
	return noContent(w)
}
