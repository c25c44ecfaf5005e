package apptest

import (
	"io"
	"net/http"
	"strings"
)

// DAVClient speaks WebDAV to the address books (/dav/), signed in with
// HTTP Basic: an account's email and one of its app passwords.
type DAVClient struct {
	env             *Env
	Email, Password string
	// PrincipalPath is the user's principal, /dav/<user id>/.
	PrincipalPath string
}

// AppPassword creates an app password for u and returns it.
func (u *User) AppPassword(name string) string {
	u.env.T.Helper()
	return u.Post("/api/auth/app-passwords", map[string]string{"name": name}).Expect(http.StatusCreated).String("data.password")
}

// DAV returns a CardDAV client of u with a new app password.
func (u *User) DAV() *DAVClient {
	u.env.T.Helper()
	return &DAVClient{env: u.env, Email: u.Email, Password: u.AppPassword("test device"), PrincipalPath: "/dav/" + u.ID + "/"}
}

// BookPath is the address book of a book.
func (d *DAVClient) BookPath(bookID string) string { return d.PrincipalPath + "books/" + bookID + "/" }

// Do sends a request; headers are name, value pairs. A body that starts
// with "<" is sent as XML, one that starts with "BEGIN:VCARD" as a vCard.
func (d *DAVClient) Do(method, path, body string, headers ...string) *Response {
	t := d.env.T
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, d.env.URL+path, rd)
	if err != nil {
		t.Fatalf("apptest: %v", err)
	}
	switch {
	case strings.HasPrefix(body, "<"):
		req.Header.Set("Content-Type", "application/xml; charset=utf-8")
	case strings.HasPrefix(body, "BEGIN:VCARD"):
		req.Header.Set("Content-Type", "text/vcard; charset=utf-8")
	}
	if d.Email != "" {
		req.SetBasicAuth(d.Email, d.Password)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := client.Do(req)
	if err != nil {
		t.Fatalf("apptest: %s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	out, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatalf("apptest: read body: %v", err)
	}
	d.env.reqCount.Add(1)
	return &Response{T: t, Status: res.StatusCode, Header: res.Header, Body: out}
}
