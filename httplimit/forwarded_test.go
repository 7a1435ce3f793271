package httplimit

import (
	"net/http"
	"net/netip"
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
