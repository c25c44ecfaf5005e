package httpapi_test

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/contactbook/contactbook/internal/apptest"
)

func webhooksPath(teamID string, rest ...string) string {
	return fmt.Sprintf("/api/teams/%s/webhooks", teamID) + strings.Join(rest, "")
}

func TestWebhookManagement(t *testing.T) {
	t.Parallel()
	env := apptest.Setup(t, apptest.Options{Bare: true}).Env
	owner := env.Signup("ann")

	created := owner.Post(webhooksPath(owner.TeamID), map[string]any{
		"url": "https://hooks.example.com/contactbook", "events": []string{"contact.created", "book.deleted", "contact.created"},
	}).Expect(http.StatusCreated)
	id := created.String("data.webhook.id")
	secret := created.String("data.secret")
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if !strings.HasPrefix(secret, "whsec_") || err != nil || len(key) != 32 {
		t.Fatalf("secret %q is not whsec_ + base64 of 32 bytes", secret)
	}
	w := created.Value("data.webhook").(map[string]any)
	if w["team_id"] != owner.TeamID || w["url"] != "https://hooks.example.com/contactbook" || w["active"] != true ||
		w["created_by"] != owner.ID || w["created_at"] == nil || w["updated_at"] == nil {
		t.Errorf("created webhook: %v", w)
	}
	if got := fmt.Sprint(w["events"]); got != "[contact.created book.deleted]" {
		t.Errorf("events %s, want the two types once each", got)
	}
	if _, ok := w["secret"]; ok {
		t.Error("the webhook object carries the secret")
	}
	if env.QueryInt(`SELECT count(*) FROM webhooks WHERE id = $1 AND secret = $2`, id, secret) != 1 {
		t.Error("the secret was not stored")
	}

	second := owner.Post(webhooksPath(owner.TeamID), map[string]any{"url": "https://other.example.com/", "events": []string{"member.joined"}}).
		Expect(http.StatusCreated)
	if second.String("data.secret") == secret {
		t.Error("two webhooks share a secret")
	}

	list := owner.Get(webhooksPath(owner.TeamID)).Expect(http.StatusOK)
	if list.Len("data") != 2 || list.String("data.0.id") != id || list.Has("data.0.secret") || list.Len("data.0.events") != 2 {
		t.Fatalf("list: %s", list.Body)
	}

	p := owner.Patch(webhooksPath(owner.TeamID, "/", id), map[string]any{"url": "https://new.example.com/h", "events": []string{"book.created"}, "active": false}).
		Expect(http.StatusOK)
	if p.String("data.id") != id || p.String("data.url") != "https://new.example.com/h" || p.Bool("data.active") ||
		p.Len("data.events") != 1 || p.String("data.events.0") != "book.created" || p.Has("data.secret") {
		t.Fatalf("patch: %s", p.Body)
	}
	// Omitted fields stay.
	p = owner.Patch(webhooksPath(owner.TeamID, "/", id), map[string]any{"active": true}).Expect(http.StatusOK)
	if p.String("data.url") != "https://new.example.com/h" || !p.Bool("data.active") || p.String("data.events.0") != "book.created" {
		t.Fatalf("patch active only: %s", p.Body)
	}
	if env.QueryInt(`SELECT count(*) FROM webhooks WHERE id = $1 AND url = 'https://new.example.com/h' AND active AND events = '{book.created}'`, id) != 1 {
		t.Error("the patch was not stored")
	}

	owner.Get(webhooksPath(owner.TeamID, "/", id, "/deliveries")).Expect(http.StatusOK)
	owner.Delete(webhooksPath(owner.TeamID, "/", id)).Expect(http.StatusNoContent)
	owner.Delete(webhooksPath(owner.TeamID, "/", id)).ExpectError(http.StatusNotFound, "NOT_FOUND")
	owner.Patch(webhooksPath(owner.TeamID, "/", id), map[string]any{"active": true}).ExpectError(http.StatusNotFound, "NOT_FOUND")
	owner.Get(webhooksPath(owner.TeamID, "/", id, "/deliveries")).ExpectError(http.StatusNotFound, "NOT_FOUND")
	if env.QueryInt(`SELECT count(*) FROM webhooks WHERE id = $1`, id) != 0 {
		t.Error("the webhook is still stored")
	}
	if owner.Get(webhooksPath(owner.TeamID)).Expect(http.StatusOK).Len("data") != 1 {
		t.Error("list after delete")
	}
}

func TestWebhookManagementRoles(t *testing.T) {
	t.Parallel()
	env := apptest.Setup(t, apptest.Options{Bare: true}).Env
	owner := env.Signup("ann")
	adminUser := env.Join(owner, "adam", "admin")
	member := env.Join(owner, "mia", "member")
	viewer := env.Join(owner, "vic", "viewer")
	stranger := env.Signup("olga")

	body := map[string]any{"url": "https://hooks.example.com/", "events": []string{"book.created"}}
	id := adminUser.Post(webhooksPath(owner.TeamID), body).Expect(http.StatusCreated).String("data.webhook.id")
	if owner.Get(webhooksPath(owner.TeamID)).Expect(http.StatusOK).String("data.0.created_by") != adminUser.ID {
		t.Error("created_by is not the admin who created it")
	}
	adminUser.Patch(webhooksPath(owner.TeamID, "/", id), map[string]any{"active": false}).Expect(http.StatusOK)
	adminUser.Get(webhooksPath(owner.TeamID, "/", id, "/deliveries")).Expect(http.StatusOK)

	for _, u := range []*apptest.User{member, viewer} {
		u.Get(webhooksPath(owner.TeamID)).ExpectError(http.StatusForbidden, "FORBIDDEN")
		u.Post(webhooksPath(owner.TeamID), body).ExpectError(http.StatusForbidden, "FORBIDDEN")
		u.Patch(webhooksPath(owner.TeamID, "/", id), map[string]any{"active": true}).ExpectError(http.StatusForbidden, "FORBIDDEN")
		u.Delete(webhooksPath(owner.TeamID, "/", id)).ExpectError(http.StatusForbidden, "FORBIDDEN")
		u.Get(webhooksPath(owner.TeamID, "/", id, "/deliveries")).ExpectError(http.StatusForbidden, "FORBIDDEN")
	}
	// Another team's admin learns nothing, through either team's path.
	stranger.Get(webhooksPath(owner.TeamID)).ExpectError(http.StatusNotFound, "NOT_FOUND")
	stranger.Post(webhooksPath(owner.TeamID), body).ExpectError(http.StatusNotFound, "NOT_FOUND")
	stranger.Patch(webhooksPath(owner.TeamID, "/", id), map[string]any{"active": true}).ExpectError(http.StatusNotFound, "NOT_FOUND")
	stranger.Delete(webhooksPath(owner.TeamID, "/", id)).ExpectError(http.StatusNotFound, "NOT_FOUND")
	stranger.Get(webhooksPath(owner.TeamID, "/", id, "/deliveries")).ExpectError(http.StatusNotFound, "NOT_FOUND")
	stranger.Patch(webhooksPath(stranger.TeamID, "/", id), map[string]any{"active": true}).ExpectError(http.StatusNotFound, "NOT_FOUND")
	stranger.Delete(webhooksPath(stranger.TeamID, "/", id)).ExpectError(http.StatusNotFound, "NOT_FOUND")
	stranger.Get(webhooksPath(stranger.TeamID, "/", id, "/deliveries")).ExpectError(http.StatusNotFound, "NOT_FOUND")
	if stranger.Get(webhooksPath(stranger.TeamID)).Expect(http.StatusOK).Len("data") != 0 {
		t.Error("the stranger's team lists another team's webhook")
	}

	// API keys and anonymous callers are not accepted on the internal API.
	owner.NewKey().Get(webhooksPath(owner.TeamID)).ExpectError(http.StatusUnauthorized, "UNAUTHORIZED")
	env.Anonymous().Get(webhooksPath(owner.TeamID)).ExpectError(http.StatusUnauthorized, "UNAUTHORIZED")

	if env.QueryInt(`SELECT count(*) FROM webhooks WHERE id = $1 AND NOT active`, id) != 1 {
		t.Error("a refused call changed the webhook")
	}
}

func TestWebhookValidation(t *testing.T) {
	t.Parallel()
	env := apptest.Setup(t, apptest.Options{Bare: true, Env: map[string]string{"WEBHOOK_ALLOW_INSECURE": "false"}}).Env
	owner := env.Signup("ann")
	path := webhooksPath(owner.TeamID)
	ok := []string{"book.created"}
	for name, body := range map[string]any{
		"no url":             map[string]any{"events": ok},
		"empty url":          map[string]any{"url": "", "events": ok},
		"http url":           map[string]any{"url": "http://hooks.example.com/", "events": ok},
		"not a url":          map[string]any{"url": "hooks example", "events": ok},
		"relative url":       map[string]any{"url": "/hooks", "events": ok},
		"ftp url":            map[string]any{"url": "ftp://hooks.example.com/", "events": ok},
		"localhost":          map[string]any{"url": "https://localhost:8443/", "events": ok},
		"loopback":           map[string]any{"url": "https://127.0.0.1/", "events": ok},
		"private":            map[string]any{"url": "https://192.168.0.10/", "events": ok},
		"metadata":           map[string]any{"url": "https://169.254.169.254/", "events": ok},
		"no events":          map[string]any{"url": "https://hooks.example.com/"},
		"empty events":       map[string]any{"url": "https://hooks.example.com/", "events": []string{}},
		"unknown event":      map[string]any{"url": "https://hooks.example.com/", "events": []string{"book.created", "contact.exploded"}},
		"events not strings": map[string]any{"url": "https://hooks.example.com/", "events": []int{1}},
		"url not a string":   map[string]any{"url": 5, "events": ok},
	} {
		r := owner.Post(path, body).ExpectError(http.StatusBadRequest, "INVALID_INPUT")
		if name == "unknown event" && !strings.Contains(r.String("error.message"), "contact.exploded") {
			t.Errorf("the message does not name the unknown type: %s", r.Body)
		}
	}
	owner.Post(path, apptest.Raw{ContentType: "text/plain", Body: []byte("{}")}).ExpectError(http.StatusUnsupportedMediaType, "UNSUPPORTED_MEDIA_TYPE")
	owner.Post(path, apptest.Raw{ContentType: "application/json", Body: []byte("{")}).ExpectError(http.StatusBadRequest, "INVALID_INPUT")
	if env.QueryInt(`SELECT count(*) FROM webhooks`) != 0 {
		t.Fatal("an invalid webhook was stored")
	}

	id := owner.Post(path, map[string]any{"url": "https://hooks.example.com/", "events": ok}).Expect(http.StatusCreated).String("data.webhook.id")
	one := webhooksPath(owner.TeamID, "/", id)
	for _, body := range []any{
		map[string]any{},
		map[string]any{"name": "ignored"},
		map[string]any{"url": nil},
		map[string]any{"active": nil},
		map[string]any{"events": nil},
		map[string]any{"events": []string{}},
		map[string]any{"events": []string{"nope"}},
		map[string]any{"url": "http://hooks.example.com/"},
		map[string]any{"active": "yes"},
	} {
		owner.Patch(one, body).ExpectError(http.StatusBadRequest, "INVALID_INPUT")
	}
	owner.Patch(webhooksPath(owner.TeamID, "/not-a-uuid"), map[string]any{"active": false}).ExpectError(http.StatusNotFound, "NOT_FOUND")
	owner.Get(one+"/deliveries?limit=-1").ExpectError(http.StatusBadRequest, "INVALID_INPUT")
	owner.Get(one+"/deliveries?limit=ten").ExpectError(http.StatusBadRequest, "INVALID_INPUT")
	owner.Get(one + "/deliveries?limit=1000").Expect(http.StatusOK)
	if env.QueryInt(`SELECT count(*) FROM webhooks WHERE url = 'https://hooks.example.com/' AND active AND events = '{book.created}'`) != 1 {
		t.Error("an invalid patch changed the webhook")
	}
}
