package carddav_test

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/contactbook/contactbook/internal/apptest"
)

// vdirsyncer is Debian's vdirsyncer (scripts/dav-tools.sh installs it for
// make test): a CardDAV client no one here wrote.
func vdirsyncer(t *testing.T) string {
	p, err := exec.LookPath("vdirsyncer")
	if err != nil {
		t.Skip("vdirsyncer is not installed (apt-get install vdirsyncer; make test does it)")
	}
	return p
}

// syncer runs vdirsyncer on a pair of a local folder and one address book.
type syncer struct {
	t           *testing.T
	bin, config string
	local       string
}

func newSyncer(t *testing.T, url, email, password string) *syncer {
	dir := t.TempDir()
	s := &syncer{t: t, bin: vdirsyncer(t), config: filepath.Join(dir, "config"), local: filepath.Join(dir, "local")}
	if err := os.MkdirAll(s.local, 0o755); err != nil {
		t.Fatal(err)
	}
	conf := fmt.Sprintf(`[general]
status_path = %q

[pair book]
a = "local"
b = "server"
collections = null
conflict_resolution = "b wins"

[storage local]
type = "filesystem"
path = %q
fileext = ".vcf"

[storage server]
type = "carddav"
url = %q
username = %q
password = %q
`, filepath.Join(dir, "status"), s.local, url, email, password)
	if err := os.WriteFile(s.config, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	return s
}

// run runs a vdirsyncer command and returns what it said.
func (s *syncer) run(args ...string) string {
	s.t.Helper()
	cmd := exec.Command(s.bin, append([]string{"-c", s.config, "--verbosity", "INFO"}, args...)...)
	cmd.Env = append(os.Environ(), "HOME="+filepath.Dir(s.config), "LC_ALL=C.UTF-8", "LANG=C.UTF-8")
	out, err := cmd.CombinedOutput()
	if err != nil {
		s.t.Fatalf("vdirsyncer %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// sync syncs and returns the changes vdirsyncer reports.
func (s *syncer) sync() []string {
	s.t.Helper()
	var changes []string
	for _, line := range strings.Split(s.run("sync"), "\n") {
		line = strings.TrimSpace(line)
		for _, verb := range []string{"Copying", "Updating", "Deleting"} {
			if strings.HasPrefix(line, verb) {
				changes = append(changes, line)
			}
		}
	}
	return changes
}

// files maps the local folder's files to their text.
func (s *syncer) files() map[string]string {
	s.t.Helper()
	entries, err := os.ReadDir(s.local)
	if err != nil {
		s.t.Fatal(err)
	}
	out := map[string]string{}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(s.local, e.Name()))
		if err != nil {
			s.t.Fatal(err)
		}
		out[e.Name()] = string(b)
	}
	return out
}

func (s *syncer) fileWith(sub string) (string, string) {
	s.t.Helper()
	for name, text := range s.files() {
		if strings.Contains(text, sub) {
			return name, text
		}
	}
	s.t.Fatalf("no local card holds %q: %v", sub, s.files())
	return "", ""
}

func (s *syncer) write(name, text string) {
	s.t.Helper()
	if err := os.WriteFile(filepath.Join(s.local, name), []byte(text), 0o644); err != nil {
		s.t.Fatal(err)
	}
}

func TestVdirsyncerRoundTrip(t *testing.T) {
	t.Parallel()
	tm := apptest.Setup(t, apptest.Options{OwnerOnly: true})
	dav := tm.Owner.DAV()
	ada := tm.O.NewContactWith(map[string]any{"first_name": "Ada", "last_name": "Lovelace"}, "ada@example.com")
	tm.O.NewContactWith(map[string]any{"company": "Analytical Engines"}, "")
	s := newSyncer(t, tm.Env.URL+dav.BookPath(tm.Book), dav.Email, dav.Password)
	s.run("discover")

	// The server's contacts arrive; a second sync changes nothing.
	if ch := s.sync(); len(ch) != 2 {
		t.Fatalf("first sync: %v", ch)
	}
	if len(s.files()) != 2 {
		t.Fatalf("local files: %v", s.files())
	}
	if ch := s.sync(); len(ch) != 0 {
		t.Fatalf("a second sync changed %v", ch)
	}

	// Local create, edit and delete reach the server.
	s.write("new-local.vcf", "BEGIN:VCARD\r\nVERSION:3.0\r\nUID:new-local\r\nFN:Grace Hopper\r\nN:Hopper;Grace;;;\r\n"+
		"EMAIL;TYPE=INTERNET:grace@example.com\r\nX-PHONETIC-LAST-NAME:HOP-er\r\nEND:VCARD\r\n")
	name, text := s.fileWith("Analytical Engines")
	s.write(name, strings.Replace(text, "END:VCARD", "TITLE:Engine works\r\nEND:VCARD", 1))
	adaFile, _ := s.fileWith("Lovelace")
	if err := os.Remove(filepath.Join(s.local, adaFile)); err != nil {
		t.Fatal(err)
	}
	if ch := s.sync(); len(ch) != 3 {
		t.Fatalf("sync of local changes: %v", ch)
	}
	list := tm.O.Get("/api/contacts?sort=name").Expect(http.StatusOK)
	if list.Len("data") != 2 {
		t.Fatalf("server after local changes: %s", list.Body)
	}
	tm.O.Get("/api/contacts/"+ada).ExpectError(http.StatusNotFound, "NOT_FOUND")
	grace := tm.O.Get("/api/contacts?q=grace").Expect(http.StatusOK)
	if grace.Len("data") != 1 || grace.String("data.0.emails.0.address") != "grace@example.com" {
		t.Fatalf("grace on the server: %s", grace.Body)
	}
	graceID := grace.String("data.0.id")
	engines := tm.O.Get("/api/contacts?q=analytical").Expect(http.StatusOK)
	if engines.String("data.0.job_title") != "Engine works" {
		t.Fatalf("the local edit: %s", engines.Body)
	}
	enginesID := engines.String("data.0.id")
	// The card the client wrote comes back whole, under its own name.
	r := dav.Do(http.MethodGet, dav.BookPath(tm.Book)+"new-local.vcf", "")
	if r.Status != http.StatusOK || !strings.Contains(string(r.Body), "X-PHONETIC-LAST-NAME:HOP-er") || !strings.Contains(string(r.Body), "UID:new-local") {
		t.Fatalf("the client's card: %d %s", r.Status, r.Body)
	}
	if ch := s.sync(); len(ch) != 0 {
		t.Fatalf("sync after local changes changed %v", ch)
	}

	// Server create, edit and delete reach the folder.
	tm.O.NewContactWith(map[string]any{"first_name": "Katherine", "last_name": "Johnson"}, "kj@example.com")
	tm.O.Patch("/api/contacts/"+graceID, map[string]any{"job_title": "Rear Admiral"}).Expect(http.StatusOK)
	tm.O.Delete("/api/contacts/" + enginesID).Expect(http.StatusNoContent)
	if ch := s.sync(); len(ch) != 3 {
		t.Fatalf("sync of server changes: %v", ch)
	}
	files := s.files()
	if len(files) != 2 {
		t.Fatalf("local after server changes: %v", files)
	}
	s.fileWith("Katherine")
	if _, text := s.fileWith("Grace"); !strings.Contains(text, "TITLE:Rear Admiral") || !strings.Contains(text, "X-PHONETIC-LAST-NAME:HOP-er") {
		t.Fatalf("grace locally: %s", text)
	}

	// A conflict: both sides edit one card; the server wins (the pair's
	// rule), and neither side holds a copy.
	gname, gtext := s.fileWith("Grace")
	s.write(gname, strings.Replace(gtext, "TITLE:Rear Admiral", "TITLE:Local title", 1))
	tm.O.Patch("/api/contacts/"+graceID, map[string]any{"job_title": "Server title"}).Expect(http.StatusOK)
	s.sync()
	if _, text := s.fileWith("Grace"); !strings.Contains(text, "TITLE:Server title") {
		t.Fatalf("after the conflict: %s", text)
	}
	if got := tm.O.Get("/api/contacts/" + graceID).Expect(http.StatusOK).String("data.job_title"); got != "Server title" {
		t.Fatalf("server after the conflict: %q", got)
	}
	if n := tm.O.Get("/api/contacts").Expect(http.StatusOK).Len("data"); n != 2 || len(s.files()) != 2 {
		t.Fatalf("duplicates after the conflict: %d on the server, %v locally", n, s.files())
	}
	if ch := s.sync(); len(ch) != 0 {
		t.Fatalf("the last sync changed %v", ch)
	}
}
