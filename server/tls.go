package server

import (
	"crypto/tls"
	"errors"
	"sync"
	"sync/atomic"

	"github.com/sluice-dev/sluice/config"
)

// listenerTLS is the TLS configuration a listener starts with: each
// handshake takes the configuration in force (pick), so certificates and
// client CAs follow reloads. Whether a listener speaks TLS at all is fixed
// when it starts: after a reload that takes its TLS out, it keeps the last
// TLS settings it had until the next start, as the reload's warning says.
// The listener is published among s's tlsListeners, where certExpiry reads
// what it serves.
func (s *Server) listenerTLS(pick func(*state) *tls.Config) *tls.Config {
	st := s.state.Load()
	l := &tlsListener{pick: pick}
	l.last.Store(&servedTLS{config: pick(st), cfg: st.cfg})
	s.tlsListeners.add(listenerUse(st, pick(st)), l)
	return &tls.Config{MinVersion: tls.VersionTLS12,
		GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) {
			served := l.serves(s.state.Load())
			if served.config == nil {
				return nil, errNoListenerTLS
			}
			if served.config != l.last.Load().config {
				l.last.Store(served)
			}
			return served.config, nil
		}}
}

// errNoListenerTLS fails a handshake on a listener that has no TLS
// settings to serve.
var errNoListenerTLS = errors.New("tls: the configuration in force has no certificate for this listener")

// tlsListener is a listener serving TLS: what pick takes from the
// configuration in force, or while that has none, the last it served.
type tlsListener struct {
	pick func(*state) *tls.Config
	last atomic.Pointer[servedTLS]
}

// servedTLS is the TLS configuration a listener serves, and the
// configuration it is part of (whose files it was read from).
type servedTLS struct {
	config *tls.Config
	cfg    *config.Config
}

// serves returns what l serves at its next handshake with st in force.
func (l *tlsListener) serves(st *state) *servedTLS {
	if c := l.pick(st); c != nil {
		return &servedTLS{config: c, cfg: st.cfg}
	}
	return l.last.Load()
}

// listenerUse returns the use of the listener whose TLS configuration in
// st is c (sluice_tls_certificate_expiry_timestamp_seconds's use label):
// usePublic, useAdmin for the admin and Envoy listeners, which serve
// admin.tls, or "" for none of them.
func listenerUse(st *state, c *tls.Config) string {
	switch {
	case c == nil:
		return ""
	case c == st.publicTLS:
		return usePublic
	case c == st.adminTLS, c == st.envoyTLS:
		return useAdmin
	}
	return ""
}

// tlsListeners are a Server's listeners serving TLS, by use, in the order
// they started. Safe for concurrent use.
type tlsListeners struct {
	mu    sync.Mutex
	byUse map[string][]*tlsListener
}

func (ls *tlsListeners) add(use string, l *tlsListener) {
	if use == "" {
		return
	}
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if ls.byUse == nil {
		ls.byUse = map[string][]*tlsListener{}
	}
	ls.byUse[use] = append(ls.byUse[use], l)
}

// served returns what the listeners of use serve with st in force, in the
// order they started; none before they start.
func (ls *tlsListeners) served(use string, st *state) []*servedTLS {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	var out []*servedTLS
	for _, l := range ls.byUse[use] {
		if served := l.serves(st); served.config != nil {
			out = append(out, served)
		}
	}
	return out
}
