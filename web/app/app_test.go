package app

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// sourceInputs are what the build reads; scripts/sourcehash.mjs lists the same.
var sourceInputs = []string{"index.html", "package.json", "package-lock.json", "tsconfig.json", "vite.config.ts", "scripts", "src"}

// sourceHash mirrors scripts/sourcehash.mjs: for each file, sorted by path,
// the line "<sha256 hex>  <path>\n"; the hash of all lines.
func sourceHash(root string) (string, error) {
	var files []string
	for _, in := range sourceInputs {
		err := filepath.WalkDir(filepath.Join(root, in), func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			rel, err := filepath.Rel(root, p)
			files = append(files, filepath.ToSlash(rel))
			return err
		})
		if err != nil {
			return "", err
		}
	}
	sort.Strings(files)
	all := sha256.New()
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			return "", err
		}
		sum := sha256.Sum256(b)
		fmt.Fprintf(all, "%s  %s\n", hex.EncodeToString(sum[:]), f)
	}
	return hex.EncodeToString(all.Sum(nil)), nil
}

// TestBuildIsCurrent fails when dist/ was built from other sources than the
// ones committed: rebuild with `make web` and commit dist/.
func TestBuildIsCurrent(t *testing.T) {
	recorded, err := os.ReadFile("dist/.source-sha256")
	if err != nil {
		t.Fatalf("dist has no source hash; run `make web`: %v", err)
	}
	want, err := sourceHash(".")
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(string(recorded)); got != want {
		t.Fatalf("dist/ is stale: built from sources hashing %s, the sources now hash %s; run `make web` and commit web/app/dist", got, want)
	}
}

// TestEmbeddedBuild checks what the binary serves: an index.html that loads
// hashed assets, each with its gzip form.
func TestEmbeddedBuild(t *testing.T) {
	files := Files()
	index, err := fs.ReadFile(files, "index.html")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(index), "<script>") || strings.Contains(string(index), "<style") {
		t.Error("index.html has an inline script or style, which the Content-Security-Policy refuses")
	}
	assets, err := fs.ReadDir(files, "assets")
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, a := range assets {
		name := a.Name()
		if strings.HasSuffix(name, ".gz") {
			continue
		}
		seen++
		if _, err := fs.Stat(files, "assets/"+name+".gz"); err != nil {
			t.Errorf("assets/%s has no precompressed form", name)
		}
		if !strings.Contains(name, "-") {
			t.Errorf("assets/%s has no content hash in its name", name)
		}
	}
	if seen == 0 {
		t.Error("no assets embedded")
	}
}
