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
		fmt.Fprintf(w, "STORE  memory, at most %d keys\n", s.MaxKeys)
		return
	}
	r := s.Redis
	parts := []string{fmt.Sprintf("redis %s %s", r.Mode, strings.Join(r.Addresses, ", "))}
	if r.MasterName != "" {
		parts[0] += " (master set " + r.MasterName + ")"
	}
	if t := r.TLS; !t.Enabled {
		parts = append(parts, "plain TCP")
	} else {
		tls := "TLS, server verified by " + or(t.CAFile, "the system's roots")
		if t.ServerName != "" {
			tls += " as " + t.ServerName
		}
		if t.CertFile != "" {
			tls += ", client certificate " + t.CertFile
		}
		parts = append(parts, tls)
	}
	auth := "no password"
	switch {
	case r.PasswordFile != "":
		auth = "password from " + r.PasswordFile + " (read for each new connection)"
	case r.Password != "":
		auth = "password in the configuration"
	}
	if r.Username != "" {
		auth = "user " + r.Username + ", " + auth
	}
	parts = append(parts, auth, "on store error: "+r.OnStoreError)
	fmt.Fprintf(w, "STORE  %s\n", strings.Join(parts, "; "))
}

// or returns s, or def when s is empty.
func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
