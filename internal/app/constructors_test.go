package app

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// TestConstructorsTakeDeps holds how the packages are wired, over every
// package of the service: a constructor (New...) takes at most four
// arguments, more go in a Deps struct; no exported function takes a bare
// bool (say what it means in a Deps field or a type); and only the wiring
// knows the queue's client: the packages that enqueue declare the small
// interface they use.
func TestConstructorsTakeDeps(t *testing.T) {
	root := ".."
	checked := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if strings.HasSuffix(d.Name(), "test") && path != root {
				return filepath.SkipDir // test support
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		pkg := filepath.ToSlash(filepath.Dir(path))
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || !fn.Name.IsExported() {
				continue
			}
			checked++
			pos := fset.Position(fn.Pos())
			n := 0
			for _, p := range fn.Type.Params.List {
				k := max(len(p.Names), 1)
				n += k
				if id, ok := p.Type.(*ast.Ident); ok && id.Name == "bool" {
					t.Errorf("%s: %s takes a bare bool", pos, fn.Name.Name)
				}
			}
			if fn.Recv == nil && strings.HasPrefix(fn.Name.Name, "New") && n > 4 {
				t.Errorf("%s: %s takes %d arguments: take a Deps struct", pos, fn.Name.Name, n)
			}
		}
		if pkg == "../jobs" || pkg == "../app" {
			return nil
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok && sel.Sel.Name == "Client" {
				if id, ok := sel.X.(*ast.Ident); ok && id.Name == "jobs" {
					t.Errorf("%s: uses *jobs.Client: declare the small interface the package enqueues with", fset.Position(sel.Pos()))
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 100 {
		t.Fatalf("checked %d functions: the walk missed the packages", checked)
	}
}
