package server

import (
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/netip"
	"testing"
)

// TestForwardNamesAnIPv6PeerAsRFC7239Asks: an IPv6 peer appended to
// Forwarded is quoted and bracketed, to X-Forwarded-For bare; an
// IPv4-mapped peer is judged, and named, as IPv4.
func TestForwardNamesAnIPv6PeerAsRFC7239Asks(t *testing.T) {
	trusted := []netip.Prefix{netip.MustParsePrefix("::1/128"), netip.MustParsePrefix("192.0.2.0/24")}
	for _, c := range []struct{ remote, xff, fwd string }{
		{"[::1]:4321", "198.51.100.1, ::1", `for=198.51.100.1, for="[::1]"`},
		{"[::ffff:192.0.2.7]:4321", "198.51.100.1, 192.0.2.7", `for=198.51.100.1, for=192.0.2.7`},
	} {
		in := httptest.NewRequest("GET", "http://sluice.test/a", nil)
		in.RemoteAddr = c.remote
		in.Header.Set("X-Forwarded-For", "198.51.100.1")
		in.Header.Set("Forwarded", "for=198.51.100.1")
		pr := &httputil.ProxyRequest{In: in, Out: in.Clone(in.Context())}
		pr.Out.Header = http.Header{}
		forward(pr, prefixJudge(trusted))
		if got := pr.Out.Header.Get("X-Forwarded-For"); got != c.xff {
			t.Errorf("%s: X-Forwarded-For %q, want %q", c.remote, got, c.xff)
		}
		if got := pr.Out.Header.Get("Forwarded"); got != c.fwd {
			t.Errorf("%s: Forwarded %q, want %q", c.remote, got, c.fwd)
		}
	}
}

// prefixJudge trusts the peers in its prefixes and names no client.
type prefixJudge []netip.Prefix

func (j prefixJudge) Peer(r *http.Request) (netip.Addr, bool) {
	ap, _ := netip.ParseAddrPort(r.RemoteAddr)
	a := ap.Addr().Unmap()
	for _, p := range j {
		if p.Contains(a) {
			return a, true
		}
	}
	return a, false
}

func (prefixJudge) ClientAddr(*http.Request) netip.Addr { return netip.Addr{} }
