package apptest

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/contactbook/contactbook/internal/auth"
)

// User is a signed-up user with their first team.
type User struct {
	*Client
	ID     string
	Email  string
	TeamID string
}

// Signup creates a user (owner of a new team) and returns a client that
// carries their token.
func (e *Env) Signup(name string) *User {
	e.T.Helper()
	email := strings.ToLower(e.Unique(name)) + "@example.com"
	r := e.Anonymous().Post("/api/auth/signup", map[string]string{
		"email": email, "password": "correct horse battery", "name": name, "team_name": name + "'s team",
	}).Expect(http.StatusCreated)
	return &User{Client: e.Client(r.String("data.token")), ID: r.String("data.user.id"), Email: email, TeamID: r.String("data.team.id")}
}

// Join signs up a user and adds them to team with role (by an owner).
func (e *Env) Join(owner *User, name, role string) *User {
	e.T.Helper()
	u := e.Signup(name)
	e.AddMember(owner, u, role)
	u.TeamID = owner.TeamID
	return u
}

// AddMember makes u a member of admin's team through the invitation flow:
// admin invites u's address, u accepts. The emailed token is not at hand,
// so the invitation's stored hash is set to that of a token made here.
func (e *Env) AddMember(admin, u *User, role string) {
	e.T.Helper()
	id := admin.Post(fmt.Sprintf("/api/teams/%s/invitations", admin.TeamID), map[string]string{"email": u.Email, "role": role}).
		Expect(http.StatusCreated).String("data.id")
	token, hash, err := auth.NewLinkToken()
	if err != nil {
		e.T.Fatal(err)
	}
	if _, err := e.App.Pool.Exec(context.Background(), `UPDATE invitations SET token_hash = $2 WHERE id = $1`, id, hash); err != nil {
		e.T.Fatalf("apptest: set invitation token: %v", err)
	}
	u.Post("/api/invitations/accept", map[string]string{"token": token}).Expect(http.StatusOK)
}

// CreateBook creates a book in the user's team and returns its id.
func (u *User) CreateBook(name string) string {
	u.env.T.Helper()
	return u.Post("/api/books", map[string]any{"team_id": u.TeamID, "name": name}).
		Expect(http.StatusCreated).String("data.id")
}

// NewKey creates an API key of the user's team and returns a client that
// carries it.
func (u *User) NewKey() *Client {
	u.env.T.Helper()
	key := u.Post(fmt.Sprintf("/api/teams/%s/api-keys", u.TeamID), map[string]string{"name": "test key"}).
		Expect(http.StatusCreated).String("data.key")
	return u.env.Client(key)
}

// SetAddon sets the user's team's Campaigns add-on state directly.
func (u *User) SetAddon(state string) {
	u.env.T.Helper()
	if _, err := u.env.App.Pool.Exec(context.Background(), `UPDATE teams SET campaign_addon = $2 WHERE id = $1`, u.TeamID, state); err != nil {
		u.env.T.Fatalf("apptest: set add-on: %v", err)
	}
}
