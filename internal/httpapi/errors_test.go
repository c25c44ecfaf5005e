package httpapi

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestWriteErrorClientGone: a request whose client left is not a server
// error: no ERROR line, no 500, whatever wrapped the cancellation.
func TestWriteErrorClientGone(t *testing.T) {
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	cause := fmt.Errorf("list contacts: %w", context.Canceled)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	w := httptest.NewRecorder()
	writeError(w, httptest.NewRequest(http.MethodGet, "/api/v1/contacts", nil).WithContext(ctx), log, cause)
	if w.Code != statusClientClosedRequest || strings.Contains(logs.String(), "level=ERROR") {
		t.Fatalf("client gone: status %d, log %q; want 499 and no ERROR", w.Code, logs.String())
	}

	// The same error while the client still waits (a cancellation the
	// server caused) stays a logged 500.
	w = httptest.NewRecorder()
	writeError(w, httptest.NewRequest(http.MethodGet, "/api/v1/contacts", nil), log, cause)
	if w.Code != http.StatusInternalServerError || !strings.Contains(logs.String(), "level=ERROR") {
		t.Fatalf("client present: status %d, log %q; want a logged 500", w.Code, logs.String())
	}
}
