package httplimit

import (
	"net/http"
	"net/netip"
	"strings"
	"testing"
)

// A quote a client leaves open in its own forwarding header does not
// swallow the hops the trusted proxies append after it: a quoted-string
// ends with its field line, and a line whose quotes do not close is split
// at every comma. Otherwise the client would be known by the proxy's
// address, sharing (and spending) the quota of every client so known.
func TestAnOpenQuoteDoesNotSwallowTheProxysHop(t *testing.T) {
	proxy := netip.MustParseAddr("10.0.0.1")
	trusted := func(a netip.Addr) bool { return a.IsPrivate() }
	client := netip.MustParseAddr("198.51.100.1")
	for _, c := range []struct {
		name      string
		header    string
		values    []string
		forwarded bool
	}{
		{"X-Forwarded-For, the proxy's hop on a line of its own", "X-Forwarded-For", []string{`"`, "198.51.100.1"}, false},
		{"X-Forwarded-For, the proxy's hop appended to the client's line", "X-Forwarded-For", []string{`"1.2.3.4, 198.51.100.1`}, false},
		{"Forwarded, the proxy's element on a line of its own", "Forwarded", []string{`for="`, "for=198.51.100.1"}, true},
		{"Forwarded, the proxy's element appended to the client's line", "Forwarded", []string{`for="1.2.3.4, for=198.51.100.1`}, true},
		{"Forwarded, the proxy's element quoted", "Forwarded", []string{`for="1.2.3.4, for="198.51.100.1:80"`}, true},
		{"Forwarded, an escape left open", "Forwarded", []string{`for="1.2.3.4\`, `for="198.51.100.1:80";proto=https`}, true},
	} {
		h := http.Header{c.header: c.values}
		if got := clientAddr(h, proxy, true, trusted, c.forwarded); got != client {
			t.Errorf("%s (%q): client %v, want %v", c.name, c.values, got, client)
		}
	}
}

// RFC 7239 lets a proxy hide the client's port but not its address
// (for="192.0.2.43:_abc", section 6.3): such a hop is the client at that
// address, not an unparseable one at which the walk stops, which would
// make every client behind that proxy one.
func TestAnObfuscatedPortHidesNoAddress(t *testing.T) {
	proxy := netip.MustParseAddr("10.0.0.1")
	trusted := func(a netip.Addr) bool { return a.IsPrivate() }
	for _, c := range []struct {
		forwarded string
		want      string
	}{
		{`for="192.0.2.43:_abc"`, "192.0.2.43"},
		{`for="[2001:db8:cafe::17]:_x.y-z_1"`, "2001:db8:cafe::17"},
		{`for="198.51.100.1:_p", for="10.0.0.2:_q"`, "198.51.100.1"},
		// Still no hop: an obfuscated node, an empty or bad obfport, a zone.
		{`for="_hidden:_abc"`, "10.0.0.1"},
		{`for="192.0.2.43:_"`, "10.0.0.1"},
		{`for="192.0.2.43:_a b"`, "10.0.0.1"},
		{`for="2001:db8::1:_abc"`, "10.0.0.1"},
		{`for="[fe80::1%eth0]:_abc"`, "10.0.0.1"},
	} {
		h := http.Header{"Forwarded": {c.forwarded}}
		if got := clientAddr(h, proxy, true, trusted, true); got != netip.MustParseAddr(c.want) {
			t.Errorf("Forwarded: %s: client %v, want %v", c.forwarded, got, c.want)
		}
	}
}

// Of lines beyond the size bound, only the ones that do not fit are
// dropped: a line that fits exactly keeps its leftmost hop.
func TestALineThatFitsTheBoundKeepsItsHops(t *testing.T) {
	proxy := netip.MustParseAddr("10.0.0.1")
	trusted := func(a netip.Addr) bool { return a.IsPrivate() }
	last := "198.51.100.1" + strings.Repeat(" ", maxForwardedLen-len("198.51.100.1"))
	h := http.Header{"X-Forwarded-For": {"192.0.2.9", last}}
	if got, want := clientAddr(h, proxy, true, trusted, false), netip.MustParseAddr("198.51.100.1"); got != want {
		t.Errorf("client %v, want %v", got, want)
	}
}
