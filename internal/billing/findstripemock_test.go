package billing_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestFindStripeMock: the billing tests find stripe-mock wherever `make
// test` or a plain `go install` put it, whether or not GOBIN is set, with
// none of those directories on PATH.
func TestFindStripeMock(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go is not on PATH")
	}
	fakeTool := func(dir string) string {
		t.Helper()
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, "stripe-mock")
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct {
		name string
		// setup makes the layout and returns the path expected, "" for an error.
		setup func(t *testing.T, project, gopath, gobin string) string
	}{
		{"GOPATH/bin, GOBIN unset", func(t *testing.T, project, gopath, gobin string) string {
			return fakeTool(filepath.Join(gopath, "bin"))
		}},
		{"GOBIN set", func(t *testing.T, project, gopath, gobin string) string {
			t.Setenv("GOBIN", gobin)
			return fakeTool(gobin)
		}},
		{"project directory first", func(t *testing.T, project, gopath, gobin string) string {
			fakeTool(filepath.Join(gopath, "bin"))
			return fakeTool(project)
		}},
		{"STRIPE_MOCK_BIN first", func(t *testing.T, project, gopath, gobin string) string {
			fakeTool(project)
			p := fakeTool(filepath.Join(t.TempDir(), "elsewhere"))
			t.Setenv("STRIPE_MOCK_BIN", p)
			return p
		}},
		{"nowhere", func(t *testing.T, project, gopath, gobin string) string { return "" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			project, gopath, gobin := filepath.Join(root, "project"), filepath.Join(root, "gopath"), filepath.Join(root, "gobin")
			// A fresh machine: only go itself on PATH, no go env file.
			t.Setenv("PATH", filepath.Dir(goBin))
			t.Setenv("GOENV", "off")
			t.Setenv("GOPATH", gopath)
			t.Setenv("GOBIN", "")
			t.Setenv("STRIPE_MOCK_BIN", "")
			want := tc.setup(t, project, gopath, gobin)
			got, err := findStripeMock(project)
			if want == "" {
				if err == nil || !strings.Contains(err.Error(), "STRIPE_MOCK_BIN") {
					t.Fatalf("found %q, %v; want an error that says how to provide it", got, err)
				}
				return
			}
			if err != nil || got != want {
				t.Fatalf("found %q, %v; want %q", got, err, want)
			}
		})
	}
}
