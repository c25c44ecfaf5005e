package accounts

import (
	"context"
	"strings"

	"github.com/google/uuid"

	"github.com/contactbook/contactbook/internal/accountmail"
	"github.com/contactbook/contactbook/internal/apperr"
	"github.com/contactbook/contactbook/internal/auth"
	"github.com/contactbook/contactbook/internal/postgres"
	"github.com/contactbook/contactbook/internal/validate"
)

// ResetRequest asks for a password reset link.
type ResetRequest struct {
	Email string `json:"email" validate:"required,email,max=254"`
}

// ResetConfirm sets a new password with a reset link's token.
type ResetConfirm struct {
	Token    string `json:"token" validate:"required,max=200"`
	Password string `json:"password" validate:"required,min=8,max=72"`
}

// PasswordChange changes the logged-in user's password.
type PasswordChange struct {
	CurrentPassword string `json:"current_password" validate:"required,max=200"`
	NewPassword     string `json:"new_password" validate:"required,min=8,max=72"`
}

// RequestPasswordReset emails a reset link when an account has the
// address. The caller learns nothing either way: no error tells whether
// the account exists or the request was over its limit (resetPerEmail an
// hour, beyond which nothing is sent). A new link replaces the previous
// one.
func (s *Service) RequestPasswordReset(ctx context.Context, in ResetRequest) error {
	in.Email = strings.TrimSpace(in.Email)
	if err := validate.Struct(in); err != nil {
		return err
	}
	wait, err := s.take(ctx, resetWindow, throttleKey{resetEmailKey(in.Email), resetPerEmail})
	if err != nil || wait > 0 {
		return err
	}
	u, err := s.st.userByEmail(ctx, s.db, in.Email)
	if apperr.Is(err, apperr.NotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	token, hash, err := auth.NewLinkToken()
	if err != nil {
		return err
	}
	now := s.now()
	return postgres.InTx(ctx, s.db, func(tx *postgres.Tx) error {
		if err := s.st.replaceReset(ctx, tx, u.ID, hash, now, now.Add(ResetLifetime)); err != nil {
			return err
		}
		return s.mail.QueuePasswordReset(ctx, tx, now, accountmail.PasswordReset{
			To: u.Email, Name: u.Name, Token: token, ExpiresAt: now.Add(ResetLifetime),
		})
	})
}

var errResetGone = apperr.NotFoundf("This reset link is unknown, used, replaced or expired; ask for a new one.")

// ConfirmPasswordReset sets the password of the link's account, ends every
// session of it and starts a new one; for an account with two-factor
// sign-in (which a reset leaves on) it answers the second step's challenge
// instead. The link works once.
func (s *Service) ConfirmPasswordReset(ctx context.Context, in ResetConfirm) (LoginResult, error) {
	if err := validate.Struct(in); err != nil {
		return LoginResult{}, err
	}
	hash := auth.HashLinkToken(in.Token)
	// A cheap check first, so unknown tokens cost no password hashing.
	if _, err := s.st.resetUser(ctx, s.db, hash, s.now(), false); err != nil {
		return LoginResult{}, err
	}
	pw, err := auth.HashPassword(in.Password, s.passwordCost)
	if err != nil {
		return LoginResult{}, err
	}
	return s.setPassword(ctx, func(tx *postgres.Tx) (uuid.UUID, error) {
		return s.st.resetUser(ctx, tx, hash, s.now(), true)
	}, pw, true)
}

// ChangePassword changes the actor's password after checking the current
// one, ends every session of the account (the caller's included) and
// starts a new one, whose token the answer carries.
func (s *Service) ChangePassword(ctx context.Context, actor *auth.Actor, in PasswordChange) (Session, error) {
	if actor.IsKey() {
		return Session{}, apperr.New(apperr.Unauthorized, "API keys have no password; log in with a token.")
	}
	if err := validate.Struct(in); err != nil {
		return Session{}, err
	}
	u, err := s.st.user(ctx, s.db, actor.UserID)
	if apperr.Is(err, apperr.NotFound) {
		return Session{}, apperr.New(apperr.Unauthorized, "The account of this token no longer exists.")
	}
	if err != nil {
		return Session{}, err
	}
	// Guesses count in the login throttle of the account, so a stolen
	// session cannot guess the password the login would refuse to.
	emailKey := loginEmailKey(u.Email)
	wait, err := s.take(ctx, loginWindow, throttleKey{emailKey, loginPerEmail})
	if err != nil {
		return Session{}, err
	}
	if wait > 0 {
		return Session{}, throttled(wait, "Too many wrong passwords for this account; wait (see Retry-After) and try again.")
	}
	current, err := s.st.passwordHash(ctx, s.db, actor.UserID)
	if err != nil {
		return Session{}, err
	}
	if !auth.CheckPassword(current, in.CurrentPassword) {
		return Session{}, apperr.Forbiddenf("The current password is wrong.")
	}
	if err := s.st.giveBack(ctx, s.db, emailKey); err != nil {
		return Session{}, err
	}
	pw, err := auth.HashPassword(in.NewPassword, s.passwordCost)
	if err != nil {
		return Session{}, err
	}
	res, err := s.setPassword(ctx, func(*postgres.Tx) (uuid.UUID, error) { return actor.UserID, nil }, pw, false)
	return res.Session, err
}

// setPassword stores the password hash pw for the user whom (run in the
// transaction) names, ends all of the user's sessions, app passwords and
// pending reset, queues the notice and starts a new session, or with challenge a second
// step for a user with two-factor sign-in.
func (s *Service) setPassword(ctx context.Context, whom func(tx *postgres.Tx) (uuid.UUID, error), pw string, challenge bool) (LoginResult, error) {
	var res LoginResult
	var userID uuid.UUID
	now := s.now()
	err := postgres.InTx(ctx, s.db, func(tx *postgres.Tx) error {
		var err error
		if userID, err = whom(tx); err != nil {
			return err
		}
		u, err := s.st.setPassword(ctx, tx, userID, pw)
		if err != nil {
			return err
		}
		if err := s.st.endSessions(ctx, tx, userID); err != nil {
			return err
		}
		// App passwords end too: after a takeover, the new password must
		// shut out a device the intruder set up.
		if err := s.st.deleteAppPasswords(ctx, tx, userID); err != nil {
			return err
		}
		if challenge {
			if res.MFA, err = s.challengeIfTwoFactor(ctx, tx, userID); err != nil {
				return err
			}
		}
		if res.MFA == nil {
			if res.Session, err = s.startSession(ctx, tx, userID); err != nil {
				return err
			}
		}
		return s.mail.QueuePasswordChanged(ctx, tx, now, accountmail.PasswordChanged{To: u.Email, Name: u.Name, At: now})
	})
	if err != nil {
		return LoginResult{}, err
	}
	s.sessions.forgetUser(userID)
	s.appPasswords.forget(func(p cachedAppPassword) bool { return p.userID == userID })
	return res, nil
}
