// Package app holds the dashboard: a single-page app (TypeScript, Preact,
// built with Vite from the sources beside this file) whose built files are
// committed under dist/ and embedded here, so building the binary needs no
// Node. Every text asset sits next to its gzip form (name + ".gz"), made at
// build time; the build also records the hash of its sources in
// dist/.source-sha256, which this package's test compares with the sources
// on disk to catch a dist that was not rebuilt.
package app

import (
	"embed"
	"io/fs"
)

//go:embed dist
var dist embed.FS

// Files returns the built app: index.html at the root, hashed assets under
// assets/.
func Files() fs.FS {
	sub, err := fs.Sub(dist, "dist")
	if err != nil {
		// fs.Sub fails only on an invalid path, and "dist" is a constant.
		panic(err)
	}
	return sub
}
