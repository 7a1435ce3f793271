package server

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"os"

	"github.com/sluice-dev/sluice/config"
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

// readPEM reads the regular file at path (or a link to one) of at most
// maxPEMFile bytes: a path that names a device, a pipe or a larger file is
// an error naming it, not a read that blocks or never ends.
func readPEM(path string) ([]byte, error) {
	if st, err := os.Stat(path); err != nil {
		return nil, err
	} else if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path) // opening a pipe would wait for a writer
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxPEMFile+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(b) > maxPEMFile {
		return nil, fmt.Errorf("%s holds more than %d bytes", path, maxPEMFile)
	}
	return b, nil
}

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
