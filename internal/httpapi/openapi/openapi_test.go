package openapi_test

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/contactbook/contactbook/internal/httpapi/openapi"
)

func load(t *testing.T) *openapi3.T {
	t.Helper()
	doc, err := openapi3.NewLoader().LoadFromData(openapi.Document())
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	return doc
}

// TestDocumentIsValid checks the document against the OpenAPI 3.1 rules
// kin-openapi knows, including every example against its schema.
func TestDocumentIsValid(t *testing.T) {
	t.Parallel()
	doc := load(t)
	if doc.OpenAPI != "3.1.0" {
		t.Errorf("openapi = %q, want 3.1.0", doc.OpenAPI)
	}
	if err := doc.Validate(context.Background(), openapi3.EnableExamplesValidation()); err != nil {
		t.Fatalf("validate: %v", err)
	}
}

// operationsWithoutClientErrors have no 4xx answer: liveness, readiness,
// the root, the docs and the static pages a checkout returns to take no
// input a client can get wrong, and the single sign-on callback answers
// every failed check with a redirect to the login page, which says what
// went wrong.
var operationsWithoutClientErrors = []string{"healthz", "readyz", "getRoot", "getDashboardBare", "getOpenAPIDocument", "getDocs",
	"billingSuccessPage", "billingCancelPage", "ssoCallback"}

var pathParam = regexp.MustCompile(`\{([^}]+)\}`)

// TestEveryOperation checks what the route-coverage and request/response
// validation built on this document rely on: every operation is named,
// answers a success (a redirect is the success of a redirecting route) and
// (unless it takes no input) a client error, and
// declares each parameter of its path.
func TestEveryOperation(t *testing.T) {
	t.Parallel()
	doc := load(t)
	seen := map[string]string{}
	count := 0
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			count++
			where := method + " " + path
			if op.OperationID == "" {
				t.Errorf("%s: no operationId", where)
			} else if prev, dup := seen[op.OperationID]; dup {
				t.Errorf("%s: operationId %s also used by %s", where, op.OperationID, prev)
			}
			seen[op.OperationID] = where
			if len(op.Description) == 0 || len(op.Tags) == 0 {
				t.Errorf("%s: needs a description and a tag", where)
			}
			var hasSuccess, has4xx bool
			for code := range op.Responses.Map() {
				hasSuccess = hasSuccess || strings.HasPrefix(code, "2") || (strings.HasPrefix(code, "3") && code != "304")
				has4xx = has4xx || strings.HasPrefix(code, "4")
			}
			if !hasSuccess {
				t.Errorf("%s: no success (2xx or redirect) response", where)
			}
			if !has4xx && !slices.Contains(operationsWithoutClientErrors, op.OperationID) {
				t.Errorf("%s: no 4xx response", where)
			}
			declared := map[string]bool{}
			for _, p := range append(item.Parameters, op.Parameters...) {
				if p.Value != nil && p.Value.In == openapi3.ParameterInPath {
					declared[p.Value.Name] = true
				}
			}
			for _, m := range pathParam.FindAllStringSubmatch(path, -1) {
				if !declared[m[1]] {
					t.Errorf("%s: path parameter %s is not declared", where, m[1])
				}
				delete(declared, m[1])
			}
			for name := range declared {
				t.Errorf("%s: declares path parameter %s that the path lacks", where, name)
			}
			if op.Security == nil {
				t.Errorf("%s: no security requirement (use [] for public routes)", where)
			}
		}
	}
	if count < 100 {
		t.Errorf("only %d operations documented", count)
	}
}

// TestBothAPIsServeThePublicEndpoints checks that every /api/v1 operation
// has its /api twin, as the router mounts the public routes under both.
func TestBothAPIsServeThePublicEndpoints(t *testing.T) {
	t.Parallel()
	doc := load(t)
	for path, item := range doc.Paths.Map() {
		rest, ok := strings.CutPrefix(path, "/api/v1/")
		if !ok {
			continue
		}
		twin := doc.Paths.Find("/api/" + rest)
		for method, op := range item.Operations() {
			if twin == nil || twin.GetOperation(method) == nil {
				t.Errorf("%s %s has no /api/%s twin", method, path, rest)
				continue
			}
			in := twin.GetOperation(method)
			if in.OperationID != op.OperationID+"Internal" {
				t.Errorf("%s /api/%s: operationId %s, want %sInternal", method, rest, in.OperationID, op.OperationID)
			}
			if fmt.Sprint(op.Security) == fmt.Sprint(in.Security) {
				t.Errorf("%s %s: both copies use the same security", method, path)
			}
		}
	}
}

// TestSchemaExamples checks each schema's examples against the schema
// (Validate checks only the examples of parameters and media types).
func TestSchemaExamples(t *testing.T) {
	t.Parallel()
	doc := load(t)
	for name, ref := range doc.Components.Schemas {
		s := ref.Value
		if len(s.Examples) == 0 && s.Type != nil && s.Type.Is(openapi3.TypeObject) && len(s.Properties) > 0 &&
			name != "ImageUpload" {
			t.Errorf("schema %s has no example", name)
		}
		for i, ex := range s.Examples {
			if err := doc.ValidateSchemaJSON(s, ex, openapi3.EnableJSONSchema2020()); err != nil {
				t.Errorf("schema %s: example %d: %v", name, i, err)
			}
		}
	}
}
