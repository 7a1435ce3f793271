package jwt

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"syscall"
	"time"
)

// A dialGuard makes the connections of a fetcher's client, and refuses
// those to an address of the local host (loopbackIP) unless the URL the
// fetcher was configured with is on a loopback host. A redirect or a
// "jwks_uri" whose host name, unlike its URL, leads to the local host —
// a name that resolves to 127.0.0.1, or a name DNS rebinds there — is
// refused where the connection is made, which the name cannot hide.
//
// Two kinds of connection are never checked: those to the configured
// URL's own host and port, the operator's choice whatever its name
// resolves to, and those to a proxy the transport names (Proxy,
// HTTPS_PROXY), which resolves the hosts behind it itself.
//
// A dialGuard is safe for concurrent use.
type dialGuard struct {
	anyHost bool   // the configured URL is on a loopback host: nothing is refused
	home    string // the configured URL's "host:port", as the transport dials it
	// resolve, when set, is the address a connection for addr ("host:port")
	// is made to, as though its host resolved there: a test's DNS.
	resolve func(addr string) string
	plain   net.Dialer // the connections not checked
	checked net.Dialer // the others: its Control refuses the local host

	mu      sync.Mutex
	proxies map[string]bool // the "host:port" of each proxy named so far
}

// newDialGuard returns the guard of the connections of a fetcher of the
// URL configured, with resolve the tests' name resolution (nil: the
// system's).
func newDialGuard(configured string, resolve func(string) string) *dialGuard {
	g := &dialGuard{resolve: resolve, proxies: make(map[string]bool)}
	if u, err := url.Parse(configured); err == nil {
		g.anyHost = loopback(u.Hostname())
		g.home = dialAddr(u)
	}
	// As http.DefaultTransport dials.
	g.plain = net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
	g.checked = g.plain
	g.checked.Control = refuseLocalHost
	return g
}

// guard has tr's connections made by g, and tells g of the proxies tr
// names.
func (g *dialGuard) guard(tr *http.Transport) {
	tr.DialContext = g.dial
	if proxy := tr.Proxy; proxy != nil {
		tr.Proxy = func(r *http.Request) (*url.URL, error) {
			u, err := proxy(r)
			if u != nil {
				g.mu.Lock()
				g.proxies[dialAddr(u)] = true
				g.mu.Unlock()
			}
			return u, err
		}
	}
}

// dial connects to addr ("host:port") on network, refusing an address of
// the local host unless g lets addr reach it.
func (g *dialGuard) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	d := &g.checked
	if g.anyHost || strings.EqualFold(addr, g.home) || g.proxy(addr) {
		d = &g.plain
	}
	if g.resolve != nil {
		addr = g.resolve(addr)
	}
	return d.DialContext(ctx, network, addr)
}

// proxy says whether addr is that of a proxy the transport has named.
func (g *dialGuard) proxy(addr string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.proxies[addr]
}

// refuseLocalHost is the Control of a connection to address, an
// "ip:port" its host resolved to: it refuses an address of the local host.
func refuseLocalHost(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("connecting to %q: %w", address, err)
	}
	if loopbackIP(ap.Addr()) {
		return fmt.Errorf("%s is a loopback address, which a fetch reaches only from a KeysURL or Issuer on a loopback host", ap.Addr())
	}
	return nil
}

// dialAddr returns the "host:port" that http.Transport dials for u: its
// host, with its port or the default port of its scheme. (A host name not
// in ASCII is dialed in its ASCII form, which dialAddr does not write: its
// connections are then checked as another host's.)
func dialAddr(u *url.URL) string {
	host := u.Hostname()
	port := u.Port()
	if port == "" {
		switch strings.ToLower(u.Scheme) {
		case "http":
			port = "80"
		case "https":
			port = "443"
		case "socks5", "socks5h":
			port = "1080"
		}
	}
	return net.JoinHostPort(host, port)
}

// dialsByDefault returns the *http.Transport that rt is when it makes its
// connections as http.DefaultTransport does, which a dialGuard may then
// make for a clone of it: nil and http.DefaultTransport itself, when
// http.DefaultTransport is an *http.Transport, or an *http.Transport
// without a dial function of its own. Else it returns nil: rt's
// connections are rt's affair.
func dialsByDefault(rt http.RoundTripper) *http.Transport {
	if rt == nil || rt == http.DefaultTransport {
		tr, _ := http.DefaultTransport.(*http.Transport)
		return tr
	}
	tr, ok := rt.(*http.Transport)
	if !ok || tr.DialContext != nil || tr.DialTLSContext != nil || tr.Dial != nil || tr.DialTLS != nil { //nolint:staticcheck // a transport that dials with the deprecated ones dials its own way too
		return nil
	}
	return tr
}

// loopback says whether host (no port) is on the local host: "localhost",
// or an address loopbackIP says is.
func loopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && loopbackIP(ip)
}

// localName says whether host (no port) is a name of the local host:
// "localhost" or a name under it ("keys.localhost", RFC 6761 section
// 6.3), in any case, with or without the root's dot. A hop is refused to
// one as to a loopback host; an http:// URL is not accepted on one but
// "localhost" itself (loopback), since a resolver need not answer for the
// others.
func localName(host string) bool {
	h := strings.ToLower(strings.TrimSuffix(host, "."))
	return h == "localhost" || strings.HasSuffix(h, ".localhost")
}

// loopbackIP says whether a connection to ip reaches the local host: a
// loopback address (127.0.0.0/8, ::1), an unspecified one (0.0.0.0, ::),
// which a connection takes for the local host, or the IPv4-mapped form of
// either (::ffff:127.0.0.1).
func loopbackIP(ip netip.Addr) bool {
	ip = ip.Unmap()
	return ip.IsLoopback() || ip.IsUnspecified()
}
