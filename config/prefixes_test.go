package config_test

import (
	"net/http/httptest"
	"net/netip"
	"slices"
	"testing"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/memory"
)

const prefixPlans = "plans:\n  free: {limits: [{name: m, algorithm: gcra, quantity: 10, window: 1m}]}\n"

// An IPv4 address written as IPv4-mapped IPv6 (::ffff:10.0.0.1, as `ss`
// and dual-stack logs print it) is that IPv4 address, and a mapped prefix
// of /96 or longer that IPv4 prefix: the middleware and the PROXY protocol
// match client addresses unmapped, so a mapped prefix kept as written would
// never match anyone.
func TestIPv4MappedPrefixesAreTheirIPv4(t *testing.T) {
	c, err := config.Parse("m.yaml", []byte(prefixPlans+
		"identity: {trusted_proxies: [\"::ffff:10.0.0.1\"]}\n"+
		"proxy_protocol: [\"::ffff:192.0.2.0/120\", \"::ffff:0:0/96\"]\n"+
		"exempt: {addresses: [\"::ffff:198.0.0.0/104\"]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []struct {
		name      string
		got, want []netip.Prefix
	}{
		{"trusted_proxies", c.Identity.TrustedProxies, []netip.Prefix{netip.MustParsePrefix("10.0.0.1/32")}},
		{"proxy_protocol", c.ProxyProtocol, []netip.Prefix{netip.MustParsePrefix("192.0.2.0/24"), netip.MustParsePrefix("0.0.0.0/0")}},
		{"exempt.addresses", c.ExemptAddresses, []netip.Prefix{netip.MustParsePrefix("198.0.0.0/8")}},
	} {
		if !slices.Equal(f.got, f.want) {
			t.Errorf("%s: %v, want %v", f.name, f.got, f.want)
		}
	}
	m, err := httplimit.New(sluice.NewLimiter(memory.New()), c.HTTPLimitOptions())
	if err != nil {
		t.Fatal(err)
	}
	r := httptest.NewRequest("GET", "/", nil)
	r.RemoteAddr = "10.0.0.1:4711"
	r.Header.Set("X-Forwarded-For", "203.0.113.9")
	if got := m.ClientAddr(r); got != netip.MustParseAddr("203.0.113.9") {
		t.Errorf("a peer at 10.0.0.1 (trusted as ::ffff:10.0.0.1): client %v, want the address it forwards, 203.0.113.9", got)
	}
}

// An IPv6 zone names an interface of this host, not a part of an address:
// one is refused at its line, never dropped, nor read with what follows it
// (fe80::1%eth0/64 parsed as the zone "eth0/64" of fe80::1, a /128).
func TestPrefixesWithAZoneAreRefused(t *testing.T) {
	for _, c := range []struct{ yaml, want string }{
		{"identity: {trusted_proxies: [\"fe80::1%eth0/64\"]}\n",
			`z.yaml:3:30: identity.trusted_proxies[0]: "fe80::1%eth0/64" has an IPv6 zone (%eth0/64), which names an interface of this host, not addresses: write the address or prefix without it`},
		{"exempt: {addresses: [\"fe80::1%eth0\"]}\n",
			`z.yaml:3:22: exempt.addresses[0]: "fe80::1%eth0" has an IPv6 zone (%eth0), which names an interface of this host, not addresses: write the address or prefix without it`},
		{"proxy_protocol: [\"fe80::1%2\"]\n",
			`z.yaml:3:18: proxy_protocol[0]: "fe80::1%2" has an IPv6 zone (%2), which names an interface of this host, not addresses: write the address or prefix without it`},
	} {
		_, err := config.Parse("z.yaml", []byte(prefixPlans+c.yaml))
		if err == nil || err.Error() != c.want {
			t.Errorf("%s:\n%v\nwant exactly:\n%s", c.yaml, err, c.want)
		}
	}
}

// A prefix with host bits set (10.0.0.1/8) says two things: one address,
// and a network of millions. It is refused at its line with both
// readings, rather than read silently as the network.
func TestPrefixesWithHostBitsAreRefused(t *testing.T) {
	for _, c := range []struct{ yaml, want string }{
		{"identity: {trusted_proxies: [10.0.0.1/8]}\n",
			`b.yaml:3:30: identity.trusted_proxies[0]: "10.0.0.1/8" has bits set past its length: write 10.0.0.0/8 for the network, or 10.0.0.1 for the one address`},
		{"exempt: {addresses: [\"2001:db8::1/64\"]}\n",
			`b.yaml:3:22: exempt.addresses[0]: "2001:db8::1/64" has bits set past its length: write 2001:db8::/64 for the network, or 2001:db8::1 for the one address`},
		{"proxy_protocol: [\"::ffff:10.0.0.1/104\"]\n",
			`b.yaml:3:18: proxy_protocol[0]: "::ffff:10.0.0.1/104" has bits set past its length: write 10.0.0.0/8 for the network, or 10.0.0.1 for the one address`},
	} {
		_, err := config.Parse("b.yaml", []byte(prefixPlans+c.yaml))
		if err == nil || err.Error() != c.want {
			t.Errorf("%s:\n%v\nwant exactly:\n%s", c.yaml, err, c.want)
		}
	}
	c, err := config.Parse("b.yaml", []byte(prefixPlans+"exempt: {addresses: [10.0.0.0/8, 10.1.2.3/32, \"2001:db8::/64\"]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if want := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("10.1.2.3/32"), netip.MustParsePrefix("2001:db8::/64")}; !slices.Equal(c.ExemptAddresses, want) {
		t.Errorf("exempt.addresses %v, want %v", c.ExemptAddresses, want)
	}
}
