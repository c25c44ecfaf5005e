// Package openapi holds the service's API contract as an OpenAPI 3.1
// document (openapi.json, embedded) and the self-contained HTML page that
// renders it (docs.html: inline CSS and JavaScript, no external assets).
// The HTTP layer serves both, at GET /api/openapi.json and GET /docs; the
// test suite validates the document and, through it, the handlers'
// requests and responses. The document is the one to edit by hand: keep it
// pretty-printed so its diffs stay readable.
package openapi

import _ "embed"

//go:embed openapi.json
var document []byte

//go:embed docs.html
var docsPage []byte

// Document returns the OpenAPI document (JSON). The slice is shared: do
// not modify it.
func Document() []byte { return document }

// DocsPage returns the HTML reference page, which fetches the document
// from /api/openapi.json and renders it in the browser. The slice is
// shared: do not modify it.
func DocsPage() []byte { return docsPage }
