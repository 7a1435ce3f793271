package server

import (
	"net"
	"reflect"

	"github.com/sluice-dev/sluice/config"
)

// warnExposure logs what in cfg, served with its admin listener on admin
// and Envoy's on envoy (nil without one), exposes the server: an admin or
// Envoy listener reachable beyond this host without TLS, whose callers'
// tokens cross the network in clear (Envoy's listener has the admin
// listener's callers and TLS), and trusted_proxies that trust every peer,
// and callers that hold a token sluice's repository publishes.
func (s *Server) warnExposure(cfg *config.Config, admin, envoy net.Addr) {
	if !cfg.Admin.TLS.Enabled() {
		s.warnClear(cfg, "admin", admin, "admin listener")
		if envoy != nil {
			s.warnClear(cfg, "envoy", envoy, "Envoy listener (envoy.listen, which has the admin listener's callers and TLS)")
		}
	}
	s.warnTrustAll(cfg)
	s.warnExampleTokens(cfg)
	s.warnUnknownKeys(nil, cfg)
	s.warnLogRoom(nil, cfg)
	s.warnHosts(nil, cfg)
}

// warnClear logs that the listener on addr, named name (the log's key)
// and described as what, is reachable beyond this host without TLS.
func (s *Server) warnClear(cfg *config.Config, name string, addr net.Addr, what string) {
	tcp, ok := addr.(*net.TCPAddr)
	if !ok || tcp.IP.IsLoopback() {
		return
	}
	msg := "the " + what + " is reachable beyond this host without TLS: its callers' tokens cross the network in clear; set admin.tls, or listen on loopback behind a TLS proxy"
	if cfg.Admin.LoopbackScopes != 0 {
		// Every caller of such a proxy arrives from loopback.
		msg += " and set admin.loopback_scopes: [] (the proxy's callers would all hold loopback's " + cfg.Admin.LoopbackScopes.String() + ")"
	}
	s.log.Warn(msg, name, addr.String())
}

// warnHosts logs cfg's config.Config.HostWarning when old, the
// configuration cfg replaces (nil at the start), did not warn the same.
func (s *Server) warnHosts(old, cfg *config.Config) {
	if msg := cfg.HostWarning(); msg != "" && (old == nil || old.HostWarning() != msg) {
		s.log.Warn(msg)
	}
}

// warnLogRoom logs cfg's config.Config.LogRoomWarning when old, the
// configuration cfg replaces (nil at the start), did not warn the same.
func (s *Server) warnLogRoom(old, cfg *config.Config) {
	if msg := cfg.LogRoomWarning(); msg != "" && (old == nil || old.LogRoomWarning() != msg) {
		s.log.Warn(msg)
	}
}

// UnknownKeysWarning is what the server logs, and sluice check prints, of
// a configuration whose identity.unknown_keys is key.
const UnknownKeysWarning = "identity.unknown_keys is key: a made-up API key is a client of its own, so a client that sends a new key with each request gets fresh quota each time; keep it only behind an authentication layer that refuses the keys it does not know, or remove it to limit an unlisted key by its client's address (ip, the default)"

// warnUnknownKeys logs UnknownKeysWarning when cfg makes an unlisted API
// key a client of its own and old, the configuration cfg replaces (nil at
// the start), did not.
func (s *Server) warnUnknownKeys(old, cfg *config.Config) {
	if cfg.Identity.UnknownKeys == unknownKeysKey && (old == nil || old.Identity.UnknownKeys != unknownKeysKey) {
		s.log.Warn(UnknownKeysWarning)
	}
}

// unknownKeysKey is identity.unknown_keys's value that makes an unlisted
// API key a client of its own.
const unknownKeysKey = "key"

// warnTrustAll logs trusted_proxies that trust every peer.
func (s *Server) warnTrustAll(cfg *config.Config) {
	for _, p := range cfg.Identity.TrustedProxies {
		if p.Bits() == 0 {
			s.log.Warn("identity.trusted_proxies trusts every peer: any client chooses its own address (X-Forwarded-For) and identity headers; name the proxies in front of sluice",
				"prefix", p.String())
			return
		}
	}
}

// warnRestartOnly logs what cfg, a reload's configuration, changes of
// running, the one the process started with, that takes effect only at the
// next start: addresses, TLS on or off, connection bounds, the store. It
// warns at every reload that differs from running, and at none that is
// back to it.
func (s *Server) warnRestartOnly(running, cfg *config.Config) {
	runConns, conns := running.Connections, cfg.Connections
	runConns.StreamIdleTimeout, conns.StreamIdleTimeout = 0, 0 // the proxy's, at once
	if running.Listen != cfg.Listen || running.Admin.Listen != cfg.Admin.Listen || running.Envoy.Listen != cfg.Envoy.Listen ||
		running.TLS.Enabled() != cfg.TLS.Enabled() || running.Admin.TLS.Enabled() != cfg.Admin.TLS.Enabled() ||
		runConns != conns || running.Designer != cfg.Designer ||
		(len(running.ProxyProtocol) > 0) != (len(cfg.ProxyProtocol) > 0) {
		s.log.Warn("listener addresses, TLS and the PROXY protocol on/off, connection and designer bounds change at the next start; the running ones keep theirs (the proxy's wait for its upstream, write_timeout, applies to new requests at once)")
	}
	if !reflect.DeepEqual(storeSettings(running.Store), storeSettings(cfg.Store)) {
		s.log.Warn("the store section changes at the next start; the running store keeps its settings (a Redis password file is read again for each new connection)")
	}
}
