package httplimit

import (
	"net/http"
	"net/netip"
	"testing"
)

// A Forwarded element is read by RFC 7239's grammar, so that a parameter
// a trusted proxy writes with a value the client chose (host=, the
// client's Host header) cannot carry a for= of the client's:
//
//   - a value may be a quoted-string, which may hold ";":
//     host="a;for=203.0.113.9;x";for=198.51.100.7 is one well-formed
//     element whose for is 198.51.100.7;
//   - a proxy that writes the client's Host unquoted before its own for
//     (Spring Cloud Gateway writes proto=http;host=<Host>;for="<client>",
//     and a;for=203.0.113.9 is a valid Host: ";" and "=" are sub-delims)
//     makes an element in which for occurs twice, which section 4 forbids.
//
// Such an element, and one that does not parse, is a hop that cannot be
// parsed: the walk ends at the trusted proxy that reported it, whose
// address stands in for the client. The identity becomes coarser, never
// the client's choice.
func TestAForwardedValueCannotCarryTheClientsOwnFor(t *testing.T) {
	proxy := netip.MustParseAddr("10.0.0.1")
	trusted := func(a netip.Addr) bool { return a.IsPrivate() }
	for _, c := range []struct{ forwarded, want string }{
		{`host="a;for=203.0.113.9;x";for=198.51.100.7`, "198.51.100.7"},
		{`host="a\";for=203.0.113.9;x=\"";for=198.51.100.7`, "198.51.100.7"}, // quoted-pairs
		{`for=198.51.100.7 ; proto=https;by="[2001:db8::1]"`, "198.51.100.7"},
		{`for=198.51.100.7;;ext=1;ext=2`, "198.51.100.7"}, // an extension's parameter may repeat
		{`FOR=198.51.100.7;Proto=https`, "198.51.100.7"},
		{`for=198.51.100.7:4711`, "198.51.100.7"}, // unquoted ":", as proxies write it
		// Unreadable: the proxy's address.
		{`proto=http;host=a;for=203.0.113.9;for="198.51.100.7:4711"`, "10.0.0.1"},
		{`for=203.0.113.9;For="198.51.100.7"`, "10.0.0.1"},
		{`for=198.51.100.7;host=a;host=b`, "10.0.0.1"},
		{`for="198.51.100.7"x`, "10.0.0.1"},
		{`for=198.51.100.7 x`, "10.0.0.1"},
		{`for=198.51.100.7;host`, "10.0.0.1"},
		{`for=198.51.100.7;=a`, "10.0.0.1"},
		{`for=198.51.100.7;host="a`, "10.0.0.1"},
		{`for="198.51.100.7` + "\x01" + `"`, "10.0.0.1"},
		{`host=a;proto=http`, "10.0.0.1"}, // no for
	} {
		h := http.Header{"Forwarded": {c.forwarded}}
		if got := clientAddr(h, proxy, true, trusted, true); got != netip.MustParseAddr(c.want) {
			t.Errorf("Forwarded: %s: client %v, want %v", c.forwarded, got, c.want)
		}
	}
}
