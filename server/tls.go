package server

import (
	"crypto/tls"
	"fmt"
)

// listenerTLS is the TLS configuration a listener starts with: each
// handshake takes the configuration in force (pick), so certificates and
// client CAs follow reloads. Whether a listener speaks TLS at all is fixed
// when it starts.
func (s *Server) listenerTLS(pick func(*state) *tls.Config) *tls.Config {
	return &tls.Config{MinVersion: tls.VersionTLS12,
		GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) {
			if c := pick(s.state.Load()); c != nil {
				return c, nil
			}
			return nil, fmt.Errorf("tls: the configuration in force has no certificate for this listener")
		}}
}
