package accounts_test

import (
	"context"
	"io"
	"log/slog"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/contactbook/contactbook/internal/access"
	"github.com/contactbook/contactbook/internal/accountmail"
	"github.com/contactbook/contactbook/internal/accounts"
	"github.com/contactbook/contactbook/internal/apperr"
	"github.com/contactbook/contactbook/internal/auth"
	"github.com/contactbook/contactbook/internal/events"
	"github.com/contactbook/contactbook/internal/postgres/pgtest"
	"github.com/contactbook/contactbook/internal/testclock"
)

// The account rules (sign-up, login, invitations, password resets),
// tested on the service over its own database. How the API answers them
// (statuses, bodies, cookies, the emails as sent) is tested in
// internal/httpapi.

// accountsEnv is the service on a fresh database, with its emails queued
// (no worker sends them: the tests read the links from account_emails).
type accountsEnv struct {
	t      *testing.T
	db     *pgtest.Database
	svc    *accounts.Service
	tokens *auth.Tokens
	clock  *testclock.Clock
	ctx    context.Context
}

func newAccountsEnv(t *testing.T) *accountsEnv {
	t.Helper()
	db := pgtest.Setup(t)
	c := testclock.At(time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC))
	tokens := auth.NewTokens([]byte("test-secret-0123456789abcdef"), 24*time.Hour, "contactbook", c.Now)
	svc := accounts.NewService(accounts.Deps{
		DB: db.DB, Tokens: tokens, Outbox: events.NewOutbox(func() {}),
		Mail: accountmail.NewComposer("https://contacts.example.com", heldJobs{}), SecretKey: make([]byte, 32),
		PasswordCost: 4, Now: c.Now, Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	return &accountsEnv{t: t, db: db, svc: svc, tokens: tokens, clock: c, ctx: context.Background()}
}

// heldJobs takes the email jobs and works none: the emails stay queued
// in account_emails, where the tests read them.
type heldJobs struct{}

func (heldJobs) InsertTx(context.Context, pgx.Tx, river.JobArgs, *river.InsertOpts) (*rivertype.JobInsertResult, error) {
	return &rivertype.JobInsertResult{Job: &rivertype.JobRow{}}, nil
}

const password = "correct horse battery"

// signup creates an account with its own team and returns the result.
func (e *accountsEnv) signup(email string) accounts.SignupResult {
	e.t.Helper()
	res, err := e.svc.Signup(e.ctx, accounts.SignupInput{Email: email, Password: password, Name: "N " + email, TeamName: "Team of " + email})
	if err != nil {
		e.t.Fatalf("signup %s: %v", email, err)
	}
	return res
}

func (e *accountsEnv) actor(u accounts.User) *auth.Actor { return auth.UserActor(u.ID, e.svc) }

func (e *accountsEnv) inTeam(u accounts.User, team uuid.UUID) access.Scope {
	return access.InTeam(e.actor(u), team)
}

// lastLink is the token of the newest account email (the helpers move
// the clock a second before each, so that they are ordered) to address whose
// link goes to path ("" when there is none).
func (e *accountsEnv) lastLink(to, path string) string {
	e.t.Helper()
	var link string
	err := e.db.Pool.QueryRow(e.ctx, `SELECT coalesce((SELECT link FROM account_emails
		WHERE lower(to_email) = lower($1) AND link LIKE '%' || $2 || '?%' ORDER BY created_at DESC LIMIT 1), '')`, to, path).Scan(&link)
	if err != nil {
		e.t.Fatal(err)
	}
	if link == "" {
		return ""
	}
	u, err := url.Parse(link)
	if err != nil {
		e.t.Fatal(err)
	}
	return u.Query().Get("token")
}

// emails counts the account emails queued to an address.
func (e *accountsEnv) emails(to string) int {
	e.t.Helper()
	var n int
	if err := e.db.Pool.QueryRow(e.ctx, `SELECT count(*) FROM account_emails WHERE lower(to_email) = lower($1)`, to).Scan(&n); err != nil {
		e.t.Fatal(err)
	}
	return n
}

// invite invites email to the team as role and returns the emailed token.
func (e *accountsEnv) invite(by accounts.User, team uuid.UUID, email, role string) string {
	e.t.Helper()
	e.clock.Advance(time.Second)
	if _, err := e.svc.Invite(e.ctx, e.inTeam(by, team), accounts.InvitationInput{Email: email, Role: auth.RoleName(role)}); err != nil {
		e.t.Fatalf("invite %s as %s: %v", email, role, err)
	}
	token := e.lastLink(email, "/app/invitations/accept")
	if token == "" {
		e.t.Fatalf("no invitation email to %s", email)
	}
	return token
}

// join adds a new account of email to the team in role, through an
// invitation, and returns it.
func (e *accountsEnv) join(owner accounts.SignupResult, email, role string) accounts.User {
	e.t.Helper()
	token := e.invite(owner.User, owner.Team.ID, email, role)
	if _, err := e.svc.AcceptInvitation(e.ctx, nil, accounts.AcceptInput{Token: token, Name: email, Password: password}); err != nil {
		e.t.Fatalf("accept: %v", err)
	}
	res, err := e.svc.Login(e.ctx, accounts.LoginInput{Email: email, Password: password}, "10.0.0.1")
	if err != nil {
		e.t.Fatal(err)
	}
	claims, err := e.tokens.Parse(res.Session.Token)
	if err != nil {
		e.t.Fatal(err)
	}
	return accounts.User{ID: claims.UserID, Email: email}
}

// live says whether a session token still passes the service's check.
func (e *accountsEnv) live(token string) bool {
	e.t.Helper()
	claims, err := e.tokens.Parse(token)
	if err != nil {
		e.t.Fatalf("parse: %v", err)
	}
	return e.svc.CheckSession(e.ctx, claims) == nil
}

func expectCode(t *testing.T, what string, err error, code apperr.Code) {
	t.Helper()
	if !apperr.Is(err, code) {
		t.Fatalf("%s: got %v, want %s", what, err, code)
	}
}

func TestSignupRules(t *testing.T) {
	t.Parallel()
	e := newAccountsEnv(t)
	for name, in := range map[string]accounts.SignupInput{
		"no email":       {Password: password, Name: "A", TeamName: "T"},
		"bad email":      {Email: "not-an-email", Password: password, Name: "A", TeamName: "T"},
		"short password": {Email: "a@example.com", Password: "short", Name: "A", TeamName: "T"},
		"long password":  {Email: "a@example.com", Password: strings.Repeat("p", 73), Name: "A", TeamName: "T"},
		"no name":        {Email: "a@example.com", Password: password, TeamName: "T"},
		"no team":        {Email: "a@example.com", Password: password, Name: "A"},
	} {
		_, err := e.svc.Signup(e.ctx, in)
		expectCode(t, name, err, apperr.InvalidInput)
	}
	ann := e.signup("  Ann@Example.com ")
	if ann.User.Email != "Ann@Example.com" || ann.Token == "" || ann.Team.ID == uuid.Nil {
		t.Fatalf("signup: %+v", ann)
	}
	// The signer-up owns the new team, and is in no other.
	role, err := e.svc.MemberRole(e.ctx, ann.Team.ID, ann.User.ID)
	if err != nil || role != auth.RoleOwner {
		t.Fatalf("role %v (%v), want owner", role, err)
	}
	teams, err := e.svc.Teams(e.ctx, ann.User.ID)
	if err != nil || len(teams) != 1 {
		t.Fatalf("teams %+v (%v)", teams, err)
	}
	// An address signs up once, whatever its case.
	_, err = e.svc.Signup(e.ctx, accounts.SignupInput{Email: "ANN@example.com", Password: password, Name: "Again", TeamName: "T"})
	expectCode(t, "the same address again", err, apperr.Conflict)
	if !e.live(ann.Token) {
		t.Fatal("the sign-up's session does not pass the check")
	}
}

func TestLoginRules(t *testing.T) {
	t.Parallel()
	e := newAccountsEnv(t)
	ann := e.signup("ann@example.com")
	res, err := e.svc.Login(e.ctx, accounts.LoginInput{Email: "ANN@example.com", Password: password}, "10.0.0.1")
	if err != nil || res.Session.Token == "" || res.MFA != nil {
		t.Fatalf("login: %+v (%v)", res, err)
	}
	if claims, err := e.tokens.Parse(res.Session.Token); err != nil || claims.UserID != ann.User.ID {
		t.Fatalf("the login's token is not ann's: %+v (%v)", claims, err)
	}
	// A wrong password and an unknown address are told apart by nothing.
	_, wrong := e.svc.Login(e.ctx, accounts.LoginInput{Email: "ann@example.com", Password: "wrong password"}, "10.0.0.1")
	_, unknown := e.svc.Login(e.ctx, accounts.LoginInput{Email: "nobody@example.com", Password: password}, "10.0.0.1")
	expectCode(t, "wrong password", wrong, apperr.Unauthorized)
	if unknown == nil || wrong.Error() != unknown.Error() {
		t.Fatalf("wrong password %v, unknown address %v: the answers differ", wrong, unknown)
	}
	_, err = e.svc.Login(e.ctx, accounts.LoginInput{Email: "ann@example.com"}, "10.0.0.1")
	expectCode(t, "no password", err, apperr.InvalidInput)

	// Five failed attempts an address a window (a success starts the
	// count again): then even the right password waits, from any client,
	// and after the window it works again.
	for range 4 {
		_, _ = e.svc.Login(e.ctx, accounts.LoginInput{Email: "ann@example.com", Password: "wrong password"}, "10.0.0.2")
	}
	_, err = e.svc.Login(e.ctx, accounts.LoginInput{Email: "ann@example.com", Password: password}, "10.0.0.3")
	expectCode(t, "the sixth attempt", err, apperr.RateLimited)
	e.clock.Advance(16 * time.Minute)
	if _, err := e.svc.Login(e.ctx, accounts.LoginInput{Email: "ann@example.com", Password: password}, "10.0.0.3"); err != nil {
		t.Fatalf("after the window: %v", err)
	}
}

func TestInvitationRoleRules(t *testing.T) {
	t.Parallel()
	e := newAccountsEnv(t)
	owner := e.signup("owner@example.com")
	team := owner.Team.ID
	admin := e.join(owner, "admin@example.com", "admin")
	member := e.join(owner, "member@example.com", "member")
	outsider := e.signup("outsider@example.com")

	invite := func(by accounts.User, email, role string) error {
		_, err := e.svc.Invite(e.ctx, e.inTeam(by, team), accounts.InvitationInput{Email: email, Role: auth.RoleName(role)})
		return err
	}
	expectCode(t, "a member invites", invite(member, "x@example.com", "viewer"), apperr.Forbidden)
	_, err := e.svc.Invitations(e.ctx, e.inTeam(member, team))
	expectCode(t, "a member lists", err, apperr.Forbidden)
	expectCode(t, "an outsider invites", invite(outsider.User, "x@example.com", "viewer"), apperr.NotFound)
	expectCode(t, "an admin invites an owner", invite(admin, "x@example.com", "owner"), apperr.Forbidden)
	expectCode(t, "not an address", invite(admin, "not-an-email", "viewer"), apperr.InvalidInput)
	expectCode(t, "no such role", invite(admin, "x@example.com", "boss"), apperr.InvalidInput)
	expectCode(t, "a member already", invite(admin, "MEMBER@example.com", "viewer"), apperr.Conflict)
	if err := invite(owner.User, "co-owner@example.com", "owner"); err != nil {
		t.Fatalf("an owner invites an owner: %v", err)
	}
	if n := e.emails("x@example.com"); n != 0 {
		t.Fatalf("%d emails for refused invitations", n)
	}
	pending, err := e.svc.Invitations(e.ctx, e.inTeam(admin, team))
	if err != nil || len(pending) != 1 || pending[0].Role != "owner" || pending[0].InvitedBy == nil || *pending[0].InvitedBy != owner.User.ID {
		t.Fatalf("pending %+v (%v)", pending, err)
	}
}

func TestInvitationLinkRules(t *testing.T) {
	t.Parallel()
	e := newAccountsEnv(t)
	owner := e.signup("owner@example.com")
	team := owner.Team.ID
	anon := func(token string) error {
		_, err := e.svc.AcceptInvitation(e.ctx, nil, accounts.AcceptInput{Token: token, Name: "New", Password: "long enough"})
		return err
	}

	// A re-invite replaces the pending invitation: the first link dies.
	first := e.invite(owner.User, team, "x@example.com", "viewer")
	second := e.invite(owner.User, team, "X@example.com", "member")
	if first == second {
		t.Fatal("the re-invite reused the token")
	}
	_, err := e.svc.LookupInvitation(e.ctx, first)
	expectCode(t, "the replaced link", err, apperr.NotFound)
	view, err := e.svc.LookupInvitation(e.ctx, second)
	if err != nil || view.Role != "member" || view.Team.ID != team || view.AccountExists {
		t.Fatalf("lookup: %+v (%v)", view, err)
	}
	// Only its SHA-256 is stored.
	var stored int
	if err := e.db.Pool.QueryRow(e.ctx, `SELECT count(*) FROM invitations WHERE token_hash = sha256(convert_to($1, 'UTF8'))`, second).Scan(&stored); err != nil || stored != 1 {
		t.Fatalf("stored by hash: %d (%v)", stored, err)
	}

	// Revoking kills the link.
	pending, err := e.svc.Invitations(e.ctx, e.inTeam(owner.User, team))
	if err != nil || len(pending) != 1 {
		t.Fatalf("pending %+v (%v)", pending, err)
	}
	if err := e.svc.RevokeInvitation(e.ctx, e.inTeam(owner.User, team), pending[0].ID); err != nil {
		t.Fatal(err)
	}
	expectCode(t, "revoked twice", e.svc.RevokeInvitation(e.ctx, e.inTeam(owner.User, team), pending[0].ID), apperr.NotFound)
	expectCode(t, "the revoked link", anon(second), apperr.NotFound)

	// Links last seven days to the second.
	late := e.invite(owner.User, team, "late@example.com", "viewer")
	e.clock.Advance(accounts.InvitationLifetime - time.Second)
	if _, err := e.svc.LookupInvitation(e.ctx, late); err != nil {
		t.Fatalf("a second before expiry: %v", err)
	}
	e.clock.Advance(time.Second)
	_, err = e.svc.LookupInvitation(e.ctx, late)
	expectCode(t, "the expired link", err, apperr.NotFound)
	expectCode(t, "accepting the expired link", anon(late), apperr.NotFound)
	if pending, _ := e.svc.Invitations(e.ctx, e.inTeam(owner.User, team)); len(pending) != 0 {
		t.Fatalf("expired invitations listed: %+v", pending)
	}
}

func TestAcceptInvitationRules(t *testing.T) {
	t.Parallel()
	e := newAccountsEnv(t)
	owner := e.signup("owner@example.com")
	team := owner.Team.ID
	carol := e.signup("carol@example.com")
	dave := e.signup("dave@example.com")

	// A new account: a name and a password of 8 to 72 characters.
	token := e.invite(owner.User, team, "Bob@Example.com", "member")
	for name, in := range map[string]accounts.AcceptInput{
		"no name":        {Token: token, Password: "long enough"},
		"short password": {Token: token, Name: "Bob", Password: "short"},
		"long password":  {Token: token, Name: "Bob", Password: strings.Repeat("p", 73)},
		"no token":       {Name: "Bob", Password: "long enough"},
	} {
		_, err := e.svc.AcceptInvitation(e.ctx, nil, in)
		expectCode(t, name, err, apperr.InvalidInput)
	}
	_, err := e.svc.AcceptInvitation(e.ctx, nil, accounts.AcceptInput{Token: token + "x", Name: "Bob", Password: "long enough"})
	expectCode(t, "a wrong token", err, apperr.NotFound)
	acc, err := e.svc.AcceptInvitation(e.ctx, nil, accounts.AcceptInput{Token: token, Name: " Bob Stone ", Password: "bob's password"})
	if err != nil || acc.Role != "member" || acc.Team.ID != team || acc.Token == "" {
		t.Fatalf("accept: %+v (%v)", acc, err)
	}
	bob, err := e.tokens.Parse(acc.Token)
	if err != nil {
		t.Fatal(err)
	}
	me, teams, err := e.svc.Me(e.ctx, auth.UserActor(bob.UserID, e.svc))
	if err != nil || me.Email != "Bob@Example.com" || me.Name != "Bob Stone" || len(teams) != 1 || teams[0].ID != team || teams[0].Role != "member" {
		t.Fatalf("the new account should be in the invited team only: %+v %+v (%v)", me, teams, err)
	}
	// Once.
	_, err = e.svc.AcceptInvitation(e.ctx, nil, accounts.AcceptInput{Token: token, Name: "Bob", Password: "long enough"})
	expectCode(t, "the used link", err, apperr.NotFound)
	var joined int
	if err := e.db.Pool.QueryRow(e.ctx, `SELECT count(*) FROM events WHERE team_id = $1 AND type = 'member.joined'`, team).Scan(&joined); err != nil || joined != 2 {
		t.Fatalf("member.joined events = %d (%v), want the owner's and bob's", joined, err)
	}

	// An existing account: its own login, never a new account, another
	// address's login or an API key.
	token = e.invite(owner.User, team, "carol@example.com", "admin")
	if v, err := e.svc.LookupInvitation(e.ctx, token); err != nil || !v.AccountExists {
		t.Fatalf("account_exists: %+v (%v)", v, err)
	}
	_, err = e.svc.AcceptInvitation(e.ctx, nil, accounts.AcceptInput{Token: token, Name: "C", Password: "long enough"})
	expectCode(t, "creating the existing account", err, apperr.Conflict)
	_, err = e.svc.AcceptInvitation(e.ctx, e.actor(dave.User), accounts.AcceptInput{Token: token})
	expectCode(t, "another address's login", err, apperr.Forbidden)
	_, err = e.svc.AcceptInvitation(e.ctx, auth.KeyActor(uuid.New(), carol.Team.ID, auth.ScopeFull), accounts.AcceptInput{Token: token})
	expectCode(t, "an API key", err, apperr.Unauthorized)
	acc, err = e.svc.AcceptInvitation(e.ctx, e.actor(carol.User), accounts.AcceptInput{Token: token})
	if err != nil || acc.Role != "admin" {
		t.Fatalf("carol accepts: %+v (%v)", acc, err)
	}
	if role, err := e.svc.MemberRole(e.ctx, team, carol.User.ID); err != nil || role != auth.RoleAdmin {
		t.Fatalf("carol's role %v (%v)", role, err)
	}
	if teams, _ := e.svc.Teams(e.ctx, carol.User.ID); len(teams) != 2 {
		t.Fatalf("carol's teams: %+v, want her own and the new one", teams)
	}
}

func TestPasswordResetRules(t *testing.T) {
	t.Parallel()
	e := newAccountsEnv(t)
	ann := e.signup("ann@example.com")
	other, err := e.svc.Login(e.ctx, accounts.LoginInput{Email: "ann@example.com", Password: password}, "10.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	ask := func(email string) {
		t.Helper()
		e.clock.Advance(time.Second)
		if err := e.svc.RequestPasswordReset(e.ctx, accounts.ResetRequest{Email: email}); err != nil {
			t.Fatalf("reset %s: %v", email, err)
		}
	}
	confirm := func(token, pw string) (accounts.LoginResult, error) {
		return e.svc.ConfirmPasswordReset(e.ctx, accounts.ResetConfirm{Token: token, Password: pw})
	}

	// An unknown address gets no email, and the caller learns nothing.
	ask("nobody@example.com")
	if n := e.emails("nobody@example.com"); n != 0 {
		t.Fatalf("%d emails to an address without an account", n)
	}
	expectCode(t, "not an address", e.svc.RequestPasswordReset(e.ctx, accounts.ResetRequest{Email: "not-an-email"}), apperr.InvalidInput)

	// A new link replaces the previous one.
	ask("ANN@example.com")
	first := e.lastLink("ann@example.com", "/app/reset-password")
	ask("ann@example.com")
	second := e.lastLink("ann@example.com", "/app/reset-password")
	if first == "" || first == second {
		t.Fatalf("links %q and %q", first, second)
	}
	_, err = confirm(first, "a new password")
	expectCode(t, "the replaced link", err, apperr.NotFound)
	_, err = confirm(second, "short")
	expectCode(t, "a short password", err, apperr.InvalidInput)

	res, err := confirm(second, "a new password")
	if err != nil || res.Session.Token == "" {
		t.Fatalf("confirm: %+v (%v)", res, err)
	}
	// Every earlier session ends; the answer's lives; the password is the new one.
	if e.live(ann.Token) || e.live(other.Session.Token) {
		t.Fatal("a session from before the reset still works")
	}
	if !e.live(res.Session.Token) {
		t.Fatal("the reset's own session does not work")
	}
	_, err = e.svc.Login(e.ctx, accounts.LoginInput{Email: "ann@example.com", Password: password}, "10.0.0.1")
	expectCode(t, "the old password", err, apperr.Unauthorized)
	if _, err := e.svc.Login(e.ctx, accounts.LoginInput{Email: "ann@example.com", Password: "a new password"}, "10.0.0.1"); err != nil {
		t.Fatalf("the new password: %v", err)
	}
	_, err = confirm(second, "yet another one")
	expectCode(t, "the used link", err, apperr.NotFound)
	var changed int
	if err := e.db.Pool.QueryRow(e.ctx, `SELECT count(*) FROM account_emails WHERE to_email = 'ann@example.com' AND kind = $1`, accountmail.KindPasswordChanged).Scan(&changed); err != nil || changed != 1 {
		t.Fatalf("password changed notices = %d (%v)", changed, err)
	}
}

func TestPasswordResetLimitAndExpiry(t *testing.T) {
	t.Parallel()
	e := newAccountsEnv(t)
	e.signup("ann@example.com")
	ask := func() {
		t.Helper()
		e.clock.Advance(time.Second)
		if err := e.svc.RequestPasswordReset(e.ctx, accounts.ResetRequest{Email: "ann@example.com"}); err != nil {
			t.Fatal(err)
		}
	}
	// Three links an hour an address; the fourth request sends nothing
	// and says nothing.
	for range 4 {
		ask()
	}
	if n := e.emails("ann@example.com"); n != 3 {
		t.Fatalf("emails = %d, want 3", n)
	}
	third := e.lastLink("ann@example.com", "/app/reset-password")

	// A link lasts an hour.
	e.clock.Advance(accounts.ResetLifetime)
	_, err := e.svc.ConfirmPasswordReset(e.ctx, accounts.ResetConfirm{Token: third, Password: "a new password"})
	expectCode(t, "the expired link", err, apperr.NotFound)
	// The limit's window has passed too.
	ask()
	fresh := e.lastLink("ann@example.com", "/app/reset-password")
	if fresh == third || e.emails("ann@example.com") != 4 {
		t.Fatal("no new link after the window")
	}
	e.clock.Advance(accounts.ResetLifetime - time.Second)
	if _, err := e.svc.ConfirmPasswordReset(e.ctx, accounts.ResetConfirm{Token: fresh, Password: "a new password"}); err != nil {
		t.Fatalf("a link within its hour: %v", err)
	}
}
