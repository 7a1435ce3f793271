package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/httplimit"
)

// printStore says where decisions are kept and how sluice reaches Redis,
// never a password.
func printStore(w io.Writer, cfg *config.Config) {
	s := cfg.Store
	if s.Type != "redis" {
		line := fmt.Sprintf("STORE  memory, max_keys %d: a state each, a sliding log or concurrency limit 1 more per 8 entries of room", s.MaxKeys)
		if msg := cfg.LogRoomWarning(); msg != "" {
			line += "; WARNING: " + msg
		}
		fmt.Fprintln(w, line)
		return
	}
	r := s.Redis
	parts := []string{fmt.Sprintf("redis %s %s", r.Mode, strings.Join(r.Addresses, ", "))}
	if r.MasterName != "" {
		parts[0] += " (master set " + r.MasterName + ")"
	}
	parts = append(parts, transport(r.TLS))
	parts = append(parts, authText(r.Username, r.Password, r.PasswordFile, "read for each new connection"))
	if r.SentinelUsername != "" || r.SentinelPassword != "" || r.SentinelPasswordFile != "" {
		parts = append(parts, "Sentinels: "+authText(r.SentinelUsername, r.SentinelPassword, r.SentinelPasswordFile, "read at start"))
	}
	parts = append(parts, "on store error: "+r.OnStoreError)
	if leased(r) {
		lease := "leased quota (lease: auto)"
		if cfg.Penalty.Refusals > 0 {
			lease += ", the penalty box asked on Redis once a second per client (a box set elsewhere holds within a second)"
		}
		parts = append(parts, lease)
	}
	fmt.Fprintf(w, "STORE  %s\n", strings.Join(parts, "; "))
	for _, msg := range shareWarnings(cfg) {
		fmt.Fprintln(w, "WARNING: "+msg)
	}
}

// shareWarnings names each enforcing limit that instances deciding on
// their own shares admit more of than the limit itself while Redis is
// down (on_store_error: local): one below store.redis.instances (a
// bucket's burst below it), whose shares are rounded up to 1 unit each
// (see sluice.Limit.Scale and package redis's bounds).
func shareWarnings(cfg *config.Config) []string {
	r := cfg.Store.Redis
	n := int64(r.Instances)
	if cfg.Store.Type != "redis" || r.OnStoreError != "local" || n <= 1 {
		return nil
	}
	return limitLines(cfg, func(where string, l sluice.Limit) string {
		units, fleet := l.Burst(), n*l.Scale(1, n).Burst()
		if l.Shadow() || fleet <= units {
			return ""
		}
		what := "quantity"
		switch l.Algorithm() {
		case sluice.AlgorithmTokenBucket, sluice.AlgorithmLeakyBucket, sluice.AlgorithmGCRA:
			what = "burst"
		}
		msg := fmt.Sprintf("%s (%s): %s %d is below store.redis.instances (%d): while Redis is down each instance decides by its share, at least 1, so together they admit ",
			l.Name(), where, what, units, n)
		switch {
		case l.Algorithm() == sluice.AlgorithmConcurrency:
			return msg + fmt.Sprintf("%d at once, not %d (%d with those Redis held)", fleet, units, units+fleet)
		case what == "burst":
			return msg + fmt.Sprintf("a burst of %d, not %d", fleet, units)
		}
		return msg + fmt.Sprintf("%d per %s, not %d", fleet, httplimit.WindowOf(l), units)
	})
}

// leased reports whether some limit leases quota from r.
func leased(r config.Redis) bool {
	if r.Lease == "auto" {
		return true
	}
	for _, mode := range r.Leases {
		if mode == "auto" {
			return true
		}
	}
	return false
}

// authText says how a client authenticates, never with the password:
// "user sluice, password from /run/secrets/redis (when)".
func authText(user, password, file, when string) string {
	auth := "no password"
	switch {
	case file != "":
		auth = "password from " + file + " (" + when + ")"
	case password != "":
		auth = "password in the configuration"
	}
	if user != "" {
		auth = "user " + user + ", " + auth
	}
	return auth
}

// printUpstream says where admitted requests go, over what, with which
// Host, and how long an answer may take to start and stay silent.
func printUpstream(w io.Writer, cfg *config.Config) {
	if cfg.Upstream == "" {
		fmt.Fprintln(w, "UPSTREAM  none: the demo upstream answers")
		return
	}
	how := "plain TCP"
	if strings.HasPrefix(cfg.Upstream, "h2c://") {
		how = "HTTP/2 without TLS (h2c)"
	}
	if strings.HasPrefix(cfg.Upstream, "https://") {
		t := cfg.UpstreamTLS
		t.Enabled = true // https: the system's roots unless upstream_tls says otherwise
		how = transport(t)
	}
	host := "its own Host"
	if cfg.PreserveHost {
		host = "the client's Host"
	}
	line := fmt.Sprintf("UPSTREAM  %s; %s; %s; answers start within %v (else 504), streams end after %v of silence",
		cfg.Upstream, how, host, cfg.Connections.WriteTimeout, cfg.Connections.StreamIdleTimeout)
	if msg := cfg.HostWarning(); msg != "" {
		line += "; WARNING: " + msg
	}
	fmt.Fprintln(w, line)
}

// transport describes a client TLS configuration.
func transport(t config.ClientTLS) string {
	if !t.Enabled {
		return "plain TCP"
	}
	s := "TLS, server verified by " + or(t.CAFile, "the system's roots")
	if t.ServerName != "" {
		s += " as " + t.ServerName
	}
	if t.CertFile != "" {
		s += ", client certificate " + t.CertFile
	}
	return s
}

// or returns s, or def when s is empty.
func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
