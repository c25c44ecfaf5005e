package accounts

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/google/uuid"
	"golang.org/x/oauth2"

	"github.com/contactbook/contactbook/internal/apperr"
	"github.com/contactbook/contactbook/internal/auth"
	"github.com/contactbook/contactbook/internal/events"
	"github.com/contactbook/contactbook/internal/postgres"
	"github.com/contactbook/contactbook/internal/validate"
	"github.com/contactbook/contactbook/internal/webhooks"
)

// Single sign-on with OpenID Connect, per team: the team's settings (its
// identity provider), and the authorization code flow that turns a
// provider's ID token into a session of the service. See docs/sso.md.

// SSOCallbackPath is where identity providers send people back.
const SSOCallbackPath = "/api/auth/sso/callback"

// ssoStateTTL is how long a sign-in may take between the redirect to the
// provider and its return.
const ssoStateTTL = 10 * time.Minute

// maxAllowedDomains bounds a team's email domains.
const maxAllowedDomains = 20

// SSODeps are what single sign-on needs besides the accounts service.
type SSODeps struct {
	Accounts *Service
	// PublicBaseURL makes the redirect URI (PUBLIC_BASE_URL).
	PublicBaseURL string
	// AllowInsecure lets issuers be http:// and local (development,
	// tests): WEBHOOK_ALLOW_INSECURE.
	AllowInsecure bool
	// HTTPClient reaches the providers (discovery, keys, token exchange);
	// it must refuse non-public addresses unless AllowInsecure.
	HTTPClient *http.Client
	Log        *slog.Logger
}

// SSO runs single sign-on for every team.
type SSO struct {
	acc      *Service
	base     string
	insecure bool
	client   *http.Client
	log      *slog.Logger
}

// NewSSO wires single sign-on.
func NewSSO(d SSODeps) *SSO {
	client := d.HTTPClient
	if client == nil {
		client = &http.Client{Timeout: 10 * time.Second}
	}
	log := d.Log
	if log == nil {
		log = slog.Default()
	}
	return &SSO{acc: d.Accounts, base: strings.TrimRight(d.PublicBaseURL, "/"), insecure: d.AllowInsecure, client: client, log: log}
}

// RedirectURI is the address providers send people back to; a team
// registers it with its provider.
func (s *SSO) RedirectURI() string { return s.base + SSOCallbackPath }

// SSOSettings are a team's single sign-on settings as answers show them.
type SSOSettings struct {
	TeamID         uuid.UUID         `json:"team_id"`
	Issuer         string            `json:"issuer"`
	ClientID       string            `json:"client_id"`
	ClientSecret   string            `json:"client_secret"` // masked
	AllowedDomains []string          `json:"allowed_domains"`
	DefaultRole    string            `json:"default_role"`
	GroupsClaim    string            `json:"groups_claim"`
	RoleMap        map[string]string `json:"role_map"`
	Enforce        bool              `json:"enforce"`
	RedirectURI    string            `json:"redirect_uri"`
	CreatedAt      time.Time         `json:"created_at"`
	UpdatedAt      time.Time         `json:"updated_at"`
}

// SSOInput is the body of a save: every field but client_secret is
// replaced; client_secret may be left out or sent back masked to keep the
// stored one (it is required the first time).
type SSOInput struct {
	Issuer         string            `json:"issuer" validate:"required,max=500"`
	ClientID       string            `json:"client_id" validate:"required,max=500"`
	ClientSecret   string            `json:"client_secret" validate:"max=2000"`
	AllowedDomains []string          `json:"allowed_domains"`
	DefaultRole    string            `json:"default_role"`
	GroupsClaim    string            `json:"groups_claim" validate:"max=100"`
	RoleMap        map[string]string `json:"role_map"`
	Enforce        bool              `json:"enforce"`
}

// ssoConfig is a stored configuration, secret sealed.
type ssoConfig struct {
	TeamID         uuid.UUID
	Issuer         string
	ClientID       string
	SecretSealed   []byte
	AllowedDomains []string
	DefaultRole    string
	GroupsClaim    string
	RoleMap        map[string]string
	Enforce        bool
	CreatedAt      time.Time
	UpdatedAt      time.Time
}

var errNoSSO = apperr.NotFoundf("This team has no single sign-on set up.")

// SSODefaultRoles are the roles a default_role may be; SSOMappedRoles
// those role_map may give (admin too). Owner is never given by a provider.
var (
	SSODefaultRoles = []string{auth.RoleViewer.String(), auth.RoleMember.String()}
	SSOMappedRoles  = []string{auth.RoleViewer.String(), auth.RoleMember.String(), auth.RoleAdmin.String()}
)

// Settings returns the team's settings (owner).
func (s *SSO) Settings(ctx context.Context, actor *auth.Actor, teamID uuid.UUID) (SSOSettings, error) {
	if err := s.requireOwner(ctx, actor, teamID); err != nil {
		return SSOSettings{}, err
	}
	c, err := s.acc.st.ssoConfig(ctx, s.acc.db, teamID)
	if apperr.Is(err, apperr.NotFound) {
		return SSOSettings{}, errNoSSO
	}
	if err != nil {
		return SSOSettings{}, err
	}
	return s.view(c)
}

func (s *SSO) requireOwner(ctx context.Context, actor *auth.Actor, teamID uuid.UUID) error {
	if actor.IsKey() {
		return apperr.Forbiddenf("Single sign-on is set up by a team owner, signed in; API keys cannot.")
	}
	return actor.Require(ctx, teamID, auth.RoleOwner, teamNotFound)
}

func (s *SSO) view(c ssoConfig) (SSOSettings, error) {
	secret, err := s.openSecret(c)
	if err != nil {
		return SSOSettings{}, err
	}
	rm := c.RoleMap
	if rm == nil {
		rm = map[string]string{}
	}
	return SSOSettings{
		TeamID: c.TeamID, Issuer: c.Issuer, ClientID: c.ClientID, ClientSecret: maskSecret(secret),
		AllowedDomains: c.AllowedDomains, DefaultRole: c.DefaultRole, GroupsClaim: c.GroupsClaim, RoleMap: rm,
		Enforce: c.Enforce, RedirectURI: s.RedirectURI(), CreatedAt: c.CreatedAt, UpdatedAt: c.UpdatedAt,
	}, nil
}

// maskSecret shows the last 4 characters of a secret (none of a short
// one), as the provider keys of the campaign settings are shown.
func maskSecret(v string) string {
	r := []rune(v)
	if len(r) <= 8 {
		return "****"
	}
	return "****" + string(r[len(r)-4:])
}

func (s *SSO) openSecret(c ssoConfig) (string, error) {
	plain, err := s.acc.secrets.Open(c.SecretSealed, c.TeamID[:])
	if err != nil {
		return "", apperr.Wrap(err, apperr.Internal, "open SSO client secret (was SETTINGS_ENCRYPTION_KEY changed?)")
	}
	return string(plain), nil
}

// SaveSettings creates or replaces the team's settings (owner). The
// issuer's discovery document is fetched and must name the issuer given,
// so a typo or a provider that cannot be reached is caught here rather
// than at the first sign-in.
func (s *SSO) SaveSettings(ctx context.Context, actor *auth.Actor, teamID uuid.UUID, in SSOInput) (SSOSettings, error) {
	if err := s.requireOwner(ctx, actor, teamID); err != nil {
		return SSOSettings{}, err
	}
	in.Issuer = strings.TrimRight(strings.TrimSpace(in.Issuer), "/")
	in.ClientID = strings.TrimSpace(in.ClientID)
	in.GroupsClaim = strings.TrimSpace(in.GroupsClaim)
	if err := validate.Struct(in); err != nil {
		return SSOSettings{}, err
	}
	domains, err := normalizeDomains(in.AllowedDomains)
	if err != nil {
		return SSOSettings{}, err
	}
	if in.DefaultRole == "" {
		in.DefaultRole = auth.RoleMember.String()
	}
	if !slices.Contains(SSODefaultRoles, in.DefaultRole) {
		return SSOSettings{}, apperr.Invalidf("`default_role` must be viewer or member.")
	}
	roleMap := map[string]string{}
	for group, role := range in.RoleMap {
		group = strings.TrimSpace(group)
		if group == "" || len(group) > 200 {
			return SSOSettings{}, apperr.Invalidf("`role_map` keys must be group names of 1 to 200 characters.")
		}
		if !slices.Contains(SSOMappedRoles, role) {
			return SSOSettings{}, apperr.Invalidf("`role_map` gives %q the role %q: roles are viewer, member or admin.", group, role)
		}
		roleMap[group] = role
	}
	if len(roleMap) > 100 {
		return SSOSettings{}, apperr.Invalidf("`role_map` may hold at most 100 groups.")
	}
	if len(roleMap) > 0 && in.GroupsClaim == "" {
		return SSOSettings{}, apperr.Invalidf("`groups_claim` is required with a `role_map`: it names the ID token claim that lists the groups (often groups).")
	}
	if err := s.checkIssuerURL(in.Issuer); err != nil {
		return SSOSettings{}, err
	}
	if _, err := s.provider(ctx, in.Issuer); err != nil {
		return SSOSettings{}, err
	}

	var out ssoConfig
	err = postgres.InTx(ctx, s.acc.db, func(tx *postgres.Tx) error {
		old, err := s.acc.st.ssoConfig(ctx, tx, teamID)
		exists := err == nil
		if err != nil && !apperr.Is(err, apperr.NotFound) {
			return err
		}
		secret := in.ClientSecret
		if secret == "" || (exists && strings.HasPrefix(secret, "****")) {
			if !exists {
				return apperr.Invalidf("`client_secret` is required: the secret of the client registered with the identity provider.")
			}
			if secret, err = s.openSecret(old); err != nil {
				return err
			}
		}
		sealed, err := s.acc.secrets.Seal([]byte(secret), teamID[:])
		if err != nil {
			return apperr.Wrap(err, apperr.Internal, "seal SSO client secret")
		}
		c := ssoConfig{
			TeamID: teamID, Issuer: in.Issuer, ClientID: in.ClientID, SecretSealed: sealed, AllowedDomains: domains,
			DefaultRole: in.DefaultRole, GroupsClaim: in.GroupsClaim, RoleMap: roleMap, Enforce: in.Enforce,
		}
		if out, err = s.acc.st.saveSSOConfig(ctx, tx, c, s.acc.now()); err != nil {
			return err
		}
		// Secrets never go into the audit log.
		return s.acc.record(ctx, tx, actor, teamID, "sso.updated", "team", teamID.String(), map[string]any{
			"issuer": in.Issuer, "client_id": in.ClientID, "allowed_domains": domains, "default_role": in.DefaultRole,
			"groups_claim": in.GroupsClaim, "role_map": roleMap, "enforce": in.Enforce, "secret_changed": !exists || in.ClientSecret != "" && !strings.HasPrefix(in.ClientSecret, "****"),
		})
	})
	if err != nil {
		return SSOSettings{}, err
	}
	return s.view(out)
}

// DeleteSettings turns single sign-on off for the team (owner). People
// who signed in through it keep their accounts and memberships; without
// a password they sign in by resetting one.
func (s *SSO) DeleteSettings(ctx context.Context, actor *auth.Actor, teamID uuid.UUID) error {
	if err := s.requireOwner(ctx, actor, teamID); err != nil {
		return err
	}
	return postgres.InTx(ctx, s.acc.db, func(tx *postgres.Tx) error {
		ok, err := s.acc.st.deleteSSOConfig(ctx, tx, teamID)
		if err != nil {
			return err
		}
		if !ok {
			return errNoSSO
		}
		return s.acc.record(ctx, tx, actor, teamID, "sso.deleted", "team", teamID.String(), nil)
	})
}

// normalizeDomains lower-cases, checks and deduplicates email domains.
func normalizeDomains(in []string) ([]string, error) {
	out := make([]string, 0, len(in))
	for i, d := range in {
		d = strings.ToLower(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(d), "@")))
		if !validDomain(d) {
			return nil, apperr.Invalidf("`allowed_domains[%d]` must be an email domain such as example.com.", i)
		}
		if !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	if len(out) < 1 || len(out) > maxAllowedDomains {
		return nil, apperr.Invalidf("`allowed_domains` must list 1 to %d email domains: the addresses that sign in through this provider.", maxAllowedDomains)
	}
	return out, nil
}

// validDomain is a host name of at least two labels.
func validDomain(d string) bool {
	if len(d) > 253 || !strings.Contains(d, ".") {
		return false
	}
	for _, label := range strings.Split(d, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for _, r := range label {
			if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
				return false
			}
		}
	}
	return true
}

// checkIssuerURL wants an https issuer on a public address (http and
// local addresses in development: WEBHOOK_ALLOW_INSECURE).
func (s *SSO) checkIssuerURL(issuer string) error {
	u, err := url.Parse(issuer)
	if err != nil || u.Host == "" || u.Hostname() == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return apperr.Invalidf("`issuer` must be the identity provider's issuer URL, such as https://login.example.com/realms/acme.")
	}
	switch {
	case u.Scheme == "https":
	case u.Scheme == "http" && s.insecure:
	default:
		return apperr.Invalidf("`issuer` must start with https://.")
	}
	if !s.insecure {
		if reason := webhooks.NonPublicHost(u.Hostname()); reason != "" {
			return apperr.Invalidf("`issuer` must be on a public address, not a %s one.", reason)
		}
	}
	return nil
}

// provider fetches the issuer's discovery document (its issuer must be
// issuer) through the guarded client.
func (s *SSO) provider(ctx context.Context, issuer string) (*oidc.Provider, error) {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	p, err := oidc.NewProvider(oidc.ClientContext(ctx, s.client), issuer)
	if err != nil {
		s.log.InfoContext(ctx, "SSO discovery failed", "issuer", issuer, "err", err)
		return nil, apperr.Wrap(err, apperr.InvalidInput, "`issuer` has no usable discovery document at %s/.well-known/openid-configuration (unreachable, not OpenID Connect, or naming another issuer).", issuer)
	}
	return p, nil
}

// SSOStart is where a sign-in begins: the provider's authorization URL.
type SSOStart struct {
	URL string
	// State is the sign-in's state, which the browser must bring back.
	State string
}

// Start begins a sign-in for the team whose allowed_domains hold the
// email's domain (or for teamID): a state, a nonce and a PKCE verifier
// are stored (PostgreSQL, so any instance may take the return), and the
// answer is the provider's authorization URL.
func (s *SSO) Start(ctx context.Context, email string, teamID uuid.UUID) (SSOStart, error) {
	var (
		c   ssoConfig
		err error
	)
	email = strings.TrimSpace(email)
	switch {
	case teamID != uuid.Nil:
		c, err = s.acc.st.ssoConfig(ctx, s.acc.db, teamID)
	case email != "":
		at := strings.LastIndexByte(email, '@')
		if at < 1 || at == len(email)-1 {
			return SSOStart{}, apperr.Invalidf("`email` must be an email address.")
		}
		c, err = s.acc.st.ssoConfigByDomain(ctx, s.acc.db, strings.ToLower(email[at+1:]))
	default:
		return SSOStart{}, apperr.Invalidf("Send `email` (your work address) or `team_id`.")
	}
	if apperr.Is(err, apperr.NotFound) {
		return SSOStart{}, apperr.NotFoundf("No team signs in with single sign-on for this address; log in with your password.")
	}
	if err != nil {
		return SSOStart{}, err
	}
	p, err := s.provider(ctx, c.Issuer)
	if err != nil {
		return SSOStart{}, apperr.Wrap(err, apperr.Unavailable, "The team's identity provider cannot be reached; try again in a moment.")
	}
	state, stateHash, err := auth.NewLinkToken()
	if err != nil {
		return SSOStart{}, err
	}
	nonce, _, err := auth.NewLinkToken()
	if err != nil {
		return SSOStart{}, err
	}
	verifier := oauth2.GenerateVerifier()
	now := s.acc.now()
	if err := s.acc.st.insertSSOState(ctx, s.acc.db, stateHash, c.TeamID, nonce, verifier, now, now.Add(ssoStateTTL)); err != nil {
		return SSOStart{}, err
	}
	opts := []oauth2.AuthCodeOption{oidc.Nonce(nonce), oauth2.S256ChallengeOption(verifier)}
	if email != "" {
		opts = append(opts, oauth2.SetAuthURLParam("login_hint", email))
	}
	return SSOStart{URL: s.oauth(c, "", p).AuthCodeURL(state, opts...), State: state}, nil
}

func (s *SSO) oauth(c ssoConfig, secret string, p *oidc.Provider) *oauth2.Config {
	return &oauth2.Config{
		ClientID: c.ClientID, ClientSecret: secret, Endpoint: p.Endpoint(), RedirectURL: s.RedirectURI(),
		Scopes: []string{oidc.ScopeOpenID, "email", "profile"},
	}
}

// SSOError is a sign-in that failed: Code goes to the login page
// (sso_error), which says what went wrong; the cause is logged.
type SSOError struct {
	Code  string
	Cause error
}

func (e *SSOError) Error() string { return "sso: " + e.Code + ": " + fmt.Sprint(e.Cause) }

func (e *SSOError) Unwrap() error { return e.Cause }

// The codes of SSOError, which the login page knows.
const (
	SSOErrState       = "state"    // unknown, used or older than 10 minutes
	SSOErrProvider    = "provider" // the provider answered an error (access denied, ...)
	SSOErrExchange    = "exchange" // the code could not be exchanged
	SSOErrToken       = "token"    // the ID token failed verification
	SSOErrUnverified  = "email_unverified"
	SSOErrDomain      = "domain"      // the email's domain is not allowed
	SSOErrUnavailable = "unavailable" // the provider could not be reached, or SSO was turned off meanwhile
	SSOErrAccount     = "account"     // the account could not be signed in
)

func ssoFail(code string, cause error) error { return &SSOError{Code: code, Cause: cause} }

// SSOCallback is the provider's return: the query parameters.
type SSOCallback struct {
	State, Code, Error, ErrorDescription string
}

// SSOLogin is a completed sign-in.
type SSOLogin struct {
	Session Session
	TeamID  uuid.UUID
	Role    string
}

// Callback completes a sign-in: the state (single use, at most 10
// minutes old), the code exchanged with its PKCE verifier, the ID token
// verified (signature by the issuer's keys, iss, aud, exp, nonce), a
// verified email on an allowed domain; then the account (created without
// a password when there is none), the membership and its role, and a
// session marked as this team's single sign-on. Every failure is an
// *SSOError and leaves no session.
func (s *SSO) Callback(ctx context.Context, in SSOCallback) (SSOLogin, error) {
	if in.State == "" {
		return SSOLogin{}, ssoFail(SSOErrState, errors.New("no state"))
	}
	st, err := s.acc.st.takeSSOState(ctx, s.acc.db, auth.HashLinkToken(in.State), s.acc.now())
	if apperr.Is(err, apperr.NotFound) {
		return SSOLogin{}, ssoFail(SSOErrState, err)
	}
	if err != nil {
		return SSOLogin{}, ssoFail(SSOErrUnavailable, err)
	}
	if in.Error != "" {
		return SSOLogin{}, ssoFail(SSOErrProvider, fmt.Errorf("%s: %s", in.Error, in.ErrorDescription))
	}
	if in.Code == "" {
		return SSOLogin{}, ssoFail(SSOErrExchange, errors.New("no code"))
	}
	c, err := s.acc.st.ssoConfig(ctx, s.acc.db, st.teamID)
	if err != nil {
		return SSOLogin{}, ssoFail(SSOErrUnavailable, err)
	}
	secret, err := s.openSecret(c)
	if err != nil {
		return SSOLogin{}, ssoFail(SSOErrUnavailable, err)
	}
	p, err := s.provider(ctx, c.Issuer)
	if err != nil {
		return SSOLogin{}, ssoFail(SSOErrUnavailable, err)
	}
	xctx, cancel := context.WithTimeout(context.WithValue(ctx, oauth2.HTTPClient, s.client), 15*time.Second)
	defer cancel()
	tok, err := s.oauth(c, secret, p).Exchange(xctx, in.Code, oauth2.VerifierOption(st.verifier))
	if err != nil {
		return SSOLogin{}, ssoFail(SSOErrExchange, err)
	}
	raw, _ := tok.Extra("id_token").(string)
	if raw == "" {
		return SSOLogin{}, ssoFail(SSOErrToken, errors.New("no id_token in the token response"))
	}
	// The provider's clock is the wall clock: the ID token is checked
	// against it, not against the service's injectable clock.
	idt, err := p.VerifierContext(oidc.ClientContext(ctx, s.client), &oidc.Config{ClientID: c.ClientID, Now: time.Now}).Verify(xctx, raw)
	if err != nil {
		return SSOLogin{}, ssoFail(SSOErrToken, err)
	}
	// go-oidc checks that aud holds the client; a token also meant for
	// others is refused too, as OpenID Connect Core 3.1.3.7 asks of
	// audiences the client does not trust, and so is one another client
	// was authorized for (azp).
	for _, aud := range idt.Audience {
		if aud != c.ClientID {
			return SSOLogin{}, ssoFail(SSOErrToken, fmt.Errorf("the ID token is also for %q", aud))
		}
	}
	if idt.Nonce != st.nonce {
		return SSOLogin{}, ssoFail(SSOErrToken, errors.New("nonce mismatch"))
	}
	var claims map[string]any
	if err := idt.Claims(&claims); err != nil {
		return SSOLogin{}, ssoFail(SSOErrToken, err)
	}
	if azp, ok := claims["azp"].(string); ok && azp != c.ClientID {
		return SSOLogin{}, ssoFail(SSOErrToken, fmt.Errorf("the ID token was authorized for %q", azp))
	}
	email, _ := claims["email"].(string)
	email = strings.TrimSpace(email)
	if verified, _ := claims["email_verified"].(bool); !verified || email == "" {
		return SSOLogin{}, ssoFail(SSOErrUnverified, fmt.Errorf("email %q, email_verified %v", email, claims["email_verified"]))
	}
	at := strings.LastIndexByte(email, '@')
	if at < 1 || !slices.Contains(c.AllowedDomains, strings.ToLower(email[at+1:])) {
		return SSOLogin{}, ssoFail(SSOErrDomain, fmt.Errorf("email %q", email))
	}
	name, _ := claims["name"].(string)
	role := ssoRole(c, groupsOf(claims, c.GroupsClaim))
	out, err := s.signIn(ctx, c, email, strings.TrimSpace(name), role)
	if err != nil {
		var se *SSOError
		if errors.As(err, &se) {
			return SSOLogin{}, err
		}
		return SSOLogin{}, ssoFail(SSOErrAccount, err)
	}
	return out, nil
}

// groupsOf reads the groups claim: a list of strings, or one string.
func groupsOf(claims map[string]any, claim string) []string {
	if claim == "" {
		return nil
	}
	switch v := claims[claim].(type) {
	case string:
		return []string{v}
	case []any:
		out := make([]string, 0, len(v))
		for _, g := range v {
			if s, ok := g.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// ssoRole is the highest role role_map gives the groups, else
// default_role.
func ssoRole(c ssoConfig, groups []string) auth.Role {
	best := auth.RoleNone
	for _, g := range groups {
		if r, err := auth.ParseRole(c.RoleMap[g]); err == nil && r > best && r < auth.RoleOwner {
			best = r
		}
	}
	if best == auth.RoleNone {
		best, _ = auth.ParseRole(c.DefaultRole)
	}
	return best
}

// signIn makes or finds the account, its membership with role (a new
// member, or with a role_map the role its groups give now; an owner is
// never changed) and a session of the team's single sign-on, in one
// transaction.
func (s *SSO) signIn(ctx context.Context, c ssoConfig, email, name string, role auth.Role) (SSOLogin, error) {
	var out SSOLogin
	now := s.acc.now()
	err := postgres.InTx(ctx, s.acc.db, func(tx *postgres.Tx) error {
		u, err := s.acc.st.userByEmail(ctx, tx, email)
		if apperr.Is(err, apperr.NotFound) {
			if name == "" {
				name = email[:strings.LastIndexByte(email, '@')]
			}
			// No password: the account signs in through the provider (or
			// sets a password with a reset).
			u, err = s.acc.st.insertUser(ctx, tx, email, name, "")
		}
		if err != nil {
			return err
		}
		who := auth.UserActor(u.ID, nil)
		m, err := s.acc.st.role(ctx, tx, c.TeamID, u.ID)
		if err != nil {
			return err
		}
		current := parseRole(m.role)
		given := role
		switch {
		case current == auth.RoleNone:
			member, err := s.acc.st.insertMember(ctx, tx, c.TeamID, u.ID, role.String())
			if err != nil {
				return err
			}
			if err := s.acc.record(ctx, tx, who, c.TeamID, "member.joined", "user", u.ID.String(),
				map[string]any{"email": u.Email, "role": role.String(), "via": "sso"}); err != nil {
				return err
			}
			if err := s.acc.outbox.Append(ctx, tx, now, memberEvent(events.MemberJoined, c.TeamID, member)); err != nil {
				return err
			}
		case current == auth.RoleOwner || len(c.RoleMap) == 0:
			given = current
		case current != role:
			if err := s.acc.st.setRole(ctx, tx, c.TeamID, u.ID, role.String()); err != nil {
				return err
			}
			if err := s.acc.record(ctx, tx, who, c.TeamID, "member.role_changed", "user", u.ID.String(),
				map[string]any{"from": current.String(), "to": role.String(), "via": "sso"}); err != nil {
				return err
			}
		}
		sess, err := s.acc.startSSOSession(ctx, tx, u.ID, c.TeamID)
		if err != nil {
			return err
		}
		out = SSOLogin{Session: sess, TeamID: c.TeamID, Role: given.String()}
		return s.acc.record(ctx, tx, who, c.TeamID, "sso.login", "user", u.ID.String(),
			map[string]any{"email": u.Email, "role": given.String(), "issuer": c.Issuer})
	})
	return out, err
}
