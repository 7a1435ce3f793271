package server

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"

	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/internal/boundedfile"
)

// loadTLS reads t's files into a server configuration offering protos
// (ALPN), or returns nil when t configures no TLS. With a client CA, every
// client must present a certificate it signed.
func loadTLS(t config.TLS, protos ...string) (*tls.Config, error) {
	if !t.Enabled() {
		return nil, nil
	}
	certPEM, err := readPEM(t.CertFile)
	if err != nil {
		return nil, fmt.Errorf("tls: %w", err)
	}
	keyPEM, err := readPEM(t.KeyFile)
	if err != nil {
		return nil, fmt.Errorf("tls: %w", err)
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("tls: %s, %s: %w", t.CertFile, t.KeyFile, err)
	}
	c := &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{cert}, NextProtos: protos}
	if t.ClientCAFile != "" {
		pem, err := readPEM(t.ClientCAFile)
		if err != nil {
			return nil, fmt.Errorf("tls: client CA: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("tls: client CA: %s holds no PEM certificate", t.ClientCAFile)
		}
		c.ClientCAs, c.ClientAuth = pool, tls.RequireAndVerifyClientCert
	}
	return c, nil
}

// maxPEMFile bounds a listener's certificate, key or client CA file (a
// system's whole CA bundle is about 200 KB).
const maxPEMFile = 4 << 20

// readPEM reads a listener's certificate, key or client CA file: a
// regular file of at most maxPEMFile bytes (see boundedfile.Read).
func readPEM(path string) ([]byte, error) { return boundedfile.Read(path, maxPEMFile) }

// listenerTLS is the TLS configuration a listener starts with: each
// handshake takes the configuration in force (pick), so certificates and
// client CAs follow reloads. Whether a listener speaks TLS at all is fixed
// when it starts.
func (s *Server) listenerTLS(pick func(*state) *tls.Config) *tls.Config {
	return &tls.Config{MinVersion: tls.VersionTLS12,
		GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) {
			if c := pick(s.state.Load()); c != nil {
				return c, nil
			}
			return nil, fmt.Errorf("tls: the configuration in force has no certificate for this listener")
		}}
}
