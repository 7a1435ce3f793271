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

// maxCertFile bounds a certificate or CA file read at a scrape, as the
// configuration bounds it (a system's whole CA bundle is about 200 KB).
const maxCertFile = 4 << 20

// certExpiry exports sluice_tls_certificate_expiry_timestamp_seconds: for
// each use of TLS the configuration names, when its certificate expires,
// in seconds since the Unix epoch, read when Prometheus scrapes it. A
// certificate with its chain, or a bundle of CAs, expires with the first
// of its certificates to expire.
//
// Each is read where the next handshake takes it, so that the series
// follows a renewal and an alert fires before a handshake fails:
//   - the listeners' certificates are those the configuration in force
//     serves (loaded at its start or its last reload, which a changed file
//     sets off): a renewed file that does not load is not served, and
//     the certificate still served is the one reported;
//   - client certificates and CA files are read from their files at the
//     scrape: sluice reads them again for each connection (Redis's, the
//     upstream's client certificate) or at each reload, which their
//     change sets off; the upstream's and admin's files are those of the
//     configuration in force, Redis's those of the store section sluice
//     started with (a reload changes the store at the next start).
//
// A use that is not configured has no series; nor has one whose file
// cannot be read or holds no certificate at the scrape, which a reload
// reading it refuses (sluice_config_last_reload_successful 0) and a
// connection reading it fails on. So that such a file does not go
// unnoticed, sluice_tls_certificate_unreadable says, for each use read
// from a file at the scrape, 1 when it cannot be read or holds no
// certificate and 0 when it can.
type certExpiry struct {
	s          *Server
	desc       *prometheus.Desc
	unreadable *prometheus.Desc
}

func newCertExpiry(s *Server) *certExpiry {
	return &certExpiry{s: s,
		desc: prometheus.NewDesc("sluice_tls_certificate_expiry_timestamp_seconds",
			"When the certificate of each use of TLS expires (the first of a chain or a bundle of CAs to expire), in seconds since the Unix epoch, read at each scrape; use: public, admin, admin-client-ca, upstream-client, upstream-ca, redis-client, redis-ca. No series for a use not configured, or whose file cannot be read (see sluice_tls_certificate_unreadable).",
			[]string{"use"}, nil),
		unreadable: prometheus.NewDesc("sluice_tls_certificate_unreadable",
			"1 when the file of a use of TLS read at each scrape (admin-client-ca, upstream-client, upstream-ca, redis-client, redis-ca) cannot be read or holds no certificate, so that the next connection or reload reading it fails; 0 when it can. No series for a use not configured.",
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
	file := func(use, name string) {
		if name == "" {
			return
		}
		notAfter := fileExpiry(name)
		send(use, notAfter)
		unreadable := 0.0
		if notAfter.IsZero() {
			unreadable = 1
		}
		ch <- prometheus.MustNewConstMetric(c.unreadable, prometheus.GaugeValue, unreadable, use)
	}
	send(usePublic, servedExpiry(st.publicTLS))
	send(useAdmin, servedExpiry(st.adminTLS))
	file(useAdminClientCA, st.cfg.Admin.TLS.ClientCAFile)
	clientFiles := func(t config.ClientTLS, client, ca string) {
		if t.Enabled {
			file(client, t.CertFile)
			file(ca, t.CAFile)
		}
	}
	clientFiles(st.cfg.UpstreamTLS, useUpstreamClient, useUpstreamCA)
	if store := c.s.opts.Config.Store; store.Type == "redis" {
		clientFiles(store.Redis.TLS, useRedisClient, useRedisCA)
	}
}

// servedExpiry returns when the certificate c serves expires, or the zero
// Time when c serves none.
func servedExpiry(c *tls.Config) time.Time {
	if c == nil || len(c.Certificates) == 0 {
		return time.Time{}
	}
	var first time.Time
	for _, der := range c.Certificates[0].Certificate {
		cert, err := x509.ParseCertificate(der)
		if err != nil {
			return time.Time{}
		}
		if first.IsZero() || cert.NotAfter.Before(first) {
			first = cert.NotAfter
		}
	}
	return first
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
		if first.IsZero() || cert.NotAfter.Before(first) {
			first = cert.NotAfter
		}
	}
	return first
}
