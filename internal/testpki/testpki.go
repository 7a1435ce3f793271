// Package testpki makes a certificate authority for tests and the server
// and client certificates it signs, kept in memory and written as PEM files
// for programs that read files (sluice's configuration, redis-server).
// Certificates are valid from an hour ago to an hour from now, unless
// issued with a date of expiry.
package testpki

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// CA is a test certificate authority whose certificate is Dir/ca.pem.
type CA struct {
	// Dir holds ca.pem and, for each certificate issued, <name>.pem and
	// <name>-key.pem.
	Dir string
	// Pool holds the CA's certificate: a client's RootCAs or a server's
	// ClientCAs.
	Pool *x509.CertPool

	key  *ecdsa.PrivateKey
	cert *x509.Certificate
}

// New makes a CA named name in a t.TempDir().
func New(tb testing.TB, name string) *CA {
	tb.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		tb.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		tb.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		tb.Fatal(err)
	}
	ca := &CA{Dir: tb.TempDir(), Pool: x509.NewCertPool(), key: key, cert: cert}
	ca.Pool.AddCert(cert)
	write(tb, ca.File("ca"), "CERTIFICATE", der)
	return ca
}

// File returns the path of Dir/<name>.pem.
func (ca *CA) File(name string) string { return filepath.Join(ca.Dir, name+".pem") }

// KeyFile returns the path of Dir/<name>-key.pem.
func (ca *CA) KeyFile(name string) string { return filepath.Join(ca.Dir, name+"-key.pem") }

// Server issues a server certificate for 127.0.0.1 and localhost named
// name, writes it as File(name) and KeyFile(name), and returns it.
func (ca *CA) Server(tb testing.TB, name string) tls.Certificate {
	tb.Helper()
	return ca.issue(tb, name, true, time.Now().Add(time.Hour))
}

// Client issues a client certificate whose subject's common name is name,
// writes it as File(name) and KeyFile(name), and returns it.
func (ca *CA) Client(tb testing.TB, name string) tls.Certificate {
	tb.Helper()
	return ca.issue(tb, name, false, time.Now().Add(time.Hour))
}

// ClientUntil is Client with a certificate that expires at notAfter.
func (ca *CA) ClientUntil(tb testing.TB, name string, notAfter time.Time) tls.Certificate {
	tb.Helper()
	return ca.issue(tb, name, false, notAfter)
}

func (ca *CA) issue(tb testing.TB, name string, server bool, notAfter time.Time) tls.Certificate {
	tb.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		tb.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: notAfter, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	if server {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
		tmpl.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1)}
		tmpl.DNSNames = []string{"localhost"}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		tb.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		tb.Fatal(err)
	}
	write(tb, ca.File(name), "CERTIFICATE", der)
	write(tb, ca.KeyFile(name), "EC PRIVATE KEY", kder)
	c, err := tls.X509KeyPair(encode("CERTIFICATE", der), encode("EC PRIVATE KEY", kder))
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

func encode(kind string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der})
}

func write(tb testing.TB, path, kind string, der []byte) {
	tb.Helper()
	if err := os.WriteFile(path, encode(kind, der), 0o600); err != nil {
		tb.Fatal(err)
	}
}
