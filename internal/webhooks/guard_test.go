package webhooks

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/contactbook/contactbook/internal/apperr"
)

func TestWebhookGuardRefusesNonPublicAddresses(t *testing.T) {
	t.Parallel()
	refused := map[string]string{
		"127.0.0.1":                 "loopback",
		"127.255.255.254":           "loopback",
		"::1":                       "loopback",
		"::ffff:127.0.0.1":          "loopback",
		"::ffff:7f00:2":             "loopback",
		"0.0.0.0":                   "unspecified",
		"::":                        "unspecified",
		"10.0.0.1":                  "private",
		"172.16.0.1":                "private",
		"172.31.255.255":            "private",
		"192.168.1.1":               "private",
		"::ffff:192.168.1.1":        "private",
		"::ffff:10.1.2.3":           "private",
		"fc00::1":                   "private",
		"fd12:3456:789a::1":         "private",
		"169.254.169.254":           "link-local",
		"::ffff:169.254.169.254":    "link-local",
		"169.254.0.1":               "link-local",
		"fe80::1":                   "link-local",
		"fe80::1%eth0":              "link-local",
		"100.64.0.1":                "carrier-grade NAT",
		"100.127.255.254":           "carrier-grade NAT",
		"224.0.0.1":                 "multicast",
		"239.255.255.250":           "multicast",
		"ff02::1":                   "multicast",
		"255.255.255.255":           "reserved",
		"64:ff9b::7f00:1":           "loopback",   // NAT64 of 127.0.0.1
		"64:ff9b::a9fe:a9fe":        "link-local", // NAT64 of 169.254.169.254
		"2002:7f00:1::1":            "loopback",   // 6to4 of 127.0.0.1
		"2002:c0a8:101::1":          "private",    // 6to4 of 192.168.1.1
		"::127.0.0.1":               "loopback",   // IPv4-compatible form
		"fd00:ec2::254":             "private",    // AWS IPv6 metadata
		"fec0::1":                   "private",
		"198.18.0.1":                "reserved",
		"192.0.0.170":               "reserved",
		"0.1.2.3":                   "unspecified",
		"::ffff:0.0.0.0":            "unspecified",
		"100::1":                    "reserved",
		"64:ff9b:1::1":              "private",
		"::ffff:100.64.0.1":         "carrier-grade NAT",
		"::ffff:224.0.0.1":          "multicast",
		"2002:a9fe:a9fe::":          "link-local",
		"64:ff9b::c0a8:101":         "private",
		"::ffff:172.16.5.4":         "private",
		"::ffff:127.1.2.3":          "loopback",
		"::ffff:255.255.255.255":    "reserved",
		"2002:6440:1::1":            "carrier-grade NAT",
		"64:ff9b::8.8.8.8":          "", // NAT64 of a public address: allowed
		"2002:808:808::1":           "", // 6to4 of 8.8.8.8: allowed
		"8.8.8.8":                   "",
		"1.1.1.1":                   "",
		"93.184.216.34":             "",
		"100.63.255.255":            "",
		"100.128.0.0":               "",
		"172.15.255.255":            "",
		"172.32.0.0":                "",
		"169.253.255.255":           "",
		"2606:4700:4700::1111":      "",
		"2001:4860:4860::8888":      "",
		"::ffff:8.8.8.8":            "",
		"192.169.0.1":               "",
		"11.0.0.1":                  "",
		"223.255.255.255":           "",
		"2a00:1450:4001:82b::200e":  "",
		"2600:1f18:7a3f:a700::6291": "",
	}
	for addr, want := range refused {
		ip, err := netip.ParseAddr(addr)
		if err != nil {
			t.Fatalf("%s: %v", addr, err)
		}
		if got := refusedReason(ip); got != want {
			t.Errorf("refusedReason(%s) = %q, want %q", addr, got, want)
		}
	}
}

func TestWebhookGuardAtDialTime(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()

	guarded := newDialer(false)
	// "localhost" is a name: the check applies to what it resolves to.
	for _, addr := range []string{"127.0.0.1:" + port, "localhost:" + port, "[::ffff:127.0.0.1]:" + port, "169.254.169.254:80"} {
		c, err := guarded(ctx, "tcp", addr)
		var refused *RefusedError
		if !errors.As(err, &refused) {
			if c != nil {
				c.Close()
			}
			t.Errorf("dial %s: %v, want a refusal", addr, err)
		}
	}
	// Development mode connects.
	c, err := newDialer(true)(ctx, "tcp", "127.0.0.1:"+port)
	if err != nil {
		t.Fatalf("insecure dial: %v", err)
	}
	c.Close()
}

func TestWebhookURLValidation(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		url      string
		insecure bool
		ok       bool
	}{
		{"https://hooks.example.com/contactbook", false, true},
		{"  https://hooks.example.com:8443/x?y=1  ", false, true},
		{"https://93.184.216.34/hook", false, true},
		{"http://hooks.example.com/x", false, false},
		{"http://hooks.example.com/x", true, true},
		{"http://127.0.0.1:8080/x", true, true},
		{"https://localhost/x", true, true},
		{"ftp://hooks.example.com/x", true, false},
		{"https://localhost/x", false, false},
		{"https://api.localhost/x", false, false},
		{"https://127.0.0.1/x", false, false},
		{"https://[::1]/x", false, false},
		{"https://[::ffff:10.0.0.1]/x", false, false},
		{"https://169.254.169.254/latest", false, false},
		{"https://10.0.0.8/x", false, false},
		{"https://", false, false},
		{"hooks.example.com/x", false, false},
		{"/relative", false, false},
		{"", false, false},
		{"https://" + strings.Repeat("a", 2100) + ".com/", false, false},
		{"https:hooks.example.com", false, false},
	} {
		_, err := normalizeURL(c.url, c.insecure)
		if c.ok && err != nil {
			t.Errorf("normalizeURL(%q, insecure=%v): %v", c.url, c.insecure, err)
		}
		if !c.ok && !apperr.Is(err, apperr.InvalidInput) {
			t.Errorf("normalizeURL(%q, insecure=%v) = %v, want INVALID_INPUT", c.url, c.insecure, err)
		}
	}
}
