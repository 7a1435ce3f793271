package server

import (
	"errors"
	"io"
	"net"
	"net/netip"
	"sync"
	"time"

	"github.com/pires/go-proxyproto"
)

// proxyProtocolListener reads a PROXY protocol header (version 1 or 2) on
// the connections of ln whose peer the configuration in force lists in
// proxy_protocol: such a peer must send one within timeout, and the
// connection's RemoteAddr is then the client the header names. A
// connection from a listed peer that sends anything else first, or a
// malformed header, is refused before a request is read (http.Server
// answers 400) and counted by invalid; one that closes without sending a
// byte, as a TCP health check does, is not counted. Connections from any
// other peer are not read for a header: one they send is the start of a
// malformed request.
func (s *Server) proxyProtocolListener(ln net.Listener, timeout time.Duration, invalid func()) net.Listener {
	return &headerListener{invalid: invalid, Listener: &proxyproto.Listener{
		Listener:          ln,
		ReadHeaderTimeout: timeout,
		ConnPolicy: func(o proxyproto.ConnPolicyOptions) (proxyproto.Policy, error) {
			if s.fromLoadBalancer(o.Upstream) {
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
// header: without one, every Read fails.
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

// fromLoadBalancer reports whether addr is a peer proxy_protocol lists.
func (s *Server) fromLoadBalancer(addr net.Addr) bool {
	tcp, ok := addr.(*net.TCPAddr)
	if !ok {
		return false
	}
	ip, ok := netip.AddrFromSlice(tcp.IP)
	if !ok {
		return false
	}
	ip = ip.Unmap()
	for _, p := range s.state.Load().cfg.ProxyProtocol {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}
