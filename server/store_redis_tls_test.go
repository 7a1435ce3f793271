package server_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/internal/realtest"
	"github.com/sluice-dev/sluice/internal/redistest"
	"github.com/sluice-dev/sluice/internal/testpki"
	"github.com/sluice-dev/sluice/server"
)

// A Redis reached as a managed one is: over TLS with a client certificate,
// as an ACL user whose password is in a file. The server decides on it;
// when the password rotates (the file and Redis change, connections drop),
// it decides on Redis again without a restart; a wrong password or a
// missing client certificate leaves it not ready, deciding by
// on_store_error, and no log line holds the password.
func TestOpenStoreRedisOverTLSWithAPasswordFile(t *testing.T) {
	rs := redistest.Secure(t, "first-secret")
	dir := rs.CA.Dir
	secret := filepath.Join(dir, "redis-password")
	writeSecret := func(s string) {
		t.Helper()
		if err := os.WriteFile(secret, []byte(s+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	load := func(tls string) *config.Config { t.Helper(); return secureStoreConfig(t, rs, tls) }
	ctx := context.Background()
	checks := []sluice.Check{{Key: "tls-client", Limit: sluice.PerMinute(100), Cost: 1}}
	allowed := func(st sluice.Store) bool {
		var d sluice.Decision
		if err := sluice.NewLimiter(st).Allow(ctx, checks, &d); err != nil {
			t.Fatalf("Allow: %v (a store error must be decided by on_store_error)", err)
		}
		return d.Allowed
	}

	writeSecret("first-secret")
	full := `{ca_file: ca.pem, cert_file: client.pem, key_file: client-key.pem}`
	logs := &realtest.Buffer{}
	opened, err := server.OpenStore(load(full), slog.New(slog.NewJSONHandler(logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer opened.Close()
	if err := opened.Ready(ctx); err != nil {
		t.Fatalf("Ready over TLS with the password file: %v", err)
	}
	if !allowed(opened.Store) {
		t.Fatal("the first check was refused: on_store_error deny decided it, not Redis")
	}
	if keys, err := rs.Keys("sluice:*"); err != nil || len(keys) != 1 {
		t.Errorf("keys in Redis: %v, %v; want the check's state", keys, err)
	}

	// Rotation: Redis takes a new password, the file holds it, and every
	// connection of the user drops (as a failover or a network cut would).
	rs.SetPassword("second-secret")
	writeSecret("second-secret")
	rs.MustDo("CLIENT", "KILL", "USER", redistest.SecureUser)
	deadline := time.Now().Add(10 * time.Second)
	for opened.Ready(ctx) != nil || !allowed(opened.Store) {
		if time.Now().After(deadline) {
			t.Fatalf("10s after the password rotated, the store is not back on Redis: %v", opened.Ready(ctx))
		}
		time.Sleep(50 * time.Millisecond)
	}

	for name, tls := range map[string]string{
		"no client certificate": `{ca_file: ca.pem}`,
		"the system's roots":    `true`,
	} {
		st, err := server.OpenStore(load(tls), slog.New(slog.NewJSONHandler(logs, nil)))
		if err != nil {
			t.Fatalf("%s: OpenStore: %v, want a store deciding by on_store_error", name, err)
		}
		if err := st.Ready(ctx); !errors.Is(err, sluice.ErrStoreUnavailable) {
			t.Errorf("%s: Ready = %v, want ErrStoreUnavailable", name, err)
		}
		if allowed(st.Store) {
			t.Errorf("%s: a check was admitted; on_store_error is deny", name)
		}
		st.Close()
	}
	writeSecret("wrong-secret")
	wrong, err := server.OpenStore(load(full), slog.New(slog.NewJSONHandler(logs, nil)))
	if err != nil {
		t.Fatalf("a wrong password: OpenStore: %v, want a store deciding by on_store_error", err)
	}
	defer wrong.Close()
	if err := wrong.Ready(ctx); !errors.Is(err, sluice.ErrStoreUnavailable) || !strings.Contains(err.Error(), "WRONGPASS") {
		t.Errorf("a wrong password: Ready = %v, want ErrStoreUnavailable saying WRONGPASS", err)
	}
	for _, s := range []string{"first-secret", "second-secret", "wrong-secret"} {
		if strings.Contains(logs.String(), s) {
			t.Errorf("a log line holds the password %q:\n%s", s, logs.String())
		}
	}
}

// A client certificate to Redis that is renewed on disk (as cert-manager
// renews a Secret) is presented from the next connection on: once the
// first has expired, the store reconnects with the renewed one.
func TestRedisClientCertificateRenewedOnDisk(t *testing.T) {
	rs := redistest.Secure(t, "secret")
	rs.CA.ClientUntil(t, "renewing", time.Now().Add(2*time.Second))
	dir := rs.CA.Dir
	if err := os.WriteFile(filepath.Join(dir, "redis-password"), []byte("secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := secureStoreConfig(t, rs, "{ca_file: ca.pem, cert_file: renewing.pem, key_file: renewing-key.pem}")
	opened, err := server.OpenStore(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer opened.Close()
	ctx := context.Background()
	if err := opened.Ready(ctx); err != nil {
		t.Fatalf("Ready with the first certificate: %v", err)
	}
	time.Sleep(2500 * time.Millisecond)                       // the first certificate expires
	rs.CA.Client(t, "renewing")                               // renewed on disk, an hour long
	rs.MustDo("CLIENT", "KILL", "USER", redistest.SecureUser) // connections made anew
	waitReady(t, opened, "the certificate was renewed on disk")
}

// TestRedisCARotatedOnDisk: Redis's certificate is replaced by one of
// another CA and the ca_file is rewritten with that CA: the server's store
// is on Redis again once its connections are made anew, without a restart
// (it fails when the CA file is read once, checked).
func TestRedisCARotatedOnDisk(t *testing.T) {
	rs := redistest.Secure(t, "secret")
	dir := rs.CA.Dir
	copyFile := func(from, to string) {
		t.Helper()
		b, err := os.ReadFile(from)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(to, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	copyFile(rs.CA.File("ca"), filepath.Join(dir, "redis-ca.pem"))
	if err := os.WriteFile(filepath.Join(dir, "redis-password"), []byte("secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	opened, err := server.OpenStore(secureStoreConfig(t, rs, "{ca_file: redis-ca.pem, cert_file: client.pem, key_file: client-key.pem}"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer opened.Close()
	if err := opened.Ready(context.Background()); err != nil {
		t.Fatalf("Ready with the first CA: %v", err)
	}
	next := testpki.New(t, "rotated CA")
	next.Server(t, "server")
	rs.MustDo("CONFIG", "SET", "tls-cert-file", next.File("server"), "tls-key-file", next.KeyFile("server"))
	copyFile(next.File("ca"), filepath.Join(dir, "redis-ca.pem"))
	rs.MustDo("CLIENT", "KILL", "USER", redistest.SecureUser)
	waitReady(t, opened, "the CA was rotated on disk")
}

// waitReady waits up to 10 s for opened to reach Redis, after what says.
func waitReady(t *testing.T, opened *server.OpenedStore, what string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := opened.Ready(context.Background())
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("10s after %s, Redis is not reached: %v", what, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// secureStoreConfig loads, from rs.CA.Dir/sluice.yaml, a configuration of
// the Redis store at rs's TLS address, as its user with the password in
// rs.CA.Dir/redis-password, TLS as tls says, and on_store_error deny.
func secureStoreConfig(t *testing.T, rs *redistest.SecureServer, tls string) *config.Config {
	t.Helper()
	file := filepath.Join(rs.CA.Dir, "sluice.yaml")
	if err := os.WriteFile(file, []byte(`store:
  type: redis
  redis:
    addresses: ["`+rs.TLSAddr+`"]
    username: `+redistest.SecureUser+`
    password_file: redis-password
    tls: `+tls+`
    timeout: 2s
    on_store_error: deny
plans:
  free:
    limits:
      - {name: per-minute, algorithm: gcra, quantity: 100, window: 1m}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// TestOpenStoreSentinelsWithPasswordFilesOfTheirOwn: Sentinels with a
// password of their own and a master with another, each read from its
// file: the store decides on the master; with the Sentinels' file left
// out, it is not ready and on_store_error decides.
func TestOpenStoreSentinelsWithPasswordFilesOfTheirOwn(t *testing.T) {
	master, sentinel := redistest.SentinelWithPasswords(t, "authed", "data-secret", "sentinel-secret")
	dir := t.TempDir()
	for name, secret := range map[string]string{"redis-password": "data-secret", "sentinel-password": "sentinel-secret"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(secret+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	load := func(sentinelAuth string) *config.Config {
		t.Helper()
		file := filepath.Join(dir, "sluice.yaml")
		if err := os.WriteFile(file, []byte(`store:
  type: redis
  redis:
    mode: sentinel
    master_name: authed
    addresses: ["`+sentinel.Addr+`"]
    password_file: redis-password
    `+sentinelAuth+`
    timeout: 2s
    on_store_error: deny
plans:
  free: {limits: [{name: per-minute, algorithm: gcra, quantity: 100, window: 1m}]}
`), 0o600); err != nil {
			t.Fatal(err)
		}
		cfg, err := config.Load(file)
		if err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	ctx := context.Background()
	opened, err := server.OpenStore(load("sentinel_password_file: sentinel-password"), slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer opened.Close()
	if err := opened.Ready(ctx); err != nil {
		t.Fatalf("Ready through password-protected Sentinels: %v", err)
	}
	var d sluice.Decision
	checks := []sluice.Check{{Key: "through-sentinels", Limit: sluice.PerMinute(100), Cost: 1}}
	if err := sluice.NewLimiter(opened.Store).Allow(ctx, checks, &d); err != nil || !d.Allowed {
		t.Fatalf("the first check: allowed %v, %v; want Redis's admission", d.Allowed, err)
	}
	if keys, err := master.Keys("sluice:*"); err != nil || len(keys) != 1 {
		t.Errorf("keys on the master: %v, %v; want the check's state", keys, err)
	}

	without, err := server.OpenStore(load("# the Sentinels get the data password"), slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer without.Close()
	if err := without.Ready(ctx); err == nil {
		t.Error("ready with the master's password given to the Sentinels: want not ready")
	}
	if err := sluice.NewLimiter(without.Store).Allow(ctx, checks, &d); err != nil || d.Allowed {
		t.Errorf("a check without the Sentinels: allowed %v, %v; want on_store_error deny's refusal", d.Allowed, err)
	}
}
