package apptest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"

	"github.com/contactbook/contactbook/internal/httpapi/openapi"
)

// contract is the OpenAPI document, loaded once per test binary.
var contract = sync.OnceValues(func() (routers.Router, error) {
	doc, err := openapi3.NewLoader().LoadFromData(openapi.Document())
	if err != nil {
		return nil, err
	}
	if err := doc.Validate(context.Background()); err != nil {
		return nil, err
	}
	openapi3filter.RegisterBodyDecoder("text/html", openapi3filter.FileBodyDecoder)
	openapi3filter.RegisterBodyDecoder("text/plain", openapi3filter.FileBodyDecoder)
	openapi3filter.RegisterBodyDecoder("text/vcard", openapi3filter.FileBodyDecoder)
	return legacy.NewRouter(doc)
})

// validating wraps h so that every request a test makes, and every answer,
// is checked against the OpenAPI document: an undocumented route, a
// request the document forbids that the server accepted, or an answer
// whose status or body the document does not describe fails the test.
// Requests are checked only when the server accepted them (2xx): tests
// send invalid requests on purpose, and the document rightly forbids them.
func validating(t testing.TB, h http.Handler) http.Handler {
	router, err := contract()
	if err != nil {
		t.Fatalf("apptest: OpenAPI document: %v", err)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reqBody, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(reqBody))
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		_, _ = w.Write(rec.Body.Bytes())

		if err := checkContract(router, r, reqBody, rec); err != nil {
			t.Errorf("OpenAPI contract: %s %s -> %d: %v", r.Method, r.URL.RequestURI(), rec.Code, err)
		}
	})
}

func checkContract(router routers.Router, r *http.Request, reqBody []byte, rec *httptest.ResponseRecorder) error {
	// The address books (CardDAV) speak WebDAV, not the JSON API the
	// document describes.
	if strings.HasPrefix(r.URL.Path, "/dav/") || r.URL.Path == "/dav" || strings.HasPrefix(r.URL.Path, "/.well-known/carddav") {
		return nil
	}
	// Routes the document describes only as "no such endpoint" answers are
	// the router's own 404/405s; they need no route of their own.
	probe := r.Clone(context.Background())
	probe.Body = io.NopCloser(bytes.NewReader(reqBody))
	if probe.Method == http.MethodHead {
		// HEAD is answered as the GET of the same route (net/http drops
		// the body on the wire); it is checked as that GET.
		probe.Method = http.MethodGet
	}
	route, params, err := router.FindRoute(probe)
	if err != nil {
		if rec.Code == http.StatusNotFound || rec.Code == http.StatusMethodNotAllowed {
			return nil
		}
		return fmt.Errorf("route not in the document (%v)", err)
	}
	in := &openapi3filter.RequestValidationInput{
		Request: probe, PathParams: params, Route: route,
		Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc, MultiError: true},
	}
	if rec.Code >= 200 && rec.Code < 300 {
		if err := openapi3filter.ValidateRequest(context.Background(), in); err != nil {
			return fmt.Errorf("the server accepted a request the document forbids: %w", err)
		}
	}
	out := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: in, Status: rec.Code, Header: rec.Header(),
		Body: io.NopCloser(bytes.NewReader(rec.Body.Bytes())),
		// A HEAD answer may come without its body: only status and headers count.
		Options: &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true, ExcludeResponseBody: r.Method == http.MethodHead},
	}
	if err := openapi3filter.ValidateResponse(context.Background(), out); err != nil {
		return fmt.Errorf("answer does not match the document: %w", err)
	}
	return nil
}

// DocumentedRoutes lists "METHOD /path" of every operation of the OpenAPI
// document, with path parameters written as {name}.
func DocumentedRoutes() ([]string, error) {
	doc, err := openapi3.NewLoader().LoadFromData(openapi.Document())
	if err != nil {
		return nil, err
	}
	var out []string
	for path, item := range doc.Paths.Map() {
		for method := range item.Operations() {
			out = append(out, strings.ToUpper(method)+" "+path)
		}
	}
	sort.Strings(out)
	return out, nil
}
