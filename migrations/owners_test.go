package migrations

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// relation is a table or view the migrations leave in place.
type relation struct {
	view      bool
	commented string // the owner its COMMENT names, "" without one
}

// created returns the tables and views the migrations leave in place.
func created(t *testing.T) map[string]relation {
	t.Helper()
	create := regexp.MustCompile(`(?i)\bCREATE\s+(?:OR\s+REPLACE\s+)?(TABLE|VIEW)\s+(?:IF\s+NOT\s+EXISTS\s+)?([a-z_][a-z0-9_]*)`)
	drop := regexp.MustCompile(`(?i)\bDROP\s+(?:TABLE|VIEW)\s+(?:IF\s+EXISTS\s+)?([a-z_][a-z0-9_]*)`)
	comment := regexp.MustCompile(`(?i)\bCOMMENT\s+ON\s+(?:TABLE|VIEW)\s+([a-z_][a-z0-9_]*)\s+IS\s+'Owned by package ([a-z]+)`)
	names, err := fs.Glob(FS, "*.sql")
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(names)
	out := map[string]relation{}
	for _, name := range names {
		b, err := fs.ReadFile(FS, name)
		if err != nil {
			t.Fatal(err)
		}
		up, _, _ := strings.Cut(string(b), "-- +goose Down")
		for _, m := range drop.FindAllStringSubmatch(up, -1) {
			delete(out, m[1])
		}
		for _, m := range create.FindAllStringSubmatch(up, -1) {
			r := out[m[2]] // CREATE OR REPLACE keeps the view's comment
			r.view = strings.EqualFold(m[1], "VIEW")
			out[m[2]] = r
		}
		for _, m := range comment.FindAllStringSubmatch(up, -1) {
			r := out[m[1]]
			r.commented = m[2]
			out[m[1]] = r
		}
	}
	return out
}

func TestEveryTableHasAnOwner(t *testing.T) {
	tables := created(t)
	for table, r := range tables {
		owner, ok := Owners[table]
		switch {
		case !ok:
			t.Errorf("%s: created by a migration, missing from Owners", table)
		case r.commented != "" && r.commented != owner:
			t.Errorf("%s: its COMMENT says package %s owns it, Owners says %s", table, r.commented, owner)
		case r.view && r.commented == "":
			t.Errorf("view %s: no COMMENT ON VIEW naming its owner (Owned by package %s: what it is for)", table, owner)
		}
	}
	for table := range Owners {
		if _, ok := tables[table]; !ok {
			t.Errorf("%s: in Owners, created by no migration", table)
		}
	}
}

// TestStatementsNameOwnTables reads the SQL of every package that runs in
// the service (each string literal of its .go files, and each
// pgx.Identifier, which names a COPY's table) and fails on a statement
// that names a table another package owns. Read models (the views in
// Owners) are declared for other packages' statements and may be named by
// any. Test code arranges and checks the database directly, so _test.go
// files and the test-support packages (those named *test, such as apptest
// and pgtest, with what lies under them) are not read.
func TestStatementsNameOwnTables(t *testing.T) {
	views := map[string]bool{}
	for table, r := range created(t) {
		views[table] = r.view
	}
	for _, dir := range []string{"internal", "cmd"} {
		root := filepath.Join("..", dir)
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if strings.HasSuffix(d.Name(), "test") {
					return filepath.SkipDir
				}
				return nil
			}
			if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return nil
			}
			rel, err := filepath.Rel(root, filepath.Dir(path))
			if err != nil {
				return err
			}
			pkg := filepath.ToSlash(rel)
			for _, use := range tablesNamed(t, path) {
				owner := ownerOf(use.table)
				if owner == "" || owner == pkg || views[use.table] {
					continue
				}
				t.Errorf("%s: package %s names table %s, which package %s owns: call the owner, or read a view or SQL fragment it declares",
					use.pos, pkg, use.table, owner)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// ownerOf returns the package owning the table, "" for a name that is
// none of the schema's tables. River's own tables (river_job and the
// rest, created by its migrations) belong to internal/jobs.
func ownerOf(table string) string {
	if strings.HasPrefix(table, "river_") {
		return "jobs"
	}
	return Owners[table]
}

type tableUse struct {
	pos   token.Position
	table string
}

// tablesNamed returns the tables the file's SQL names.
func tablesNamed(t *testing.T, path string) []tableUse {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	var uses []tableUse
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.CompositeLit:
			// pgx.Identifier{"schema", "table"}: the last part is the table.
			if sel, ok := n.Type.(*ast.SelectorExpr); ok && sel.Sel.Name == "Identifier" && len(n.Elts) > 0 {
				if lit, ok := n.Elts[len(n.Elts)-1].(*ast.BasicLit); ok && lit.Kind == token.STRING {
					if s, err := strconv.Unquote(lit.Value); err == nil {
						uses = append(uses, tableUse{fset.Position(lit.Pos()), s})
					}
				}
			}
		case *ast.BasicLit:
			if n.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(n.Value)
			if err != nil {
				t.Fatalf("%s: %v", fset.Position(n.Pos()), err)
			}
			for _, table := range sqlTables(s) {
				uses = append(uses, tableUse{fset.Position(n.Pos()), table})
			}
		}
		return true
	})
	return uses
}

var (
	sqlComment = regexp.MustCompile(`--[^\n]*`)
	sqlQuoted  = regexp.MustCompile(`'(?:[^']|'')*'`)
	sqlToken   = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_.]*|[(),]`)
)

// sqlTables returns the names that follow, in the SQL text s, a keyword
// naming a table (FROM and the rest of its comma-separated list, JOIN,
// UPDATE, INTO, USING, TABLE, ONLY, TRUNCATE, COPY), without a schema.
// Keywords are recognised in upper case only, as the project writes them,
// so prose mentioning "from" is not read as SQL.
func sqlTables(s string) []string {
	s = sqlQuoted.ReplaceAllString(sqlComment.ReplaceAllString(s, ""), "''")
	tokens := sqlToken.FindAllString(s, -1)
	var tables []string
	name := func(i int) {
		if i < len(tokens) && tokens[i] != "(" && tokens[i] != ")" && tokens[i] != "," {
			tables = append(tables, unqualified(tokens[i]))
		}
	}
	// inList[d]: a FROM list is being read at parenthesis depth d.
	inList := []bool{false}
	for i, tok := range tokens {
		d := len(inList) - 1
		switch tok {
		case "(":
			inList = append(inList, false)
		case ")":
			if d > 0 {
				inList = inList[:d]
			}
		case ",":
			if inList[d] {
				name(i + 1)
			}
		case "FROM":
			inList[d] = true
			name(i + 1)
		case "JOIN", "UPDATE", "INTO", "USING", "TABLE", "ONLY", "TRUNCATE", "COPY":
			name(i + 1)
		case "WHERE", "GROUP", "HAVING", "ORDER", "LIMIT", "OFFSET", "RETURNING", "UNION", "EXCEPT", "INTERSECT", "WINDOW", "FOR", "ON", "SET", "VALUES", "SELECT":
			inList[d] = false
		}
	}
	return tables
}

func unqualified(name string) string {
	return name[strings.LastIndexByte(name, '.')+1:]
}

func TestSQLTables(t *testing.T) {
	for sql, want := range map[string][]string{
		`SELECT a FROM contacts c WHERE c.id = $1`:                             {"contacts"},
		`SELECT 1 FROM a x, b y, unnest($1::uuid[]) u WHERE x.id = y.id`:       {"a", "b", "unnest"},
		`UPDATE contacts ct SET x = 1 FROM (SELECT id FROM labels) l, books b`: {"contacts", "labels", "books"},
		`INSERT INTO public.events (id) SELECT id FROM q JOIN r USING (id)`:    {"events", "q", "r"},
		`SELECT f(a, b) FROM t -- FROM comments`:                               {"t"},
		`SELECT 'FROM quoted', x FROM t`:                                       {"t"},
		`DELETE FROM t WHERE id IN (SELECT id FROM u, v)`:                      {"t", "u", "v"},
		`SELECT a, b FROM t ORDER BY a, b`:                                     {"t"},
		`Move it from the list, then update contacts.`:                         nil,
	} {
		if got := sqlTables(sql); !slices.Equal(got, want) {
			t.Errorf("sqlTables(%q) = %q, want %q", sql, got, want)
		}
	}
}
