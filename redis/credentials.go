package redis

import (
	"context"
	"fmt"
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
