package httpapi

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/contactbook/contactbook/internal/access"
	"github.com/contactbook/contactbook/internal/apperr"
	dashboard "github.com/contactbook/contactbook/web/app"
)

// dashboardPolicy lets the app load only its own scripts, styles and API:
// no inline script or style, no other origin, no framing; it may frame
// only its own email preview page.
const dashboardPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; connect-src 'self'; manifest-src 'self'; frame-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// previewPolicy is the template editor's email preview page's (preview.html):
// an email's HTML is inline styles and outside images, shown in a
// sandboxed frame inside this page (no script runs there); the page's own
// script is the only one, and only the dashboard may frame it.
const previewPolicy = "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src * data:; font-src *; frame-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'self'"

// asset is one file of the built app, kept in memory with its gzip form.
type asset struct {
	body, gz    []byte
	contentType string
	etag        string
	immutable   bool
}

// dashboardFiles answers /app/*: hashed assets are cached for a year;
// index.html is revalidated on every load (its ETag is its hash), and any
// path without a file extension is an app route answered with index.html,
// so a reload or a shared link works.
func (s *Server) dashboardFiles() http.HandlerFunc {
	assets, err := loadAssets(dashboard.Files())
	if err != nil {
		// The files are embedded at compile time; failing to read them is a broken build.
		panic(fmt.Sprintf("httpapi: dashboard assets: %v", err))
	}
	index := assets["index.html"]
	return s.h(func(w http.ResponseWriter, r *http.Request, _ access.Scope) error {
		name := strings.TrimPrefix(path.Clean("/"+chi.URLParam(r, "*")), "/")
		a, ok := assets[name]
		if !ok {
			if path.Ext(name) != "" {
				return apperr.NotFoundf("The dashboard has no file %s.", name)
			}
			a = index
		}
		policy := dashboardPolicy
		if name == "preview.html" {
			policy = previewPolicy
		}
		serveAsset(w, r, a, policy)
		return nil
	})
}

func loadAssets(files fs.FS) (map[string]*asset, error) {
	out := map[string]*asset{}
	err := fs.WalkDir(files, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasSuffix(p, ".gz") {
			return err
		}
		body, err := fs.ReadFile(files, p)
		if err != nil {
			return err
		}
		gz, err := fs.ReadFile(files, p+".gz")
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		sum := sha256.Sum256(body)
		ct := mime.TypeByExtension(path.Ext(p))
		if ct == "" {
			ct = "application/octet-stream"
		}
		out[p] = &asset{body: body, gz: gz, contentType: ct, etag: fmt.Sprintf(`"%x"`, sum[:12]), immutable: strings.HasPrefix(p, "assets/")}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if out["index.html"] == nil {
		return nil, fmt.Errorf("no index.html")
	}
	return out, nil
}

func serveAsset(w http.ResponseWriter, r *http.Request, a *asset, policy string) {
	h := w.Header()
	h.Set("Content-Type", a.contentType)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", policy)
	if policy == previewPolicy {
		// The app frames the preview (securityHeaders forbids all framing).
		h.Set("X-Frame-Options", "SAMEORIGIN")
	}
	h.Set("Referrer-Policy", "same-origin")
	h.Set("Vary", "Accept-Encoding")
	if a.immutable {
		h.Set("Cache-Control", "public, max-age=31536000, immutable")
	} else {
		h.Set("Cache-Control", "no-cache")
	}
	body, etag := a.body, a.etag
	if a.gz != nil && acceptsGzip(r.Header.Get("Accept-Encoding")) {
		body, etag = a.gz, strings.TrimSuffix(a.etag, `"`)+`-gz"`
		h.Set("Content-Encoding", "gzip")
	}
	h.Set("ETag", etag)
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(body))
}

// acceptsGzip reads an Accept-Encoding header: gzip (or *) listed without q=0.
func acceptsGzip(header string) bool {
	for _, part := range strings.Split(header, ",") {
		coding, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		coding = strings.ToLower(strings.TrimSpace(coding))
		if coding != "gzip" && coding != "*" {
			continue
		}
		q := 1.0
		if k, v, ok := strings.Cut(strings.TrimSpace(params), "="); ok && strings.TrimSpace(k) == "q" {
			if f, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil {
				q = f
			}
		}
		return q > 0
	}
	return false
}
