package server

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/internal/boundedfile"
)

// The values of sluice_tls_certificate_expiry_timestamp_seconds's use
// label: what a certificate, or a bundle of CAs, is for.
const (
	usePublic         = "public"          // the public listener's certificate (tls)
	useAdmin          = "admin"           // the admin and Envoy listeners' (admin.tls)
	useAdminClientCA  = "admin-client-ca" // the CAs of the admin listener's clients (admin.tls.client_ca_file)
	useUpstreamClient = "upstream-client" // the certificate presented to the upstream (upstream_tls)
	useUpstreamCA     = "upstream-ca"     // the CAs of the upstream's certificate (upstream_tls.ca_file)
	useRedisClient    = "redis-client"    // the certificate presented to Redis (store.redis.tls)
	useRedisCA        = "redis-ca"        // the CAs of Redis's certificate (store.redis.tls.ca_file)
)

// maxCertFile bounds a certificate or CA file read at a scrape: the
// largest bound the configuration sets, a listener's (a system's whole CA
// bundle is about 200 KB). Redis's and the upstream's files are held to
// 1 MiB where they are loaded, so one of 1 to 4 MiB has its expiry
// reported here though it cannot be used.
const maxCertFile = 4 << 20

// certExpiry exports sluice_tls_certificate_expiry_timestamp_seconds: for
// each use of TLS the configuration names, when its certificate expires,
// in seconds since the Unix epoch, read when Prometheus scrapes it. A
// certificate with its chain, or a bundle of CAs, expires with the first
// of its certificates to expire.
//
// Each is read where the next handshake takes it, so that the series
// follows a renewal and an alert fires before a handshake fails:
//   - the listeners' certificates, and the admin listener's client CA
//     file, are those each listener serves (tlsListeners): the
//     configuration in force's (loaded at its start or its last reload,
//     which a changed file sets off), so that a renewed file that does not
//     load is not reported; after a reload that takes a listener's TLS
//     out, that of the last configuration in force that had it, which it
//     keeps serving until the next start. A listener that does not serve TLS, or has not started, has
//     none, even if the configuration in force names one;
//   - client certificates are the pair the next connection presents
//     (config.ClientTLS.Presented): the pair their files hold at
//     the scrape, or when cert_file and key_file no longer load together,
//     the last pair that did, which sluice presents instead;
//   - CA files are read from their files at the scrape: sluice reads them
//     again for each connection (Redis's) or at each reload, which their
//     change sets off.
//
// The upstream's files are those of the configuration in force, Redis's
// those of the store section sluice started with (a reload changes the
// store at the next start).
//
// A use that is not configured has no series; nor has one whose file
// cannot be read or holds no certificate at the scrape, which a reload
// reading it refuses (sluice_config_last_reload_successful 0) and a
// connection reading it fails on, nor a client certificate with no pair
// ever loaded. So that such a file does not go unnoticed,
// sluice_tls_certificate_unreadable says, for each use read from files at
// the scrape, 1 when they cannot be read, hold no certificate or, for a
// client certificate, no pair of certificate and key, and 0 when they can.
type certExpiry struct {
	s          *Server
	desc       *prometheus.Desc
	unreadable *prometheus.Desc
}

func newCertExpiry(s *Server) *certExpiry {
	return &certExpiry{s: s,
		desc: prometheus.NewDesc("sluice_tls_certificate_expiry_timestamp_seconds",
			"When the certificate of each use of TLS expires (the first of a chain or a bundle of CAs to expire), in seconds since the Unix epoch, read at each scrape; use: public, admin (as the listeners serve them, until the next start after a reload that takes their TLS out), admin-client-ca, upstream-client, upstream-ca, redis-client, redis-ca (for a client certificate, the one the next connection presents). No series for a use not configured, or whose file cannot be read (see sluice_tls_certificate_unreadable).",
			[]string{"use"}, nil),
		unreadable: prometheus.NewDesc("sluice_tls_certificate_unreadable",
			"1 when the files of a use of TLS read at each scrape (admin-client-ca, upstream-client, upstream-ca, redis-client, redis-ca) cannot be read, hold no certificate or, for a client certificate, no certificate that goes with its key, so that the next connection or reload reading them fails or presents the last client certificate that loaded; 0 when they can. No series for a use not configured.",
			[]string{"use"}, nil)}
}

// Describe implements prometheus.Collector.
func (c *certExpiry) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.desc
	ch <- c.unreadable
}

// Collect implements prometheus.Collector.
func (c *certExpiry) Collect(ch chan<- prometheus.Metric) {
	st := c.s.state.Load()
	if st == nil {
		return
	}
	send := func(use string, notAfter time.Time) {
		if !notAfter.IsZero() {
			ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, float64(notAfter.Unix()), use)
		}
	}
	unreadable := func(use string, failed bool) {
		v := 0.0
		if failed {
			v = 1
		}
		ch <- prometheus.MustNewConstMetric(c.unreadable, prometheus.GaugeValue, v, use)
	}
	file := func(use, name string) {
		if name == "" {
			return
		}
		notAfter := fileExpiry(name)
		send(use, notAfter)
		unreadable(use, notAfter.IsZero())
	}
	listeners := &c.s.tlsListeners
	for _, use := range []string{usePublic, useAdmin} {
		var first time.Time
		for _, served := range listeners.served(use, st) {
			first = sooner(first, chainExpiry(served.config.Certificates))
		}
		send(use, first)
	}
	if served := listeners.served(useAdmin, st); len(served) > 0 {
		file(useAdminClientCA, served[0].cfg.Admin.TLS.ClientCAFile)
	}
	clientFiles := func(t config.ClientTLS, presented func() (*tls.Certificate, error), client, ca string) {
		if !t.Enabled {
			return
		}
		if t.CertFile != "" {
			cert, err := presented()
			if cert != nil {
				send(client, chainExpiry([]tls.Certificate{*cert}))
			}
			unreadable(client, err != nil)
		}
		file(ca, t.CAFile)
	}
	clientFiles(st.cfg.UpstreamTLS, func() (*tls.Certificate, error) { return st.cfg.UpstreamTLS.Presented(st.upstreamTLS) },
		useUpstreamClient, useUpstreamCA)
	if store := c.s.opts.Config.Store; store.Type == "redis" {
		presented := c.s.opts.StoreClientCertificate
		if presented == nil { // a store opened elsewhere from these files
			presented = func() (*tls.Certificate, error) { return store.Redis.TLS.Presented(nil) }
		}
		clientFiles(store.Redis.TLS, presented, useRedisClient, useRedisCA)
	}
}

// chainExpiry returns when the first certificate of the first chain of
// certs expires, or the zero Time when there is none.
func chainExpiry(certs []tls.Certificate) time.Time {
	if len(certs) == 0 {
		return time.Time{}
	}
	var first time.Time
	for _, der := range certs[0].Certificate {
		cert, err := x509.ParseCertificate(der)
		if err != nil {
			return time.Time{}
		}
		first = sooner(first, cert.NotAfter)
	}
	return first
}

// sooner returns the sooner of a and b, a zero Time being none.
func sooner(a, b time.Time) time.Time {
	if a.IsZero() || !b.IsZero() && b.Before(a) {
		return b
	}
	return a
}

// fileExpiry returns when the first certificate of the PEM file name to
// expire does, or the zero Time when name is empty, cannot be read or
// holds no certificate.
func fileExpiry(name string) time.Time {
	if name == "" {
		return time.Time{}
	}
	b, err := boundedfile.Read(name, maxCertFile)
	if err != nil {
		return time.Time{}
	}
	var first time.Time
	for {
		var block *pem.Block
		if block, b = pem.Decode(b); block == nil {
			break
		}
		if block.Type != "CERTIFICATE" {
			continue
		}
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			continue // as x509.CertPool.AppendCertsFromPEM skips it
		}
		first = sooner(first, cert.NotAfter)
	}
	return first
}
