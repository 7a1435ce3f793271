package server

import (
	"crypto/tls"
	"fmt"
	"sync/atomic"
)

// listenerTLS is the TLS configuration a listener starts with: each
// handshake takes the configuration in force (pick), so certificates and
// client CAs follow reloads. Whether a listener speaks TLS at all is fixed
// when it starts: after a reload that takes its TLS out, it keeps the last
// TLS settings it had until the next start, as the reload's warning says.
func (s *Server) listenerTLS(pick func(*state) *tls.Config) *tls.Config {
	var last atomic.Pointer[tls.Config]
	last.Store(pick(s.state.Load()))
	return &tls.Config{MinVersion: tls.VersionTLS12,
		GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) {
			if c := pick(s.state.Load()); c != nil {
				last.Store(c)
				return c, nil
			}
			if c := last.Load(); c != nil {
				return c, nil
			}
			return nil, fmt.Errorf("tls: the configuration in force has no certificate for this listener")
		}}
}
