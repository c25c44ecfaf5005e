//go:build reliability

package reliability

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/contactbook/contactbook/internal/apptest/logbuf"
)

// haproxyBinary finds HAProxy: HAPROXY_BIN, the PATH, then Debian's
// /usr/sbin; the scenario skips, saying so, without one.
func haproxyBinary(t *testing.T) string {
	if p := os.Getenv("HAPROXY_BIN"); p != "" {
		return p
	}
	if p, err := exec.LookPath("haproxy"); err == nil {
		return p
	}
	if _, err := os.Stat("/usr/sbin/haproxy"); err == nil {
		return "/usr/sbin/haproxy"
	}
	t.Skip("haproxy is not installed (scripts/pooler-tools.sh installs Debian's package; HAPROXY_BIN names another binary)")
	return ""
}

// haproxyConfig is deploy/haproxy.cfg with the scenario's addresses: round
// robin over the instances, each in rotation while its /readyz answers 200
// (checked every 500 ms; out after 2 failures, back after 1 success), and
// a request whose connection is refused retried on another instance.
func haproxyConfig(listen string, servers map[string]string) string {
	var b strings.Builder
	fmt.Fprintf(&b, `global
    maxconn 4096

defaults
    mode http
    timeout connect 2s
    timeout client 65s
    timeout server 65s
    timeout http-keep-alive 10s
    retries 3
    option redispatch 1
    retry-on conn-failure

frontend contactbook
    bind %s
    default_backend instances

backend instances
    balance roundrobin
    option httpchk GET /readyz
    http-check expect status 200
    default-server inter 500ms fall 2 rise 1
`, listen)
	for _, name := range []string{"a", "b", "c"} {
		if addr, ok := servers[name]; ok {
			fmt.Fprintf(&b, "    server %s %s check\n", name, addr)
		}
	}
	return b.String()
}

// startHAProxy runs HAProxy in the foreground on listen; it stops when t
// ends.
func startHAProxy(t *testing.T, listen string, servers map[string]string) {
	t.Helper()
	bin := haproxyBinary(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "haproxy.cfg")
	if err := os.WriteFile(cfg, []byte(haproxyConfig(listen, servers)), 0o644); err != nil {
		t.Fatal(err)
	}
	logs := &logbuf.Buffer{}
	cmd := exec.Command(bin, "-db", "-f", cfg)
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("haproxy's log:\n%s", logs.String())
		}
	})
	waitFor(t, 10*time.Second, "haproxy to listen", func() bool {
		select {
		case <-done:
			t.Fatalf("haproxy exited:\n%s", logs.String())
		default:
		}
		c, err := net.DialTimeout("tcp", listen, time.Second)
		if err == nil {
			c.Close()
		}
		return err == nil
	})
}
