package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/sluice-dev/sluice/config"
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
	fmt.Fprintf(w, "UPSTREAM  %s; %s; %s; answers start within %v (else 504), streams end after %v of silence\n",
		cfg.Upstream, how, host, cfg.Connections.WriteTimeout, cfg.Connections.StreamIdleTimeout)
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
