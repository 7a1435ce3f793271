package redis

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"sync"
	"syscall"

	"github.com/redis/rueidis"
)

// authCredentials returns the rueidis AUTH function of o.Credentials. In
// sentinel mode with Sentinel credentials of their own, a connection to a
// Sentinel gets those instead: sentinel's dialer, which rueidis uses for
// Sentinels alone, records the addresses it connects to, and the function
// tells a Sentinel's connection by its remote address.
func (o Options) authCredentials(sentinel *rueidis.SentinelOption) func(rueidis.AuthCredentialsContext) (rueidis.AuthCredentials, error) {
	creds := o.Credentials
	var sentinels *addrSet
	if o.Mode == ModeSentinel && (o.SentinelUsername != "" || o.SentinelPassword != "") {
		sentinels = &addrSet{m: map[string]bool{}}
		sentinel.Dialer.ControlContext = func(_ context.Context, _, address string, _ syscall.RawConn) error {
			sentinels.add(address)
			return nil
		}
	}
	return func(c rueidis.AuthCredentialsContext) (rueidis.AuthCredentials, error) {
		if sentinels != nil && c.Address != nil && sentinels.has(c.Address.String()) {
			return rueidis.AuthCredentials{Username: o.SentinelUsername, Password: o.SentinelPassword}, nil
		}
		u, p, err := creds()
		if err != nil {
			return rueidis.AuthCredentials{}, fmt.Errorf("redis: credentials: %w", err)
		}
		return rueidis.AuthCredentials{Username: u, Password: p}, nil
	}
}

// addrSet is a set of "ip:port" addresses, safe for concurrent use. It
// holds the Sentinels' addresses: a handful, however often they are
// dialed.
type addrSet struct {
	mu sync.Mutex
	m  map[string]bool
}

func (s *addrSet) add(a string) { s.mu.Lock(); s.m[a] = true; s.mu.Unlock() }

func (s *addrSet) has(a string) bool { s.mu.Lock(); defer s.mu.Unlock(); return s.m[a] }

// dialWithRoots returns rueidis's dial function for TLS connections whose
// server is verified by the pool roots returns at each dial: the
// connection's TLS configuration (the servers' or the Sentinels') with
// that pool as RootCAs, verified as crypto/tls always verifies, against
// the name of the address dialed unless the configuration names one.
func dialWithRoots(roots func() (*x509.CertPool, error)) func(context.Context, string, *net.Dialer, *tls.Config) (net.Conn, error) {
	return func(ctx context.Context, dst string, d *net.Dialer, tc *tls.Config) (net.Conn, error) {
		if tc == nil {
			return d.DialContext(ctx, "tcp", dst)
		}
		pool, err := roots()
		if err != nil {
			return nil, fmt.Errorf("redis: TLS roots: %w", err)
		}
		tc = tc.Clone()
		tc.RootCAs = pool
		td := tls.Dialer{NetDialer: d, Config: tc}
		return td.DialContext(ctx, "tcp", dst)
	}
}
