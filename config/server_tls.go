package config

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"

	"github.com/sluice-dev/sluice/internal/boundedfile"
	"go.yaml.in/yaml/v3"
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
		return nil, &fileError{key: "cert_file", label: "cert_file", err: err}
	}
	keyPEM, err := boundedfile.Read(t.KeyFile, maxPEMFile)
	if err != nil {
		return nil, &fileError{key: "key_file", label: "key_file", err: err}
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("cert_file %s with key_file %s: %w", t.CertFile, t.KeyFile, err)
	}
	c := &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{cert}, NextProtos: protos}
	if t.ClientCAFile != "" {
		pem, err := boundedfile.Read(t.ClientCAFile, maxPEMFile)
		if err != nil {
			return nil, &fileError{key: "client_ca_file", label: "client_ca_file", err: err}
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, &fileError{key: "client_ca_file", label: "client_ca_file", err: fmt.Errorf("%s holds no PEM certificate", t.ClientCAFile)}
		}
		c.ClientCAs, c.ClientAuth = pool, tls.RequireAndVerifyClientCert
	}
	return c, nil
}

// fileError is a file of a tls: section that could not be used, named by
// its key there (cert_file, key_file, client_ca_file, ca_file), so that
// Load can report it at that key's line. Its text is label, then err.
type fileError struct {
	key, label string
	err        error
}

func (e *fileError) Error() string { return e.label + ": " + e.err.Error() }
func (e *fileError) Unwrap() error { return e.err }

// tlsError reports err, the error of loading the files of the tls: section
// n at path: a file's at the key that names it, else at n.
func (d *decoder) tlsError(n *yaml.Node, path string, err error) {
	var fe *fileError
	if errors.As(err, &fe) {
		if v := valueOf(n, fe.key); v != nil {
			d.Errorf(v, path+"."+fe.key, "%v", fe.err)
			return
		}
	}
	d.Errorf(n, path, "%v", err)
}
