package redistest

import (
	"crypto/tls"
	"net"
	"strconv"
	"testing"

	"github.com/sluice-dev/sluice/internal/testpki"
)

// newCA makes the CA of servers started with TLS, with the certificates
// they use: "server" (for 127.0.0.1 and localhost), presented to clients,
// and "client", presented by a client and, on a cluster's bus and
// replication links, by the nodes to each other.
func newCA(tb testing.TB) *testpki.CA {
	tb.Helper()
	ca := testpki.New(tb, "redistest CA")
	ca.Server(tb, "server")
	ca.Client(tb, "client")
	return ca
}

// withTLS gives s a TLS port (s.TLSAddr) with ca's certificates, on which
// clients must present a certificate ca signed; its plaintext port stays,
// for the fixture's own commands.
func withTLS(s *Server, ca *testpki.CA) error {
	ports, err := freePorts(1)
	if err != nil {
		return err
	}
	s.TLSAddr = net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[0]))
	s.args = append(s.args,
		"--tls-port", strconv.Itoa(ports[0]),
		"--tls-cert-file", ca.File("server"),
		"--tls-key-file", ca.KeyFile("server"),
		"--tls-client-cert-file", ca.File("client"),
		"--tls-client-key-file", ca.KeyFile("client"),
		"--tls-ca-cert-file", ca.File("ca"),
		"--tls-auth-clients", "yes")
	return nil
}

// clientTLS returns a TLS configuration that trusts ca and presents its
// "client" certificate.
func clientTLS(tb testing.TB, ca *testpki.CA) *tls.Config {
	tb.Helper()
	cert, err := tls.LoadX509KeyPair(ca.File("client"), ca.KeyFile("client"))
	if err != nil {
		tb.Fatalf("redistest: %v", err)
	}
	return &tls.Config{RootCAs: ca.Pool, Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
}

// clientPort is the port clients of s are told of: its TLS port when it
// has one, else its plaintext port.
func (s *Server) clientPort() int {
	if s.TLSAddr == "" {
		return s.Port
	}
	_, port, _ := net.SplitHostPort(s.TLSAddr)
	p, _ := strconv.Atoi(port)
	return p
}
