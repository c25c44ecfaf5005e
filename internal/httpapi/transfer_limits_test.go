package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/contactbook/contactbook/internal/apptest"
)

// stalledBody sends its first bytes, then waits until stop is closed (the
// request's context ends): a client still uploading when the server must
// already have answered.
type stalledBody struct {
	head io.Reader
	stop <-chan struct{}
}

func (b *stalledBody) Read(p []byte) (int, error) {
	if n, err := b.head.Read(p); err != io.EOF {
		return n, err
	}
	<-b.stop
	return 0, io.ErrUnexpectedEOF
}

// TestImportOversizeLengthRefusedBeforeTheBody: an upload that declares
// more than the limit gets its 413 while it is still sending, without the
// server waiting for (or reading) the 60 MB. The body here stalls after
// its first kilobyte: a server that read the body first would never
// answer, and the request would time out.
func TestImportOversizeLengthRefusedBeforeTheBody(t *testing.T) {
	t.Parallel()
	env := apptest.Setup(t, apptest.Options{Bare: true}).Env
	u := env.Signup("Big")
	book := u.CreateBook("Big")
	// The service itself, without the test harness's contract check (which
	// reads every body whole before the service sees it).
	srv := httptest.NewServer(env.App.Handler)
	t.Cleanup(srv.Close)

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	body := &stalledBody{head: bytes.NewReader(bytes.Repeat([]byte("x"), 1<<10)), stop: ctx.Done()}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/api/books/"+book+"/imports", body)
	if err != nil {
		t.Fatal(err)
	}
	req.ContentLength = 60 << 20
	req.Header.Set("Content-Type", "multipart/form-data; boundary=x")
	req.Header.Set("Authorization", "Bearer "+u.Token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("a 60 MB upload got no answer while sending: %v", err)
	}
	defer res.Body.Close()
	var out struct {
		Error struct{ Code, Message string }
	}
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != http.StatusRequestEntityTooLarge || out.Error.Code != "PAYLOAD_TOO_LARGE" {
		t.Fatalf("got %d %+v, want 413 PAYLOAD_TOO_LARGE", res.StatusCode, out.Error)
	}
}

// TestExportNeedsMember: exporting takes the whole book away, so it needs
// the member role (and a key, which acts as a member); a viewer, who may
// list the contacts, is refused on both export routes.
func TestExportNeedsMember(t *testing.T) {
	t.Parallel()
	tm := apptest.Setup(t)
	tm.O.NewContact("Ada", "ada@example.com")
	tm.V.Get("/api/contacts").Expect(http.StatusOK)
	tm.Viewer.Get("/api/books/"+tm.Book+"/export").ExpectError(http.StatusForbidden, "FORBIDDEN")
	tm.V.Get("/api/contacts/export").ExpectError(http.StatusForbidden, "FORBIDDEN")
	tm.Member.Get("/api/books/" + tm.Book + "/export").Expect(http.StatusOK)
	tm.M.Get("/api/contacts/export?format=vcard").Expect(http.StatusOK)
	tm.Key.Get("/api/v1/contacts/export").Expect(http.StatusOK)
}
