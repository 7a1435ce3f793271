package redistest

import (
	"crypto/tls"
	"os"
	"path/filepath"
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
	// CA signs the server's certificate (for 127.0.0.1 and localhost) and a
	// client certificate: CA.File("ca") is the CA, CA.File("client") and
	// CA.KeyFile("client") the client's certificate and key.
	CA *testpki.CA
}

// Secure starts a SecureServer whose SecureUser has the given password
// and returns when it answers PING. It is killed when the test ends.
func Secure(tb testing.TB, password string) *SecureServer {
	tb.Helper()
	ca := newCA(tb)
	s := startNew(tb, false, 0, false, func(s *Server) error {
		if err := withTLS(s, ca); err != nil {
			return err
		}
		acl := filepath.Join(s.Dir, "users.acl")
		if err := os.WriteFile(acl, []byte("user default off\nuser "+SecureUser+" on >"+password+" ~* &* +@all\n"), 0o600); err != nil {
			return err
		}
		s.args = append(s.args, "--aclfile", acl)
		s.auth = []string{SecureUser, password}
		return nil
	})
	return &SecureServer{Server: s, CA: ca}
}

// ClientTLS returns a TLS configuration that trusts the server's CA and
// presents the client certificate.
func (s *SecureServer) ClientTLS(tb testing.TB) *tls.Config {
	tb.Helper()
	return clientTLS(tb, s.CA)
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
