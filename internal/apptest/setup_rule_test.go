package apptest

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestTestsSetUpOneWay holds that every test of the module reaches the
// database and the service through one of the two entry points:
// pgtest.Setup for a database (a domain package's tests), apptest.Setup
// for the whole service. A test that opens its own connection or builds
// the service itself escapes the per-test database and its cleanup. Only
// the tests of the connection code itself (internal/postgres and pgtest)
// connect directly.
func TestTestsSetUpOneWay(t *testing.T) {
	checked := 0
	err := filepath.WalkDir("../..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case "node_modules", ".git", ".data":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		rel := filepath.ToSlash(strings.TrimPrefix(path, "../../"))
		if dir := filepath.ToSlash(filepath.Dir(rel)); dir == "internal/postgres" || dir == "internal/postgres/pgtest" {
			return nil
		}
		checked++
		for _, v := range setupViolations(t, path) {
			t.Errorf("%s", v)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 100 {
		t.Fatalf("checked %d test files: the walk missed the packages", checked)
	}
}

// TestSetupRuleFindsViolations: the rule fails on each way around the
// entry points.
func TestSetupRuleFindsViolations(t *testing.T) {
	src := `package x_test

import (
	"database/sql"
	"testing"

	pg "github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/contactbook/contactbook/internal/app"
	"github.com/contactbook/contactbook/internal/postgres"
	"github.com/contactbook/contactbook/internal/postgres/pgtest"
)

func TestX(t *testing.T) {
	url := pgtest.Setup(t).URL
	pg.Connect(nil, url)
	pgxpool.New(nil, url)
	postgres.Connect(nil, url, 4)
	sql.Open("pgx", url)
	app.Build(nil, nil, nil, app.Options{})
	pgtest.NewPool(t)
	pgtest.Setup(t, pgtest.On(url))
}
`
	path := filepath.Join(t.TempDir(), "x_test.go")
	if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	got := setupViolations(t, path)
	for _, want := range []string{"pgx.Connect", "pgxpool.New", "postgres.Connect", "sql.Open", "app.Build", "pgtest.NewPool"} {
		found := false
		for _, v := range got {
			found = found || strings.Contains(v, want)
		}
		if !found {
			t.Errorf("no violation reported for %s in %q", want, got)
		}
	}
	if len(got) != 6 {
		t.Errorf("%d violations, want 6: %q", len(got), got)
	}
}

// forbidden are the calls that open a connection or build the service,
// by import path and function name ("*" for every function whose name
// starts with the rest).
var forbidden = map[string][]string{
	"github.com/jackc/pgx/v5":                              {"Connect*"},
	"github.com/jackc/pgx/v5/pgconn":                       {"Connect*"},
	"github.com/jackc/pgx/v5/pgxpool":                      {"New*"},
	"github.com/jackc/pgx/v5/stdlib":                       {"OpenDB", "GetConnector"},
	"database/sql":                                         {"Open*"},
	"github.com/contactbook/contactbook/internal/postgres": {"Connect*"},
	"github.com/contactbook/contactbook/internal/app":      {"Build"},
	// The fixtures' only constructors are their Setup.
	"github.com/contactbook/contactbook/internal/postgres/pgtest": {"New*"},
	"github.com/contactbook/contactbook/internal/apptest":         {"New*"},
}

// setupViolations parses the test file at path and names every call in
// it to a forbidden function.
func setupViolations(t *testing.T, path string) []string {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatalf("parse %s: %v", path, err)
	}
	// The name each import is used under in the file.
	imported := map[string]string{}
	for _, imp := range f.Imports {
		p, err := strconv.Unquote(imp.Path.Value)
		if err != nil {
			continue
		}
		name := p[strings.LastIndex(p, "/")+1:]
		if p == "github.com/jackc/pgx/v5" {
			name = "pgx"
		}
		if imp.Name != nil {
			name = imp.Name.Name
		}
		imported[name] = p
	}
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		id, ok := sel.X.(*ast.Ident)
		if !ok {
			return true
		}
		p, ok := imported[id.Name]
		if !ok {
			return true
		}
		for _, fn := range forbidden[p] {
			if fn == sel.Sel.Name || strings.HasSuffix(fn, "*") && strings.HasPrefix(sel.Sel.Name, strings.TrimSuffix(fn, "*")) {
				short := p[strings.LastIndex(p, "/")+1:]
				if p == "github.com/jackc/pgx/v5" {
					short = "pgx"
				}
				out = append(out, fmt.Sprintf("%s: calls %s.%s: a test gets its database from pgtest.Setup and the service from apptest.Setup",
					fset.Position(call.Pos()), short, sel.Sel.Name))
			}
		}
		return true
	})
	return out
}
