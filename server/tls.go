package server

import (
	"crypto/tls"
	"errors"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/sluice-dev/sluice/config"
)

// listenerTLS is the TLS configuration a listener starts with: each
// handshake takes the configuration in force (pick), so certificates and
// client CAs follow reloads. Whether a listener speaks TLS at all is fixed
// when it starts: after a reload that takes its TLS out, it keeps the TLS
// settings of the last configuration in force that had them (s's
// tlsListeners keep them) until the next start, as the reload's warning
// says. The listener is published among s's tlsListeners, where
// certExpiry reads what it serves.
func (s *Server) listenerTLS(pick func(*state) *tls.Config) *tls.Config {
	l := &tlsListener{pick: pick}
	s.tlsListeners.add(l, s.state.Load())
	return &tls.Config{MinVersion: tls.VersionTLS12,
		GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) {
			served := s.tlsListeners.serves(l, s.state.Load())
			if served == nil {
				return nil, errNoListenerTLS
			}
			return served.config, nil
		}}
}

// errNoListenerTLS fails a handshake on a listener that has no TLS
// settings to serve.
var errNoListenerTLS = errors.New("tls: the configuration in force has no certificate for this listener")

// tlsListener is a listener serving TLS: what pick takes from the
// configuration in force, or while that has none, from the last one in
// force that had some (tlsListeners.serves).
type tlsListener struct {
	pick func(*state) *tls.Config
}

// servedTLS is the TLS configuration a listener serves, and the
// configuration it is part of (whose files it was read from).
type servedTLS struct {
	config *tls.Config
	cfg    *config.Config
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
// they started, and what they serve while the configuration in force has
// no TLS for them. Safe for concurrent use.
type tlsListeners struct {
	mu    sync.Mutex
	byUse map[string][]*tlsListener
	// kept are, newest first, configurations that were in force (their
	// cfg and listeners' TLS only), each while it is the last one in force
	// with TLS for one of the listeners: at most three. Stored under mu;
	// a slice stored is never changed.
	kept atomic.Pointer[[]*state]
}

// inForce records st as the configuration in force: a listener it has
// TLS for keeps serving that TLS while later configurations have none for
// it. It is to be called with each configuration as it comes into force,
// in that order, before the next one comes in (New, Reload).
func (ls *tlsListeners) inForce(st *state) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	var kept []*state
	candidates := []*state{{cfg: st.cfg, publicTLS: st.publicTLS, adminTLS: st.adminTLS, envoyTLS: st.envoyTLS}}
	if old := ls.kept.Load(); old != nil {
		candidates = append(candidates, *old...)
	}
	for _, c := range candidates {
		if !superseded(c, kept) {
			kept = append(kept, c)
		}
	}
	ls.kept.Store(&kept)
}

// superseded reports whether each listener st has TLS for has TLS in one
// of newer too, so that no listener serves st's; true when st has none.
func superseded(st *state, newer []*state) bool {
	for i, c := range listenersTLS(st) {
		if c != nil && !slices.ContainsFunc(newer, func(n *state) bool { return listenersTLS(n)[i] != nil }) {
			return false
		}
	}
	return true
}

// listenersTLS returns st's TLS configurations of the public, admin and
// Envoy listeners, each nil when st has none.
func listenersTLS(st *state) [3]*tls.Config {
	return [3]*tls.Config{st.publicTLS, st.adminTLS, st.envoyTLS}
}

// serves returns what l serves at its next handshake with st in force,
// nil when it has nothing to serve.
func (ls *tlsListeners) serves(l *tlsListener, st *state) *servedTLS {
	if from := ls.source(l, st); from != nil {
		return &servedTLS{config: l.pick(from), cfg: from.cfg}
	}
	return nil
}

// source returns the configuration l serves from with st in force: st
// when l.pick takes TLS from it, or else the newest kept that it takes
// TLS from; nil when there is none.
func (ls *tlsListeners) source(l *tlsListener, st *state) *state {
	if l.pick(st) != nil {
		return st
	}
	if kept := ls.kept.Load(); kept != nil {
		for _, k := range *kept {
			if l.pick(k) != nil {
				return k
			}
		}
	}
	return nil
}

// add publishes l, which starts with st in force, under the use of what it
// serves; not when it serves none of them.
func (ls *tlsListeners) add(l *tlsListener, st *state) {
	from := ls.source(l, st)
	if from == nil {
		return
	}
	use := listenerUse(from, l.pick(from))
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
		if served := ls.serves(l, st); served != nil {
			out = append(out, served)
		}
	}
	return out
}
