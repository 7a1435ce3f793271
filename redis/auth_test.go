package redis_test

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/redistest"
	"github.com/sluice-dev/sluice/internal/testpki"
	"github.com/sluice-dev/sluice/redis"
)

// password is a password that can change while a store uses it, as a
// mounted secret file does.
type password struct {
	mu    sync.Mutex
	value string
	calls int
}

func (p *password) set(v string) { p.mu.Lock(); p.value = v; p.mu.Unlock() }

func (p *password) credentials() (string, string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls++
	return redistest.SecureUser, p.value, nil
}

// A store reaches a Redis that admits only TLS clients with a certificate,
// as an ACL user; when the password rotates, the store whose Credentials
// gives the new one decides again once its connection is made anew, and a
// store that kept the old password cannot reconnect.
func TestTLSAndRotatedCredentials(t *testing.T) {
	srv := redistest.Secure(t, "first-secret")
	rotating := &password{value: "first-secret"}
	st, err := redis.Dial(redis.Options{Addrs: []string{srv.TLSAddr}, TLS: srv.ClientTLS(t),
		Credentials: rotating.credentials, Timeout: testTimeout})
	if err != nil {
		t.Fatalf("Dial over TLS with credentials: %v", err)
	}
	defer st.Close()
	stale, err := redis.Dial(redis.Options{Addrs: []string{srv.TLSAddr}, TLS: srv.ClientTLS(t),
		Username: redistest.SecureUser, Password: "first-secret", Timeout: time.Second})
	if err != nil {
		t.Fatalf("Dial over TLS with a static password: %v", err)
	}
	defer stale.Close()

	check := []sluice.Check{{Key: "tls-client", Limit: sluice.FixedWindow(1000, time.Hour), Cost: 1}}
	out := make([]sluice.Status, 1)
	apply := func(s *redis.Store) error {
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		return s.Apply(ctx, check, out)
	}
	for _, s := range []*redis.Store{st, stale} {
		if err := apply(s); err != nil {
			t.Fatalf("Apply over TLS: %v", err)
		}
	}
	if out[0].Remaining != 998 {
		t.Errorf("remaining after two checks by two stores: %d, want 998 (one shared count in Redis)", out[0].Remaining)
	}
	if keys, err := srv.Keys("*tls-client*"); err != nil || len(keys) != 1 {
		t.Errorf("keys in Redis: %v, %v; want the one the checks wrote", keys, err)
	}

	srv.SetPassword("second-secret")
	rotating.set("second-secret")
	before := func() int { rotating.mu.Lock(); defer rotating.mu.Unlock(); return rotating.calls }()
	srv.MustDo("CLIENT", "KILL", "USER", redistest.SecureUser) // as a failover or a network cut would
	deadline := time.Now().Add(10 * time.Second)
	for err := apply(st); err != nil; err = apply(st) {
		if time.Now().After(deadline) {
			t.Fatalf("the store with rotated credentials still fails 10s after its connection dropped: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if calls := func() int { rotating.mu.Lock(); defer rotating.mu.Unlock(); return rotating.calls }(); calls == before {
		t.Error("Credentials was not called again for the new connection")
	}
	for range 5 {
		if err := apply(stale); err == nil {
			t.Fatal("the store with the old password decided after its connection dropped")
		} else if !errors.Is(err, sluice.ErrStoreUnavailable) {
			t.Errorf("the stale store's error %v does not wrap sluice.ErrStoreUnavailable", err)
		}
	}
}

// A Credentials error fails the connection: Dial says the store is
// unavailable.
func TestCredentialsErrorFailsTheConnection(t *testing.T) {
	srv := redistest.Secure(t, "secret")
	failing := func() (string, string, error) { return "", "", errors.New("secret file missing") }
	_, err := redis.Dial(redis.Options{Addrs: []string{srv.TLSAddr}, TLS: srv.ClientTLS(t), Credentials: failing})
	if !errors.Is(err, sluice.ErrStoreUnavailable) {
		t.Errorf("Dial with failing credentials: %v, want an error wrapping sluice.ErrStoreUnavailable", err)
	}
}

// A Redis Cluster whose nodes speak TLS to clients, on their bus and to
// their replicas: the store, given the nodes' TLS addresses, learns the
// others' TLS ports from the cluster and decides a check whose keys span
// slots on several masters, all or nothing.
func TestClusterOverTLS(t *testing.T) {
	c := redistest.Cluster(t, redistest.WithTLS())
	st, err := redis.Dial(redis.Options{Mode: redis.ModeCluster, Addrs: c.TLSAddrs()[:1], TLS: c.ClientTLS(t), Timeout: testTimeout})
	if err != nil {
		t.Fatalf("Dial a cluster over TLS: %v", err)
	}
	defer st.Close()
	limit := sluice.FixedWindow(2, time.Hour)
	var checks []sluice.Check
	for i := range 12 { // keys that land on every master
		checks = append(checks, sluice.Check{Key: fmt.Sprintf("tls-subject-%d", i), Limit: limit, Cost: 1})
	}
	out := make([]sluice.Status, len(checks))
	ctx := context.Background()
	for round, want := range []bool{true, true, false} {
		if err := st.Apply(ctx, checks, out); err != nil {
			t.Fatalf("round %d: %v", round+1, err)
		}
		for i, s := range out {
			if s.Allowed != want {
				t.Fatalf("round %d, check %d: allowed %v, want %v", round+1, i, s.Allowed, want)
			}
		}
	}
	held := 0
	for _, m := range c.Masters {
		keys, err := m.Keys("*tls-subject-*")
		if err != nil {
			t.Fatal(err)
		}
		if len(keys) > 0 {
			held++
		}
	}
	if held != len(c.Masters) {
		t.Errorf("%d masters hold the checks' keys, want all %d", held, len(c.Masters))
	}
}

// Sentinels and the servers they watch, all over TLS: the store, given the
// Sentinels' TLS addresses, is told the master's TLS port and decides on
// it.
func TestSentinelOverTLS(t *testing.T) {
	f := redistest.SentinelGroupTLS(t, "tls-primary")
	st, err := redis.Dial(redis.Options{Mode: redis.ModeSentinel, Addrs: f.TLSAddrs(), MasterSet: "tls-primary",
		TLS: f.ClientTLS(t), Timeout: testTimeout})
	if err != nil {
		t.Fatalf("Dial Sentinels over TLS: %v", err)
	}
	defer st.Close()
	admitsOnce(t, st, "tls-sentinel")
	m, err := f.Master()
	if err != nil {
		t.Fatal(err)
	}
	if keys, err := m.Keys("*tls-sentinel*"); err != nil || len(keys) != 1 {
		t.Errorf("keys on the master: %v, %v", keys, err)
	}
}

// Sentinels with a password of their own (requirepass) and a master with
// another: the store authenticates to each with its own and decides on
// the master; with the master's password given to the Sentinels too (as
// before SentinelPassword), it cannot reach them.
func TestSentinelsWithAPasswordOfTheirOwn(t *testing.T) {
	master, sentinel := redistest.SentinelWithPasswords(t, "authed", "data-secret", "sentinel-secret")
	o := redis.Options{Mode: redis.ModeSentinel, Addrs: []string{sentinel.Addr}, MasterSet: "authed",
		Password: "data-secret", SentinelPassword: "sentinel-secret", Timeout: testTimeout}
	st, err := redis.Dial(o)
	if err != nil {
		t.Fatalf("Dial with the Sentinels' password: %v", err)
	}
	defer st.Close()
	admitsOnce(t, st, "authed-sentinel")
	if keys, err := master.Keys("*authed-sentinel*"); err != nil || len(keys) != 1 {
		t.Errorf("keys on the master: %v, %v", keys, err)
	}

	// The master's password from Credentials (read for each connection),
	// the Sentinels' their own.
	withCreds := o
	withCreds.Password = ""
	withCreds.Credentials = func() (string, string, error) { return "", "data-secret", nil }
	st2, err := redis.Dial(withCreds)
	if err != nil {
		t.Fatalf("Dial with Credentials for the master and the Sentinels' password: %v", err)
	}
	defer st2.Close()
	out := make([]sluice.Status, 1)
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	check := []sluice.Check{{Key: "authed-sentinel", Limit: sluice.FixedWindow(1, time.Hour), Cost: 1}}
	if err := st2.Apply(ctx, check, out); err != nil || out[0].Allowed {
		t.Errorf("a third check through Credentials: allowed %v, %v; want the shared count's refusal", out[0].Allowed, err)
	}

	o.SentinelPassword = ""
	if st, err := redis.Dial(o); err == nil {
		st.Close()
		t.Error("Dial with the master's password for the Sentinels: connected, want the Sentinels' refusal")
	}
	o.Mode, o.SentinelPassword = redis.ModeStandalone, "sentinel-secret"
	if _, err := redis.Dial(o); err == nil || !strings.Contains(err.Error(), "for sentinel mode") {
		t.Errorf("a Sentinel password in standalone mode: %v", err)
	}
}

// admitsOnce checks that st decides a limit of 1 an hour on key: the
// first check admitted, the second refused.
func admitsOnce(t *testing.T, st *redis.Store, key string) {
	t.Helper()
	out := make([]sluice.Status, 1)
	check := []sluice.Check{{Key: key, Limit: sluice.FixedWindow(1, time.Hour), Cost: 1}}
	for i, want := range []bool{true, false} {
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		err := st.Apply(ctx, check, out)
		cancel()
		if err != nil || out[0].Allowed != want {
			t.Fatalf("check %d: allowed %v, %v; want %v", i+1, out[0].Allowed, err, want)
		}
	}
}

// TestTLSRootsFollowACARotatedOnDisk: Redis's certificate is replaced by one
// of another CA (CONFIG SET, as a rotation does) and the CA file the store
// reads is rewritten: the store whose TLSRoots reads it decides again once
// its connection is made anew; a store with the old CA in TLS.RootCAs
// cannot reconnect, and neither can one whose file holds a stranger CA.
func TestTLSRootsFollowACARotatedOnDisk(t *testing.T) {
	srv := redistest.Secure(t, "secret")
	roots := filepath.Join(t.TempDir(), "redis-ca.pem")
	copyFile := func(from string) {
		t.Helper()
		b, err := os.ReadFile(from)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(roots, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	copyFile(srv.CA.File("ca"))
	readRoots := func() (*x509.CertPool, error) {
		b, err := os.ReadFile(roots)
		if err != nil {
			return nil, err
		}
		pool := x509.NewCertPool()
		pool.AppendCertsFromPEM(b)
		return pool, nil
	}
	dial := func(withRoots bool) *redis.Store {
		t.Helper()
		o := redis.Options{Addrs: []string{srv.TLSAddr}, TLS: srv.ClientTLS(t), Username: redistest.SecureUser, Password: "secret", Timeout: time.Second}
		if withRoots {
			o.TLSRoots = readRoots
		}
		st, err := redis.Dial(o)
		if err != nil {
			t.Fatalf("Dial over TLS: %v", err)
		}
		t.Cleanup(func() { st.Close() })
		return st
	}
	following, static := dial(true), dial(false)
	misnamed := srv.ClientTLS(t)
	misnamed.ServerName = "not-redis.example"
	if st, err := redis.Dial(redis.Options{Addrs: []string{srv.TLSAddr}, TLS: misnamed, TLSRoots: readRoots,
		Username: redistest.SecureUser, Password: "secret", Timeout: time.Second}); err == nil {
		st.Close()
		t.Error("a certificate for 127.0.0.1 and localhost was accepted as not-redis.example")
	}
	check := []sluice.Check{{Key: "rotated-ca", Limit: sluice.FixedWindow(1000, time.Hour), Cost: 1}}
	apply := func(s *redis.Store) error {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		return s.Apply(ctx, check, make([]sluice.Status, 1))
	}
	for _, s := range []*redis.Store{following, static} {
		if err := apply(s); err != nil {
			t.Fatalf("Apply before the rotation: %v", err)
		}
	}

	next := testpki.New(t, "rotated CA")
	next.Server(t, "server")
	srv.MustDo("CONFIG", "SET", "tls-cert-file", next.File("server"), "tls-key-file", next.KeyFile("server"))
	copyFile(next.File("ca"))
	srv.MustDo("CLIENT", "KILL", "USER", redistest.SecureUser)
	deadline := time.Now().Add(10 * time.Second)
	for err := apply(following); err != nil; err = apply(following) {
		if time.Now().After(deadline) {
			t.Fatalf("10 s after the CA rotated on disk, the store still fails: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := apply(static); err == nil {
		t.Error("the store that kept the old CA verified the new certificate")
	}

	copyFile(testpki.New(t, "stranger CA").File("ca"))
	srv.MustDo("CLIENT", "KILL", "USER", redistest.SecureUser)
	for range 5 {
		if err := apply(following); err == nil {
			t.Fatal("a stranger CA in the file verified Redis's certificate")
		}
	}
}
