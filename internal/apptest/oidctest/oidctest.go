// Package oidctest runs a real OpenID Provider for tests: zitadel/oidc's
// op package over its example storage, signing real ID tokens with real
// RSA keys and publishing them at its JWKS endpoint. Its sign-in page
// signs in whoever the test chose (SignInAs) at once, and a Fault makes
// the next tokens wrong in one way (audience, issuer, nonce, expiry, key).
package oidctest

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/zitadel/oidc/v3/example/server/storage"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
	"golang.org/x/text/language"
)

// Fault is what is wrong with the tokens the provider issues.
type Fault int

// The faults.
const (
	None          Fault = iota
	WrongAudience       // aud names another client
	WrongIssuer         // iss is another issuer than discovery's
	WrongNonce          // nonce is not the one the client sent
	Expired             // exp has passed
	WrongKey            // signed by a key the JWKS does not hold
)

// User is who signs in next.
type User struct {
	Email    string
	Verified bool
	Name     string
	Groups   []string
}

// Provider is a running OpenID Provider.
type Provider struct {
	// Issuer is the provider's issuer URL (http://127.0.0.1:port).
	Issuer       string
	ClientID     string
	ClientSecret string

	srv   *httptest.Server
	op    *op.Provider
	mu    sync.Mutex
	user  User
	fault Fault
}

// New starts a provider with one web client (clientID, secret) that may
// return to redirectURI, and stops it when the test ends.
func New(t testing.TB, clientID, secret, redirectURI string) *Provider {
	t.Helper()
	p := &Provider{ClientID: clientID, ClientSecret: secret, user: User{Email: "ann@acme.example", Verified: true, Name: "Ann Acme"}}
	mux := http.NewServeMux()
	p.srv = httptest.NewServer(mux)
	t.Cleanup(p.srv.Close)
	p.Issuer = p.srv.URL

	other, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	st := &store{
		Storage: storage.NewStorageWithClients(users{p}, map[string]*storage.Client{
			clientID: storage.WebClient(clientID, secret, redirectURI),
		}),
		p:     p,
		other: otherKey{key: other},
	}
	cfg := &op.Config{CodeMethodS256: true, AuthMethodPost: true, SupportedUILocales: []language.Tag{language.English}}
	if _, err := rand.Read(cfg.CryptoKey[:]); err != nil {
		t.Fatal(err)
	}
	issuer := func(bool) (op.IssuerFromRequest, error) {
		return func(r *http.Request) string {
			if p.currentFault() == WrongIssuer && strings.HasSuffix(r.URL.Path, "/oauth/token") {
				return p.Issuer + "/elsewhere"
			}
			return p.Issuer
		}, nil
	}
	// Refused requests are what the tests are about: no log lines.
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	p.op, err = op.NewProvider(cfg, st, issuer, op.WithAllowInsecure(), op.WithLogger(quiet))
	if err != nil {
		t.Fatal(err)
	}
	// The sign-in page: whoever the test chose is signed in at once.
	mux.HandleFunc("/login/username", func(w http.ResponseWriter, r *http.Request) {
		id := r.FormValue("authRequestID")
		u := p.current()
		if err := st.CheckUsernamePassword(u.Email, "password", id); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		http.Redirect(w, r, op.AuthCallbackURL(p.op)(op.ContextWithIssuer(r.Context(), p.Issuer), id), http.StatusFound)
	})
	mux.Handle("/", p.op)
	return p
}

// SignInAs makes u the next person to sign in.
func (p *Provider) SignInAs(u User) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.user = u
}

// SetFault makes the next tokens wrong in f's way (None: right).
func (p *Provider) SetFault(f Fault) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.fault = f
}

func (p *Provider) current() User {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.user
}

func (p *Provider) currentFault() Fault {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.fault
}

// users is the example storage's user store: the one user the test chose.
type users struct{ p *Provider }

func (u users) user() *storage.User {
	c := u.p.current()
	first, last, _ := strings.Cut(c.Name, " ")
	return &storage.User{
		ID: c.Email, Username: c.Email, Password: "password", FirstName: first, LastName: last,
		Email: c.Email, EmailVerified: c.Verified, PreferredLanguage: language.English,
	}
}

func (u users) GetUserByID(string) *storage.User       { return u.user() }
func (u users) GetUserByUsername(string) *storage.User { return u.user() }
func (u users) ExampleClientID() string                { return u.p.ClientID }

// store is the example storage with the test's faults and groups.
type store struct {
	*storage.Storage
	p     *Provider
	other otherKey
}

func (s *store) GetClientByClientID(ctx context.Context, id string) (op.Client, error) {
	c, err := s.Storage.GetClientByClientID(ctx, id)
	if err != nil {
		return nil, err
	}
	return client{Client: c, p: s.p}, nil
}

func (s *store) AuthRequestByCode(ctx context.Context, code string) (op.AuthRequest, error) {
	ar, err := s.Storage.AuthRequestByCode(ctx, code)
	if err != nil {
		return nil, err
	}
	return authRequest{AuthRequest: ar, p: s.p}, nil
}

func (s *store) SigningKey(ctx context.Context) (op.SigningKey, error) {
	if s.p.currentFault() == WrongKey {
		return s.other, nil
	}
	return s.Storage.SigningKey(ctx)
}

// SetUserinfoFromRequest adds the groups claim to the ID token.
func (s *store) SetUserinfoFromRequest(ctx context.Context, ui *oidc.UserInfo, req op.IDTokenRequest, scopes []string) error {
	if err := s.Storage.SetUserinfoFromRequest(ctx, ui, req, scopes); err != nil {
		return err
	}
	if g := s.p.current().Groups; g != nil {
		ui.AppendClaims("groups", g)
	}
	return nil
}

// client puts the profile and email claims into the ID token, as most
// providers do, and makes it expired for Expired.
type client struct {
	op.Client
	p *Provider
}

func (c client) IDTokenUserinfoClaimsAssertion() bool { return true }

func (c client) IDTokenLifetime() time.Duration {
	if c.p.currentFault() == Expired {
		return -time.Hour
	}
	return time.Hour
}

type authRequest struct {
	op.AuthRequest
	p *Provider
}

func (a authRequest) GetAudience() []string {
	if a.p.currentFault() == WrongAudience {
		return []string{"another-client"}
	}
	return a.AuthRequest.GetAudience()
}

func (a authRequest) GetNonce() string {
	if a.p.currentFault() == WrongNonce {
		return "not-the-nonce-" + a.AuthRequest.GetNonce()
	}
	return a.AuthRequest.GetNonce()
}

// otherKey signs with a key the provider does not publish.
type otherKey struct{ key *rsa.PrivateKey }

func (k otherKey) SignatureAlgorithm() jose.SignatureAlgorithm { return jose.RS256 }
func (k otherKey) Key() any                                    { return k.key }
func (k otherKey) ID() string                                  { return "not-published" }
