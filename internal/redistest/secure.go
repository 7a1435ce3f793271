package redistest

import (
	"crypto/tls"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/sluice-dev/sluice/internal/testpki"
)

// SecureUser is the ACL user a SecureServer admits.
const SecureUser = "sluice"

// SecureServer is a standalone redis-server as a managed Redis is run:
// clients reach it over TLS only (TLSAddr), with a certificate its CA
// signed, as the ACL user SecureUser with a password; the default user is
// off. The embedded Server's Addr is a plaintext loopback port kept for the
// fixture itself (Do, start and restart), which authenticates as
// SecureUser.
type SecureServer struct {
	*Server
	// TLSAddr is "127.0.0.1:port", the TLS port clients dial.
	TLSAddr string
	// CA signs the server's certificate (for 127.0.0.1 and localhost) and a
	// client certificate: CA.File("ca") is the CA, CA.File("client") and
	// CA.KeyFile("client") the client's certificate and key.
	CA *testpki.CA
}

// Secure starts a SecureServer whose SecureUser has the given password
// and returns when it answers PING. It is killed when the test ends.
func Secure(tb testing.TB, password string) *SecureServer {
	tb.Helper()
	ca := testpki.New(tb, "redistest CA")
	ca.Server(tb, "server")
	ca.Client(tb, "client")
	var tlsAddr string
	s := startNew(tb, false, 0, false, func(s *Server) error {
		ports, err := freePorts(1)
		if err != nil {
			return err
		}
		tlsPort := ports[0]
		tlsAddr = net.JoinHostPort("127.0.0.1", strconv.Itoa(tlsPort))
		acl := filepath.Join(s.Dir, "users.acl")
		if err := os.WriteFile(acl, []byte("user default off\nuser "+SecureUser+" on >"+password+" ~* &* +@all\n"), 0o600); err != nil {
			return err
		}
		s.args = append(s.args,
			"--tls-port", strconv.Itoa(tlsPort),
			"--tls-cert-file", ca.File("server"),
			"--tls-key-file", ca.KeyFile("server"),
			"--tls-ca-cert-file", ca.File("ca"),
			"--tls-auth-clients", "yes",
			"--aclfile", acl)
		s.auth = []string{SecureUser, password}
		return nil
	})
	return &SecureServer{Server: s, TLSAddr: tlsAddr, CA: ca}
}

// ClientTLS returns a TLS configuration that trusts the server's CA and
// presents the client certificate.
func (s *SecureServer) ClientTLS(tb testing.TB) *tls.Config {
	tb.Helper()
	cert, err := tls.LoadX509KeyPair(s.CA.File("client"), s.CA.KeyFile("client"))
	if err != nil {
		tb.Fatalf("redistest: %v", err)
	}
	return &tls.Config{RootCAs: s.CA.Pool, Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
}

// SetPassword changes SecureUser's password (connections already
// authenticated stay so) and makes Do authenticate with it.
func (s *SecureServer) SetPassword(password string) {
	s.tb.Helper()
	s.MustDo("ACL", "SETUSER", SecureUser, "resetpass", ">"+password)
	s.mu.Lock()
	s.auth = []string{SecureUser, password}
	s.mu.Unlock()
}
