package config

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"go.yaml.in/yaml/v3"
)

// RedisTLS configures TLS to Redis. Paths are relative to the
// configuration file.
type RedisTLS struct {
	// Enabled makes every connection to Redis (servers and Sentinels) use
	// TLS. A tls: section enables it; tls: false or no section leaves
	// connections in plain TCP.
	Enabled bool
	// CAFile is a PEM bundle of the CAs that sign Redis's certificate.
	// Empty: the system's roots.
	CAFile string
	// CertFile and KeyFile are the client certificate (chain) and key that
	// sluice presents, for a Redis that asks for one (tls-auth-clients).
	// Both or neither.
	CertFile, KeyFile string
	// ServerName is the name Redis's certificate must bear. Empty: the
	// host of the address dialed.
	ServerName string
}

// Load reads t's files into a client configuration, or returns nil when t
// is not Enabled. The certificate of every server is verified.
func (t RedisTLS) Load() (*tls.Config, error) {
	if !t.Enabled {
		return nil, nil
	}
	c := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: t.ServerName}
	if t.CAFile != "" {
		pem, err := os.ReadFile(t.CAFile)
		if err != nil {
			return nil, fmt.Errorf("redis tls: CA: %w", err)
		}
		c.RootCAs = x509.NewCertPool()
		if !c.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("redis tls: CA: %s holds no PEM certificate", t.CAFile)
		}
	}
	if t.CertFile != "" {
		cert, err := tls.LoadX509KeyPair(t.CertFile, t.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("redis tls: client certificate: %w", err)
		}
		c.Certificates = []tls.Certificate{cert}
	}
	return c, nil
}

// maxSecretBytes bounds a secret file: a password, a token, never more.
const maxSecretBytes = 64 << 10

// ReadSecret returns the content of the file at path less one trailing
// newline ("\n" or "\r\n"), as a secret mounted from Kubernetes, a systemd
// credential or `echo secret > file` holds it. An empty secret, or a file
// of more than 64 KiB, is an error.
func ReadSecret(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxSecretBytes+1))
	if err != nil {
		return "", err
	}
	if len(b) > maxSecretBytes {
		return "", fmt.Errorf("%s holds more than %d bytes: not a password", path, maxSecretBytes)
	}
	s := strings.TrimSuffix(strings.TrimSuffix(string(b), "\n"), "\r")
	if s == "" {
		return "", errors.New(path + " is empty")
	}
	return s, nil
}

// redisTLS decodes store.redis.tls: true, false, or a section of files
// (empty: the system's roots).
func (d *decoder) redisTLS(n *yaml.Node, path string, t *RedisTLS) {
	if n.Kind == yaml.ScalarNode && n.Tag != "!!null" {
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
	if _, err := t.Load(); err != nil {
		d.Errorf(n, path, "%v", err)
	}
}
