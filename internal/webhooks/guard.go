package webhooks

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"syscall"
	"time"
)

// The SSRF guard. A webhook URL is chosen by a customer, so without it a
// delivery could reach the service's own network: the cloud metadata
// endpoint, the database, an admin port on loopback. The check runs in the
// dialer's Control hook, i.e. on the exact address about to be connected,
// after DNS resolution, so neither a name that resolves to a private
// address nor DNS rebinding between check and use gets through. Proxies
// are never used for deliveries (they would dial on our behalf).

// refusedPrefixes are the ranges a delivery may not reach, with the word
// the delivery log uses for them.
var refusedPrefixes = []struct {
	prefix netip.Prefix
	reason string
}{
	{netip.MustParsePrefix("0.0.0.0/8"), "unspecified"},
	{netip.MustParsePrefix("10.0.0.0/8"), "private"},
	{netip.MustParsePrefix("100.64.0.0/10"), "carrier-grade NAT"},
	{netip.MustParsePrefix("127.0.0.0/8"), "loopback"},
	{netip.MustParsePrefix("169.254.0.0/16"), "link-local"}, // includes 169.254.169.254, the metadata service
	{netip.MustParsePrefix("172.16.0.0/12"), "private"},
	{netip.MustParsePrefix("192.0.0.0/24"), "reserved"},
	{netip.MustParsePrefix("192.168.0.0/16"), "private"},
	{netip.MustParsePrefix("198.18.0.0/15"), "reserved"},
	{netip.MustParsePrefix("224.0.0.0/4"), "multicast"},
	{netip.MustParsePrefix("240.0.0.0/4"), "reserved"}, // includes the broadcast address
	{netip.MustParsePrefix("::/128"), "unspecified"},
	{netip.MustParsePrefix("::1/128"), "loopback"},
	{netip.MustParsePrefix("fc00::/7"), "private"},
	{netip.MustParsePrefix("fe80::/10"), "link-local"},
	{netip.MustParsePrefix("fec0::/10"), "private"}, // deprecated site-local
	{netip.MustParsePrefix("ff00::/8"), "multicast"},
	{netip.MustParsePrefix("100::/64"), "reserved"}, // discard-only
}

// IPv6 ranges that carry an IPv4 address a gateway will connect to; the
// embedded address is checked like any other.
var (
	nat64Prefix     = netip.MustParsePrefix("64:ff9b::/96")
	nat64LocalRange = netip.MustParsePrefix("64:ff9b:1::/48")
	sixToFour       = netip.MustParsePrefix("2002::/16")
	v4Compatible    = netip.MustParsePrefix("::/96")
)

// refusedReason says why a delivery may not connect to ip ("" when it
// may): "loopback", "private", "link-local", ...
func refusedReason(ip netip.Addr) string {
	ip = ip.WithZone("")
	// ::ffff:127.0.0.1 is 127.0.0.1 on a dual-stack socket.
	ip = ip.Unmap()
	if !ip.IsValid() {
		return "invalid"
	}
	for _, p := range refusedPrefixes {
		if p.prefix.Contains(ip) {
			return p.reason
		}
	}
	if ip.Is6() {
		b := ip.As16()
		switch {
		case nat64Prefix.Contains(ip), v4Compatible.Contains(ip):
			return refusedReason(netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]}))
		case nat64LocalRange.Contains(ip):
			return "private"
		case sixToFour.Contains(ip):
			return refusedReason(netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]}))
		}
	}
	return ""
}

// RefusedError is a connection the guard did not allow.
type RefusedError struct {
	Addr   netip.Addr
	Reason string
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("connecting to %s is not allowed: it is a %s address", e.Addr, e.Reason)
}

// guardControl is a net.Dialer Control hook refusing non-public addresses.
func guardControl(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return &RefusedError{Reason: "unparseable"}
	}
	if reason := refusedReason(ap.Addr()); reason != "" {
		return &RefusedError{Addr: ap.Addr().Unmap(), Reason: reason}
	}
	return nil
}

// newDialer returns the dial function of the delivery client: guarded
// unless insecure (development) mode is on.
func newDialer(insecure bool) func(ctx context.Context, network, addr string) (net.Conn, error) {
	d := &net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}
	if !insecure {
		d.Control = guardControl
	}
	return d.DialContext
}

// Outbound configures OutboundClient.
type Outbound struct {
	// AllowInsecure lifts the dial guard (development, as
	// WEBHOOK_ALLOW_INSECURE does for deliveries).
	AllowInsecure bool
	Timeout       time.Duration // per request
}

// OutboundClient is an HTTP client for other addresses customers choose
// (a team's identity provider): the same dial guard as deliveries unless
// insecure (development), never through a proxy, with a timeout per
// request.
func OutboundClient(o Outbound) *http.Client {
	return &http.Client{
		Timeout: o.Timeout,
		Transport: &http.Transport{
			Proxy:               nil,
			DialContext:         newDialer(o.AllowInsecure),
			ForceAttemptHTTP2:   true,
			TLSHandshakeTimeout: o.Timeout,
			IdleConnTimeout:     90 * time.Second,
		},
	}
}

// NonPublicHost says why host (a URL's host name, without port) names an
// address deliveries may not reach, as far as can be told without DNS
// ("" when it may be public): localhost, or a literal loopback, private,
// link-local, ... address. Names are checked again at dial time.
func NonPublicHost(host string) string {
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return "loopback"
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		return refusedReason(ip)
	}
	return ""
}
