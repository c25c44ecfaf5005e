package httpapi_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/google/uuid"

	"github.com/contactbook/contactbook/internal/apptest"
	"github.com/contactbook/contactbook/internal/idempotency"
)

func TestIdempotencyKeyReplaysTheFirstAnswer(t *testing.T) {
	t.Parallel()
	tm := apptest.Setup(t, apptest.Options{OwnerOnly: true})
	body := map[string]any{"first_name": "Ada", "emails": []map[string]any{{"address": "ada@example.com"}}}
	first := tm.Key.Post("/api/v1/contacts", body, "Idempotency-Key", "create-ada").Expect(http.StatusCreated)
	if first.Header.Get("Idempotent-Replayed") != "" {
		t.Fatalf("the first answer says it was replayed")
	}
	again := tm.Key.Post("/api/v1/contacts", body, "Idempotency-Key", "create-ada").Expect(http.StatusCreated)
	if again.Header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("Idempotent-Replayed = %q, want true", again.Header.Get("Idempotent-Replayed"))
	}
	if string(again.Body) != string(first.Body) || again.Header.Get("Content-Type") != first.Header.Get("Content-Type") {
		t.Fatalf("replayed %s (%s), first %s (%s)", again.Body, again.Header.Get("Content-Type"), first.Body, first.Header.Get("Content-Type"))
	}
	if n := tm.Env.QueryInt(`SELECT count(*) FROM contacts WHERE first_name = 'Ada'`); n != 1 {
		t.Fatalf("%d contacts named Ada; the replay created more", n)
	}
	// Another body or another path with the key: 422, nothing created.
	tm.Key.Post("/api/v1/contacts", map[string]any{"first_name": "Bob"}, "Idempotency-Key", "create-ada").
		ExpectError(http.StatusUnprocessableEntity, "IDEMPOTENCY_MISMATCH")
	tm.Key.Post("/api/v1/segments", map[string]any{"name": "x", "rule": map[string]any{"all": []any{}}}, "Idempotency-Key", "create-ada").
		ExpectError(http.StatusUnprocessableEntity, "IDEMPOTENCY_MISMATCH")
	if n := tm.Env.QueryInt(`SELECT count(*) FROM contacts WHERE first_name = 'Bob'`) + tm.Env.QueryInt(`SELECT count(*) FROM segments`); n != 0 {
		t.Fatalf("a mismatched request ran (%d rows)", n)
	}
	// Without the header, or with another key, the request runs again.
	tm.Key.Post("/api/v1/contacts", body).Expect(http.StatusCreated)
	tm.Key.Post("/api/v1/contacts", body, "Idempotency-Key", "create-ada-2").Expect(http.StatusCreated)
	if n := tm.Env.QueryInt(`SELECT count(*) FROM contacts WHERE first_name = 'Ada'`); n != 3 {
		t.Fatalf("%d contacts named Ada, want 3", n)
	}
}

func TestIdempotencyKeepsErrorsButNotServerErrors(t *testing.T) {
	t.Parallel()
	tm := apptest.Setup(t, apptest.Options{OwnerOnly: true})
	// A 400 is kept: the same key and body get it again, replayed.
	bad := tm.Key.Post("/api/v1/contacts", map[string]any{"first_name": 7}, "Idempotency-Key", "bad").Expect(http.StatusBadRequest)
	rep := tm.Key.Post("/api/v1/contacts", map[string]any{"first_name": 7}, "Idempotency-Key", "bad").Expect(http.StatusBadRequest)
	if rep.Header.Get("Idempotent-Replayed") != "true" || string(rep.Body) != string(bad.Body) {
		t.Fatalf("the 400 was not replayed: %s", rep.Body)
	}
	// A key that is not printable ASCII is refused before anything runs.
	tm.Key.Post("/api/v1/contacts", map[string]any{"first_name": "Eve"}, "Idempotency-Key", "é").
		ExpectError(http.StatusBadRequest, "INVALID_INPUT")
	if n := tm.Env.QueryInt(`SELECT count(*) FROM contacts`); n != 0 {
		t.Fatalf("%d contacts", n)
	}
	// GET ignores the header.
	tm.Key.Get("/api/v1/contacts", "Idempotency-Key", "bad").Expect(http.StatusOK)
	// The dashboard's API does not keep answers.
	tm.O.Post("/api/contacts", map[string]any{"first_name": "Dee"}, "Idempotency-Key", "dash").Expect(http.StatusCreated)
	if n := tm.Env.QueryInt(`SELECT count(*) FROM idempotency_keys WHERE key = 'dash'`); n != 0 {
		t.Fatalf("a dashboard request's answer was kept")
	}
}

func TestIdempotencyAnswersConflictWhileTheFirstRuns(t *testing.T) {
	t.Parallel()
	tm := apptest.Setup(t, apptest.Options{OwnerOnly: true})
	ctx := context.Background()
	var keyID uuid.UUID
	if err := tm.Env.App.Pool.QueryRow(ctx, `SELECT id FROM api_keys ORDER BY created_at DESC LIMIT 1`).Scan(&keyID); err != nil {
		t.Fatal(err)
	}
	body := map[string]any{"first_name": "Ada"}
	raw, _ := json.Marshal(body)
	h := sha256.New()
	h.Write([]byte(tm.Book))
	h.Write([]byte{0})
	h.Write(raw)
	// Another instance is running the request with this key right now.
	req := idempotency.Request{APIKeyID: keyID, Key: "slow", Path: "POST /api/v1/contacts", Hash: hex.EncodeToString(h.Sum(nil))}
	c, err := tm.Env.App.Idempotency.Begin(ctx, req)
	if err != nil || c.State != idempotency.Run {
		t.Fatalf("Begin = %v, %v", c.State, err)
	}
	tm.Key.Post("/api/v1/contacts", body, "Idempotency-Key", "slow").ExpectError(http.StatusConflict, "CONFLICT")
	tm.Key.Post("/api/v1/contacts", map[string]any{"first_name": "Other"}, "Idempotency-Key", "slow").
		ExpectError(http.StatusUnprocessableEntity, "IDEMPOTENCY_MISMATCH")
	if n := tm.Env.QueryInt(`SELECT count(*) FROM contacts`); n != 0 {
		t.Fatalf("%d contacts: a request ran while the first held the key", n)
	}
	// The in-flight 409 is not kept: once the first gives up, the retry runs.
	if err := tm.Env.App.Idempotency.Abandon(ctx, req, c); err != nil {
		t.Fatal(err)
	}
	tm.Key.Post("/api/v1/contacts", body, "Idempotency-Key", "slow").Expect(http.StatusCreated)
}
