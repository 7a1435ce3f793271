package config

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"sync"

	"go.yaml.in/yaml/v3"
)

// ClientTLS configures TLS where sluice is the client: to Redis
// (store.redis.tls) and to the upstream (upstream_tls). Paths are relative
// to the configuration file.
type ClientTLS struct {
	// Enabled makes every connection use TLS. A tls: section (or tls:
	// true, or tls: {}) enables it; tls: false or no section leaves
	// connections in plain TCP; a tls: with nothing under it is refused.
	Enabled bool
	// CAFile is a PEM bundle of the CAs that sign the server's
	// certificate. Empty: the system's roots. Redis's store reads it again
	// for every new connection (Roots), the upstream's at every reload.
	CAFile string
	// CertFile and KeyFile are the client certificate (chain) and key that
	// sluice presents, for a server that asks for one (Redis's
	// tls-auth-clients). Both or neither.
	CertFile, KeyFile string
	// ServerName is the name the server's certificate must bear. Empty:
	// the host of the address dialed.
	ServerName string
}

// Load reads t's files into a client configuration, or returns nil when t
// is not Enabled. The certificate of every server is verified. The client
// certificate is read now, to report a bad one, and again at every
// handshake, so that a renewed one (cert-manager, a rotated Secret) is
// presented from the next connection on; a handshake whose files no longer
// hold a valid pair presents the last good one.
func (t ClientTLS) Load() (*tls.Config, error) {
	if !t.Enabled {
		return nil, nil
	}
	c := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: t.ServerName}
	if t.CAFile != "" {
		var err error
		if c.RootCAs, err = t.Roots(); err != nil {
			return nil, err
		}
	}
	if t.CertFile != "" {
		cert, err := t.clientCertificate()
		if err != nil {
			return nil, err
		}
		var mu sync.Mutex
		last := &cert
		c.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
			mu.Lock()
			defer mu.Unlock()
			if cert, err := t.clientCertificate(); err == nil {
				last = &cert
			}
			return last, nil
		}
	}
	return c, nil
}

// Presented returns the client certificate that the next handshake of c,
// a configuration Load returned for t, presents — the pair t's files hold
// now, or, while they hold none, the last pair that loaded from them — and
// the error that says why t's files hold no valid pair (nil when they
// do). With c nil (no configuration of t was loaded: a client built
// elsewhere from t's files) it returns the pair the files hold, or nil and
// the error. It returns nil, nil when t names no client certificate.
func (t ClientTLS) Presented(c *tls.Config) (*tls.Certificate, error) {
	if !t.Enabled || t.CertFile == "" {
		return nil, nil
	}
	cert, err := t.clientCertificate()
	if c == nil || c.GetClientCertificate == nil {
		if err != nil {
			return nil, err
		}
		return &cert, nil
	}
	last, _ := c.GetClientCertificate(&tls.CertificateRequestInfo{})
	return last, err
}

// Roots reads the CA file into a pool; nil (the system's roots) without
// one. Read for each new connection (redis.Options.TLSRoots), it lets a CA
// rotated on disk be trusted without a restart.
func (t ClientTLS) Roots() (*x509.CertPool, error) {
	if t.CAFile == "" {
		return nil, nil
	}
	pem, err := readBounded(t.CAFile, maxPEMBytes)
	if err != nil {
		return nil, &fileError{key: "ca_file", label: "tls: CA", err: err}
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, &fileError{key: "ca_file", label: "tls: CA", err: fmt.Errorf("%s holds no PEM certificate", t.CAFile)}
	}
	return pool, nil
}

// clientCertificate reads the client certificate and its key.
func (t ClientTLS) clientCertificate() (tls.Certificate, error) {
	certPEM, err := readBounded(t.CertFile, maxPEMBytes)
	if err != nil {
		return tls.Certificate{}, &fileError{key: "cert_file", label: "tls: client certificate", err: err}
	}
	keyPEM, err := readBounded(t.KeyFile, maxPEMBytes)
	if err != nil {
		return tls.Certificate{}, &fileError{key: "key_file", label: "tls: client certificate", err: err}
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("tls: client certificate: %w", err)
	}
	return cert, nil
}

// clientTLS decodes a client tls: true, false, or a section of files
// ({}: the system's roots). A tls: with nothing under it (null) is
// refused: TLS on or off, it would be a guess at what was meant.
func (d *decoder) clientTLS(n *yaml.Node, path string, t *ClientTLS) {
	if n.Tag == "!!null" {
		d.Errorf(n, path, "empty: write true (or {}) for TLS with the system's roots, false for none, or its files (ca_file, cert_file, key_file, server_name)")
		return
	}
	if n.Kind == yaml.ScalarNode {
		t.Enabled = d.Bool(n, path)
		return
	}
	t.Enabled = d.Mapping(n, path, map[string]field{
		"ca_file":     func(n *yaml.Node, p string) { t.CAFile = d.file(n, p) },
		"cert_file":   func(n *yaml.Node, p string) { t.CertFile = d.file(n, p) },
		"key_file":    func(n *yaml.Node, p string) { t.KeyFile = d.file(n, p) },
		"server_name": func(n *yaml.Node, p string) { t.ServerName = d.Str(n, p) },
	})
	if (t.CertFile == "") != (t.KeyFile == "") {
		d.Errorf(n, path, "cert_file and key_file go together")
		return
	}
	if d.unread {
		return
	}
	if _, err := t.Load(); err != nil {
		d.tlsError(n, path, err)
	}
}
