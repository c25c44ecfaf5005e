package apptest

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
)

// Client calls the API with one set of credentials.
type Client struct {
	env    *Env
	Token  string // JWT or API key
	BookID string // sent as X-Book-ID when not empty
}

// Client returns a client with the given bearer credential.
func (e *Env) Client(token string) *Client { return &Client{env: e, Token: token} }

// Anonymous returns a client without credentials.
func (e *Env) Anonymous() *Client { return &Client{env: e} }

// InBook returns a copy of c that sends X-Book-ID: bookID.
func (c *Client) InBook(bookID string) *Client {
	cp := *c
	cp.BookID = bookID
	return &cp
}

// Raw is a body sent as is, with the given content type.
type Raw struct {
	ContentType string
	Body        []byte
}

// Do sends a request. body may be nil, Raw, or a value sent as JSON.
func (c *Client) Do(method, path string, body any, headers ...string) *Response {
	t := c.env.T
	t.Helper()
	var rd io.Reader
	contentType := ""
	switch b := body.(type) {
	case nil:
	case Raw:
		rd, contentType = bytes.NewReader(b.Body), b.ContentType
	default:
		buf, err := json.Marshal(b)
		if err != nil {
			t.Fatalf("apptest: marshal body: %v", err)
		}
		rd, contentType = bytes.NewReader(buf), "application/json"
	}
	req, err := http.NewRequest(method, c.env.URL+path, rd)
	if err != nil {
		t.Fatalf("apptest: %v", err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	if c.BookID != "" {
		req.Header.Set("X-Book-ID", c.BookID)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("apptest: %s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	out, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatalf("apptest: read body: %v", err)
	}
	c.env.reqCount.Add(1)
	return &Response{T: t, Status: res.StatusCode, Header: res.Header, Body: out}
}

// Get, Post, Patch, Put and Delete are Do with a method.
func (c *Client) Get(path string, headers ...string) *Response {
	c.env.T.Helper()
	return c.Do(http.MethodGet, path, nil, headers...)
}
func (c *Client) Post(path string, body any, headers ...string) *Response {
	c.env.T.Helper()
	return c.Do(http.MethodPost, path, body, headers...)
}
func (c *Client) Patch(path string, body any, headers ...string) *Response {
	c.env.T.Helper()
	return c.Do(http.MethodPatch, path, body, headers...)
}
func (c *Client) Put(path string, body any, headers ...string) *Response {
	c.env.T.Helper()
	return c.Do(http.MethodPut, path, body, headers...)
}
func (c *Client) Delete(path string, headers ...string) *Response {
	c.env.T.Helper()
	return c.Do(http.MethodDelete, path, nil, headers...)
}
