package redis

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
)

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
