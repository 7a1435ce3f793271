package config

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"

	"github.com/sluice-dev/sluice/internal/boundedfile"
)

// maxPEMFile bounds a listener's certificate, key or client CA file (a
// system's whole CA bundle is about 200 KB).
const maxPEMFile = 4 << 20

// Load reads t's files into a server configuration offering protos
// (ALPN), or returns nil when t configures no TLS. With a client CA, every
// client must present a certificate it signed. Each file must be a regular
// file of at most 4 MiB.
func (t TLS) Load(protos ...string) (*tls.Config, error) {
	if !t.Enabled() {
		return nil, nil
	}
	certPEM, err := boundedfile.Read(t.CertFile, maxPEMFile)
	if err != nil {
		return nil, fmt.Errorf("cert_file: %w", err)
	}
	keyPEM, err := boundedfile.Read(t.KeyFile, maxPEMFile)
	if err != nil {
		return nil, fmt.Errorf("key_file: %w", err)
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("cert_file %s with key_file %s: %w", t.CertFile, t.KeyFile, err)
	}
	c := &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{cert}, NextProtos: protos}
	if t.ClientCAFile != "" {
		pem, err := boundedfile.Read(t.ClientCAFile, maxPEMFile)
		if err != nil {
			return nil, fmt.Errorf("client_ca_file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("client_ca_file: %s holds no PEM certificate", t.ClientCAFile)
		}
		c.ClientCAs, c.ClientAuth = pool, tls.RequireAndVerifyClientCert
	}
	return c, nil
}
