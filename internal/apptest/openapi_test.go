package apptest

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestContractCheckCanFail makes sure the contract check rejects what it
// should, so a passing suite means something.
func TestContractCheckCanFail(t *testing.T) {
	router, err := contract()
	if err != nil {
		t.Fatal(err)
	}
	answer := func(status int, body string) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		rec.Header().Set("Content-Type", "application/json")
		rec.WriteHeader(status)
		rec.WriteString(body)
		return rec
	}
	get := func(path string) *http.Request { return httptest.NewRequest(http.MethodGet, path, nil) }

	if err := checkContract(router, get("/api/healthz-not-documented"), nil, answer(200, `{}`)); err == nil {
		t.Error("an undocumented route passed")
	}
	if err := checkContract(router, get("/api/me"), nil, answer(200, `{"data":{"user":5,"teams":"x"}}`)); err == nil {
		t.Error("a malformed /api/me answer passed")
	}
	if err := checkContract(router, get("/api/me"), nil, answer(418, `{"error":{"code":"X","message":"y"}}`)); err == nil {
		t.Error("an undocumented status passed")
	}
	bad := httptest.NewRequest(http.MethodPost, "/api/auth/login", strings.NewReader(`{"email":5}`))
	bad.Header.Set("Content-Type", "application/json")
	if err := checkContract(router, bad, []byte(`{"email":5}`), answer(200, `{"data":{"token":"t","expires_at":"2026-01-01T00:00:00Z"}}`)); err == nil {
		t.Error("an accepted invalid request passed")
	}
	if err := checkContract(router, get("/nope"), nil, answer(404, `{"error":{"code":"NOT_FOUND","message":"x"}}`)); err != nil {
		t.Errorf("the router's own 404 failed: %v", err)
	}
}
