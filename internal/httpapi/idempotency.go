package httpapi

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"net/http"

	"github.com/contactbook/contactbook/internal/apperr"
	"github.com/contactbook/contactbook/internal/auth"
	"github.com/contactbook/contactbook/internal/idempotency"
)

// maxKeyedBody bounds the body of a POST sent with an Idempotency-Key,
// which is read whole to be compared with the first request's: larger
// than every body a /api/v1 endpoint takes (maxJSONBody).
const maxKeyedBody = 2 * maxJSONBody

// idempotent applies Idempotency-Key to every POST under /api/v1 (after
// the key's authentication and rate limit): the first answer to a key is
// kept, a repeat with the same path and body gets it again with
// Idempotent-Replayed: true and runs nothing, the same key with another
// path or body is 422 IDEMPOTENCY_MISMATCH, and a repeat while the first
// runs is 409 CONFLICT. Server errors and 429 are not kept: the key is
// given up, so the client's retry runs the request.
func (s *Server) idempotent(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key, keyed := r.Header["Idempotency-Key"]
		if r.Method != http.MethodPost || !keyed || s.idempotency == nil {
			next.ServeHTTP(w, r)
			return
		}
		a, err := auth.FromContext(r.Context())
		if err != nil {
			writeError(w, r, s.log, err)
			return
		}
		if len(key) != 1 {
			writeError(w, r, s.log, apperr.Invalidf("Send one Idempotency-Key header, not %d.", len(key)))
			return
		}
		if err := idempotency.CheckKey(key[0]); err != nil {
			writeError(w, r, s.log, err)
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxKeyedBody))
		if err != nil {
			if tooBig := (*http.MaxBytesError)(nil); errors.As(err, &tooBig) {
				writeError(w, r, s.log, jsonError(err))
			} else {
				writeError(w, r, s.log, apperr.Wrap(err, apperr.InvalidInput, "The body could not be read to its end."))
			}
			return
		}
		req := idempotency.Request{APIKeyID: a.KeyID, Key: key[0], Path: r.Method + " " + r.URL.Path, Hash: requestHash(r, body)}
		c, err := s.idempotency.Begin(r.Context(), req)
		if err != nil {
			writeError(w, r, s.log, err)
			return
		}
		switch c.State {
		case idempotency.Replay:
			if c.Answer.ContentType != "" {
				w.Header().Set("Content-Type", c.Answer.ContentType)
			}
			w.Header().Set("Idempotent-Replayed", "true")
			w.WriteHeader(c.Answer.Status)
			_, _ = w.Write(c.Answer.Body)
			return
		case idempotency.Mismatch:
			writeError(w, r, s.log, idempotency.ErrMismatch)
			return
		case idempotency.Running:
			writeError(w, r, s.log, idempotency.ErrRunning)
			return
		}
		rec := &recorder{ResponseWriter: w}
		// The answer is stored (or the key given up) whatever happens to
		// the request, a panic included: a key left without an answer
		// would answer 409 until Abandoned.
		done := context.WithoutCancel(r.Context())
		stored := false
		defer func() {
			if stored {
				return
			}
			if err := s.idempotency.Abandon(done, req, c); err != nil {
				s.log.ErrorContext(done, "idempotency key not released", "err", err)
			}
		}()
		r.Body = io.NopCloser(bytes.NewReader(body))
		next.ServeHTTP(rec, r)
		status := rec.status
		if status == 0 {
			status = http.StatusOK
		}
		if !idempotency.Keep(status) || status == statusClientClosedRequest {
			return
		}
		answer := idempotency.Answer{Status: status, ContentType: rec.Header().Get("Content-Type"), Body: rec.body.Bytes()}
		if err := s.idempotency.Finish(done, req, c, answer); err != nil {
			s.log.ErrorContext(done, "idempotency answer not stored", "err", err)
			return
		}
		stored = true
	})
}

// requestHash is what makes two requests with one key the same: the book
// they name (X-Book-ID) and their body, byte for byte.
func requestHash(r *http.Request, body []byte) string {
	h := sha256.New()
	h.Write([]byte(r.Header.Get("X-Book-ID")))
	h.Write([]byte{0})
	h.Write(body)
	return hex.EncodeToString(h.Sum(nil))
}

// recorder passes an answer on while keeping its status and body.
type recorder struct {
	http.ResponseWriter
	status int
	body   bytes.Buffer
}

func (rec *recorder) WriteHeader(status int) {
	if rec.status == 0 {
		rec.status = status
	}
	rec.ResponseWriter.WriteHeader(status)
}

func (rec *recorder) Write(b []byte) (int, error) {
	if rec.status == 0 {
		rec.status = http.StatusOK
	}
	rec.body.Write(b)
	return rec.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection underneath.
func (rec *recorder) Unwrap() http.ResponseWriter { return rec.ResponseWriter }
