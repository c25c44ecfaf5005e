package accounts

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/contactbook/contactbook/internal/apperr"
	"github.com/contactbook/contactbook/internal/auth"
	"github.com/contactbook/contactbook/internal/postgres"
	"github.com/contactbook/contactbook/internal/validate"
)

// Two-factor sign-in (docs/security.md, "Two-factor sign-in"): a TOTP secret
// per user, ten single-use recovery codes, and a login in two steps whose
// first step starts no session.
const (
	// mfaLifetime is how long the second step of a login may wait.
	mfaLifetime = 5 * time.Minute
	// recoveryCodeCount is how many recovery codes enabling gives.
	recoveryCodeCount = 10
	// totpIssuer names the service in authenticator apps.
	totpIssuer = "contactbook"
)

// MFAChallenge answers a right password of an account with two-factor
// sign-in: the token of the second step, instead of a session.
type MFAChallenge struct {
	MFARequired bool      `json:"mfa_required"`
	MFAToken    string    `json:"mfa_token"`
	ExpiresAt   time.Time `json:"expires_at"`
}

// TwoFactorSetup is a pending TOTP secret and what an authenticator app
// needs to add it. The QR code is rendered by the service, so the secret
// never leaves it for an outside QR service.
type TwoFactorSetup struct {
	Secret     string `json:"secret"`
	OtpauthURL string `json:"otpauth_url"`
	QRCode     string `json:"qr_code"`
}

// CodeInput is a TOTP code.
type CodeInput struct {
	Code string `json:"code" validate:"required,max=20"`
}

// RecoveryCodes are shown once, when two-factor sign-in is turned on.
type RecoveryCodes struct {
	RecoveryCodes []string `json:"recovery_codes"`
}

// DisableInput turns two-factor sign-in off: the password and a second
// factor.
type DisableInput struct {
	Password     string `json:"password" validate:"required,max=200"`
	Code         string `json:"code" validate:"max=20"`
	RecoveryCode string `json:"recovery_code" validate:"max=40"`
}

// SecondStepInput completes a login: the challenge's token and a TOTP code
// or a recovery code.
type SecondStepInput struct {
	MFAToken     string `json:"mfa_token" validate:"required,max=200"`
	Code         string `json:"code" validate:"max=20"`
	RecoveryCode string `json:"recovery_code" validate:"max=40"`
}

var (
	errNeedsUser         = apperr.New(apperr.Unauthorized, "Two-factor sign-in belongs to a person; log in with a token.")
	errOneFactor         = apperr.Invalidf("Send either `code` (from your authenticator app) or `recovery_code`.")
	errMFAGone           = apperr.New(apperr.Unauthorized, "This sign-in step is unknown, used or expired, or the code is wrong; log in again or try another code.")
	errWrongSecondFactor = errors.New("wrong second factor")
)

// challengeIfTwoFactor starts the second step of a login for a user with
// two-factor sign-in, in tx; nil when the user has none.
func (s *Service) challengeIfTwoFactor(ctx context.Context, tx postgres.DB, userID uuid.UUID) (*MFAChallenge, error) {
	on, err := s.st.twoFactorOn(ctx, tx, userID)
	if err != nil || !on {
		return nil, err
	}
	token, hash, err := auth.NewLinkToken()
	if err != nil {
		return nil, err
	}
	now := s.now()
	exp := now.Add(mfaLifetime).UTC().Truncate(time.Second)
	if err := s.st.insertChallenge(ctx, tx, hash, userID, now, exp); err != nil {
		return nil, err
	}
	return &MFAChallenge{MFARequired: true, MFAToken: token, ExpiresAt: exp}, nil
}

// SetupTwoFactor makes a new TOTP secret for the actor, pending until
// EnableTwoFactor confirms it with a code; a second setup replaces a
// pending one.
func (s *Service) SetupTwoFactor(ctx context.Context, actor *auth.Actor) (TwoFactorSetup, error) {
	if actor.IsKey() {
		return TwoFactorSetup{}, errNeedsUser
	}
	u, err := s.st.user(ctx, s.db, actor.UserID)
	if err != nil {
		return TwoFactorSetup{}, err
	}
	if u.TwoFactorEnabled {
		return TwoFactorSetup{}, apperr.New(apperr.Conflict, "Two-factor sign-in is already on; turn it off first to set up another authenticator.")
	}
	key, err := auth.NewTOTPKey(totpIssuer, u.Email)
	if err != nil {
		return TwoFactorSetup{}, err
	}
	sealed, err := s.secrets.Seal([]byte(key.Secret), u.ID[:])
	if err != nil {
		return TwoFactorSetup{}, apperr.Wrap(err, apperr.Internal, "seal TOTP secret")
	}
	if err := s.st.setPendingTOTP(ctx, s.db, u.ID, sealed); err != nil {
		return TwoFactorSetup{}, err
	}
	return TwoFactorSetup{Secret: key.Secret, OtpauthURL: key.URL, QRCode: key.QRCode}, nil
}

// EnableTwoFactor turns two-factor sign-in on with a code of the pending
// secret, and returns ten recovery codes (stored hashed, shown this once).
// Sessions already open stay open.
func (s *Service) EnableTwoFactor(ctx context.Context, actor *auth.Actor, in CodeInput) (RecoveryCodes, error) {
	if actor.IsKey() {
		return RecoveryCodes{}, errNeedsUser
	}
	if err := validate.Struct(in); err != nil {
		return RecoveryCodes{}, err
	}
	var out RecoveryCodes
	err := postgres.InTx(ctx, s.db, func(tx *postgres.Tx) error {
		sec, err := s.st.totpSecrets(ctx, tx, actor.UserID)
		if err != nil {
			return err
		}
		if sec.active != nil {
			return apperr.New(apperr.Conflict, "Two-factor sign-in is already on.")
		}
		if sec.pending == nil {
			return apperr.New(apperr.Conflict, "Start with POST /api/auth/2fa/setup, add the secret to your authenticator app, then send its code.")
		}
		secret, err := s.openSecret(actor.UserID, sec.pending)
		if err != nil {
			return err
		}
		step := auth.MatchTOTP(secret, in.Code, s.now())
		if step == 0 {
			return apperr.Invalidf("`code` is not the current code of your authenticator app; check its clock and try the next code.")
		}
		codes, hashes, err := auth.NewRecoveryCodes(recoveryCodeCount)
		if err != nil {
			return err
		}
		if err := s.st.enableTOTP(ctx, tx, actor.UserID, s.now(), step); err != nil {
			return err
		}
		out.RecoveryCodes = codes
		return s.st.replaceRecoveryCodes(ctx, tx, actor.UserID, hashes)
	})
	return out, err
}

// DisableTwoFactor turns two-factor sign-in off, given the password and a
// code or a recovery code. Wrong attempts count in the login throttle of
// the account, so a stolen session cannot guess its way through.
func (s *Service) DisableTwoFactor(ctx context.Context, actor *auth.Actor, in DisableInput) error {
	if actor.IsKey() {
		return errNeedsUser
	}
	if err := validate.Struct(in); err != nil {
		return err
	}
	if (in.Code == "") == (in.RecoveryCode == "") {
		return errOneFactor
	}
	u, err := s.st.user(ctx, s.db, actor.UserID)
	if err != nil {
		return err
	}
	if !u.TwoFactorEnabled {
		return apperr.New(apperr.Conflict, "Two-factor sign-in is not on.")
	}
	wait, err := s.take(ctx, loginWindow, throttleKey{loginEmailKey(u.Email), loginPerEmail})
	if err != nil {
		return err
	}
	if wait > 0 {
		return throttled(wait, "Too many wrong attempts for this account; wait (see Retry-After) and try again.")
	}
	hash, err := s.st.passwordHash(ctx, s.db, u.ID)
	if err != nil {
		return err
	}
	wrong := apperr.Forbiddenf("The password or the code is wrong.")
	if !auth.CheckPassword(hash, in.Password) {
		return wrong
	}
	err = postgres.InTx(ctx, s.db, func(tx *postgres.Tx) error {
		ok, err := s.useSecondFactor(ctx, tx, u.ID, in.Code, in.RecoveryCode)
		if err != nil {
			return err
		}
		if !ok {
			return wrong
		}
		return s.st.disableTOTP(ctx, tx, u.ID)
	})
	return err
}

// LoginSecondStep completes a login with the challenge's token and a code
// or a recovery code, and starts the session. A wrong code leaves the
// token usable (the login throttle limits guesses); a success uses it up.
func (s *Service) LoginSecondStep(ctx context.Context, in SecondStepInput, clientIP string) (Session, error) {
	if err := validate.Struct(in); err != nil {
		return Session{}, err
	}
	if (in.Code == "") == (in.RecoveryCode == "") {
		return Session{}, errOneFactor
	}
	hash := auth.HashLinkToken(in.MFAToken)
	userID, email, err := s.st.challenge(ctx, s.db, hash, s.now())
	if apperr.Is(err, apperr.NotFound) {
		return Session{}, errMFAGone
	}
	if err != nil {
		return Session{}, err
	}
	emailKey, ipKey := loginEmailKey(email), loginIPKey(clientIP)
	wait, err := s.take(ctx, loginWindow, throttleKey{emailKey, loginPerEmail}, throttleKey{ipKey, loginPerClientIP})
	if err != nil {
		return Session{}, err
	}
	if wait > 0 {
		return Session{}, throttled(wait, "Too many failed sign-in attempts for this account or from your address; wait (see Retry-After) and try again.")
	}
	var sess Session
	err = postgres.InTx(ctx, s.db, func(tx *postgres.Tx) error {
		// Deleted first, under its row lock: of two uses racing, one wins.
		if ok, err := s.st.takeChallenge(ctx, tx, hash, userID, s.now()); err != nil || !ok {
			return errors.Join(err, errMFAGone)
		}
		ok, err := s.useSecondFactor(ctx, tx, userID, in.Code, in.RecoveryCode)
		if err != nil {
			return err
		}
		if !ok {
			// Rolled back: the challenge stays for another try.
			return errWrongSecondFactor
		}
		if err := s.st.loginSucceeded(ctx, tx, emailKey, ipKey); err != nil {
			return err
		}
		sess, err = s.startSession(ctx, tx, userID)
		return err
	})
	if errors.Is(err, errWrongSecondFactor) {
		return Session{}, errMFAGone
	}
	return sess, err
}

// useSecondFactor checks a TOTP code or a recovery code of userID in tx
// and uses it up: a code's time step becomes the last one accepted (a
// code of that step or an earlier one is refused), a recovery code is
// marked used. It reports whether one matched.
func (s *Service) useSecondFactor(ctx context.Context, tx postgres.DB, userID uuid.UUID, code, recovery string) (bool, error) {
	if recovery != "" {
		return s.st.useRecoveryCode(ctx, tx, userID, auth.HashRecoveryCode(recovery), s.now())
	}
	sec, err := s.st.totpSecrets(ctx, tx, userID)
	if err != nil || sec.active == nil {
		return false, err
	}
	secret, err := s.openSecret(userID, sec.active)
	if err != nil {
		return false, err
	}
	step := auth.MatchTOTP(secret, strings.TrimSpace(code), s.now())
	if step == 0 || step <= sec.lastStep {
		return false, nil
	}
	return true, s.st.setLastStep(ctx, tx, userID, step)
}

func (s *Service) openSecret(userID uuid.UUID, sealed []byte) (string, error) {
	plain, err := s.secrets.Open(sealed, userID[:])
	if err != nil {
		return "", apperr.Wrap(err, apperr.Internal, "open TOTP secret (was SETTINGS_ENCRYPTION_KEY changed?)")
	}
	return string(plain), nil
}
