package enum_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// TestClosedSetsParseOneWay reads every package of the service and holds
// the one shape of reading a closed set: a function ParseX of a type
// declared over a basic type (type X string) takes the string alone and
// returns (X, error), and when the package lists the type's values (var
// Xs = []X{...}, a closed set) it reads them with enum.Parse, so its
// refusal is worded like every other's.
func TestClosedSetsParseOneWay(t *testing.T) {
	root := ".."
	parsers := 0
	err := filepath.WalkDir(root, func(dir string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		if strings.HasSuffix(d.Name(), "test") && dir != root {
			return filepath.SkipDir // test support
		}
		names, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			return err
		}
		fset := token.NewFileSet()
		var files []*ast.File
		for _, name := range names {
			if strings.HasSuffix(name, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
			if err != nil {
				return err
			}
			files = append(files, f)
		}
		parsers += checkParsers(t, fset, files)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if parsers < 20 {
		t.Fatalf("found %d parse functions: the walk missed the packages", parsers)
	}
}

// checkParsers checks the Parse functions of one package's files and
// returns how many it checked.
func checkParsers(t *testing.T, fset *token.FileSet, files []*ast.File) int {
	t.Helper()
	basic := map[string]bool{}  // types declared over a basic type
	closed := map[string]bool{} // those of them with a list of values
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.TypeSpec:
				if id, ok := n.Type.(*ast.Ident); ok && n.Assign == 0 && isBasic(id.Name) {
					basic[n.Name.Name] = true
				}
			case *ast.CompositeLit:
				if arr, ok := n.Type.(*ast.ArrayType); ok && arr.Len == nil {
					if id, ok := arr.Elt.(*ast.Ident); ok {
						closed[id.Name] = true
					}
				}
			}
			return true
		})
	}
	checked := 0
	for _, f := range files {
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Recv != nil || !strings.HasPrefix(fn.Name.Name, "Parse") || fn.Type.Results == nil {
				continue
			}
			results := fn.Type.Results.List
			first, ok := results[0].Type.(*ast.Ident)
			if !ok || !basic[first.Name] {
				continue
			}
			checked++
			pos := fset.Position(fn.Pos())
			params := fn.Type.Params.List
			if len(params) != 1 || len(params[0].Names) != 1 || ident(params[0].Type) != "string" ||
				len(results) != 2 || len(results[0].Names) > 1 || ident(results[1].Type) != "error" {
				t.Errorf("%s: %s must be func %s(s string) (%s, error)", pos, fn.Name.Name, fn.Name.Name, first.Name)
				continue
			}
			if closed[first.Name] && !callsEnumParse(fn.Body) {
				t.Errorf("%s: %s reads a closed set of %s without enum.Parse", pos, fn.Name.Name, first.Name)
			}
		}
	}
	return checked
}

func isBasic(name string) bool {
	switch name {
	case "string", "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64":
		return true
	}
	return false
}

func ident(e ast.Expr) string {
	if id, ok := e.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}

func callsEnumParse(body *ast.BlockStmt) bool {
	found := false
	ast.Inspect(body, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok && sel.Sel.Name == "Parse" && ident(sel.X) == "enum" {
			found = true
		}
		return !found
	})
	return found
}
