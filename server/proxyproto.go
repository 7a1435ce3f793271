package server

import (
	"errors"
	"io"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pires/go-proxyproto"

	"github.com/sluice-dev/sluice/config"
)

// proxyProtocolListener reads a PROXY protocol header (version 1 or 2) on
// the connections of ln whose peer the configuration in force lists in
// proxy_protocol: such a peer must send one within timeout, and the
// connection's RemoteAddr is then the client the header names (see
// headerConn.RemoteAddr), its LocalAddr still ln's socket (see
// headerConn.LocalAddr). A connection from a listed peer that sends
// anything else first, or a malformed header, is refused before a request
// is read (http.Server answers 400) and counted by invalid; one that
// closes without sending a byte, as a TCP health check does, is not
// counted. Connections from any other peer are not read for a header: one
// they send is the start of a malformed request.
//
// The list follows reloads, but whether the listener reads headers at all
// is fixed when it starts, as its TLS is (listenerTLS): after a reload
// that takes proxy_protocol out, it keeps reading the headers of the peers
// it listed last until the next start, as the reload's warning says, so
// that a balancer still sending them is not refused every request.
func (s *Server) proxyProtocolListener(ln net.Listener, timeout time.Duration, invalid func()) net.Listener {
	var last atomic.Pointer[config.Config] // the last configuration in force that listed peers
	peers := func() []netip.Prefix {
		if cfg := s.state.Load().cfg; len(cfg.ProxyProtocol) > 0 && last.Load() != cfg {
			last.Store(cfg)
		}
		if cfg := last.Load(); cfg != nil {
			return cfg.ProxyProtocol
		}
		return nil
	}
	peers() // the list the listener starts with
	return &headerListener{invalid: invalid, Listener: &proxyproto.Listener{
		Listener:          ln,
		ReadHeaderTimeout: timeout,
		ConnPolicy: func(o proxyproto.ConnPolicyOptions) (proxyproto.Policy, error) {
			if fromLoadBalancer(o.Upstream, peers()) {
				return proxyproto.USE, nil // required by headerConn, which can tell a bare close from a missing header
			}
			return proxyproto.SKIP, nil
		},
	}}
}

// errNoProxyHeader refuses a listed peer's connection without a header.
var errNoProxyHeader = errors.New("server: a proxy_protocol peer's connection did not start with a PROXY header")

// headerListener wraps the connections of listed peers in headerConns.
type headerListener struct {
	net.Listener
	invalid func()
}

func (l *headerListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if pc, ok := c.(*proxyproto.Conn); ok {
		return &headerConn{Conn: pc, invalid: l.invalid}, err
	}
	return c, err
}

// headerConn is a listed peer's connection, which must start with a PROXY
// header: without one, every Read fails, and what is written (http.Server's
// 400) goes to the peer all the same.
type headerConn struct {
	*proxyproto.Conn
	first   sync.Once
	refused error
	invalid func()
}

func (c *headerConn) Read(b []byte) (n int, err error) {
	first := false
	c.first.Do(func() {
		first = true
		header := c.ProxyHeader() // reads the header: nil when missing or malformed
		n, err = c.Conn.Read(b)
		if header == nil && (n > 0 || !errors.Is(err, io.EOF)) { // not a bare close, as a TCP health check's
			c.refused = errNoProxyHeader
			if err != nil {
				c.refused = err // the header's own error
			}
			c.invalid()
		}
	})
	if c.refused != nil {
		return 0, c.refused
	}
	if first {
		return n, err
	}
	return c.Conn.Read(b)
}

// LocalAddr returns the address of the socket the connection was accepted
// on, not the destination a header names: a header of any family names
// the client (RemoteAddr) alone, so that a header naming no client with
// an IP address (UNKNOWN, LOCAL or AF_UNIX; HAProxy sends PROXY
// UNKNOWN or LOCAL for a client of a unix@ bind) makes no TCP connection
// pass for one accepted on a Unix-domain socket, whose peers
// identity.trusted_proxies' "unix:" trusts.
func (c *headerConn) LocalAddr() net.Addr { return c.Conn.Raw().LocalAddr() }

// RemoteAddr returns the client the PROXY header names. A header that
// names no client with an IP address — version 1's UNKNOWN, version 2's
// LOCAL command (HAProxy's for a client of a unix@ bind, and for its own
// health checks), or the AF_UNIX family — makes a client
// without an address: a Unix address without a name, never the balancer's
// own address, which identity.trusted_proxies may list (the client would
// then name itself in X-Forwarded-For), nor the source path an AF_UNIX
// header carries, which the client chose (it binds its socket before
// connecting) and which may read as an address ("198.51.100.7:1") to
// whatever parses RemoteAddr. Without a header (missing or malformed, and
// the connection refused) it is the peer's address: go-proxyproto refuses
// a version 2 header of the PROXY command and the UNSPEC family as
// malformed.
func (c *headerConn) RemoteAddr() net.Addr {
	h := c.ProxyHeader()
	if h == nil {
		return c.Conn.Raw().RemoteAddr()
	}
	if h.Command.IsProxy() && (h.TransportProtocol.IsIPv4() || h.TransportProtocol.IsIPv6()) && h.SourceAddr != nil {
		return h.SourceAddr
	}
	return &net.UnixAddr{Net: "unix"}
}

// Write writes b to the connection; once the connection is refused, past
// proxyproto.Conn, which would fail it with a malformed header's error.
func (c *headerConn) Write(b []byte) (int, error) {
	if c.refused != nil {
		return c.Conn.Raw().Write(b)
	}
	return c.Conn.Write(b)
}

// fromLoadBalancer reports whether addr is one of peers, the load
// balancers proxy_protocol lists.
func fromLoadBalancer(addr net.Addr, peers []netip.Prefix) bool {
	tcp, ok := addr.(*net.TCPAddr)
	if !ok {
		return false
	}
	ip, ok := netip.AddrFromSlice(tcp.IP)
	if !ok {
		return false
	}
	ip = ip.Unmap()
	for _, p := range peers {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}
