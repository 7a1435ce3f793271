package server_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/internal/testpki"
)

// A listener's certificate, key or client CA path that names a file too
// large, or no regular file (a pipe, a device such as /dev/zero), is
// refused by a reload with its path, which never blocks or reads on
// without end; the configuration in force keeps serving.
func TestReloadRefusesListenerTLSFilesItCannotReadInBounds(t *testing.T) {
	ca := testpki.New(t, "bounds CA")
	ca.Server(t, "public")
	dir := t.TempDir()
	large := filepath.Join(dir, "large.pem")
	if err := os.WriteFile(large, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(large, 64<<20); err != nil { // sparse
		t.Fatal(err)
	}
	pipe := filepath.Join(dir, "pipe.pem")
	if err := syscall.Mkfifo(pipe, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// Lets a reader blocked opening the pipe go (it reads nothing).
		if f, err := os.OpenFile(pipe, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
	})
	plans := "plans:\n  free: {limits: [{name: m, algorithm: gcra, quantity: 10, window: 1m}]}\n"
	tlsWith := func(cert, key, clientCA string) string {
		return "tls: {cert_file: " + cert + ", key_file: " + key + "}\nadmin:\n  tls: {cert_file: " + ca.File("public") +
			", key_file: " + ca.KeyFile("public") + ", client_ca_file: " + clientCA + "}\n" + plans
	}
	srv, file := loadServer(t, dir, tlsWith(ca.File("public"), ca.KeyFile("public"), ca.File("ca")))
	for _, c := range []struct{ name, text, path, want string }{
		{"large certificate", tlsWith(large, ca.KeyFile("public"), ca.File("ca")), large, "more than"},
		{"large client CA", tlsWith(ca.File("public"), ca.KeyFile("public"), large), large, "more than"},
		{"pipe key", tlsWith(ca.File("public"), pipe, ca.File("ca")), pipe, "not a regular file"},
		{"device key", tlsWith(ca.File("public"), "/dev/zero", ca.File("ca")), "/dev/zero", "not a regular file"},
	} {
		if err := os.WriteFile(file, []byte(c.text), 0o600); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- srv.Reload() }()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), c.path) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s: reload returned %v; want an error naming %s, %q", c.name, err, c.path, c.want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: the reload has not returned after 10 s", c.name)
		}
		if got := srv.Config().TLS.KeyFile; got != ca.KeyFile("public") {
			t.Errorf("%s: key file in force %s; want the old configuration kept", c.name, got)
		}
	}
}
