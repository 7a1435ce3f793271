package redistest_test

import (
	"context"
	"crypto/tls"
	"strings"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/sluice-dev/sluice/internal/redistest"
)

func TestStandaloneStartsKillsAndRestartsOnTheSamePort(t *testing.T) {
	s := redistest.Standalone(t)
	if v := s.MustDo("SET", "k", "v"); v != "OK" {
		t.Fatalf("SET: %v", v)
	}
	c := s.Client(t)
	if got, err := c.Do(context.Background(), c.B().Get().Key("k").Build()).ToString(); err != nil || got != "v" {
		t.Fatalf("GET through rueidis: %q, %v", got, err)
	}
	s.Kill()
	if _, err := s.Do("PING"); err == nil {
		t.Fatal("a killed server still answers PING")
	}
	s.Restart()
	if v := s.MustDo("PING"); v != "PONG" {
		t.Fatalf("after restart PING says %v", v)
	}
	if v := s.MustDo("EXISTS", "k"); v != int64(0) {
		t.Fatalf("a restarted server kept data (EXISTS = %v): the fixture runs without persistence", v)
	}
	info, err := s.Info("server")
	if err != nil || info["tcp_port"] == "" {
		t.Fatalf("INFO server: %v, %v", info, err)
	}
}

func TestClusterOfThreeMastersServesEverySlot(t *testing.T) {
	start := time.Now()
	c := redistest.Cluster(t)
	t.Logf("cluster ready in %v", time.Since(start))
	cl := c.Client(t)
	ctx := context.Background()
	for _, k := range []string{"a", "b", "c", "{user1}x", "{user1}y"} {
		if err := cl.Do(ctx, cl.B().Set().Key(k).Value("1").Build()).Error(); err != nil {
			t.Fatalf("SET %s: %v", k, err)
		}
	}
	keys, err := c.Keys("*")
	if err != nil || len(keys) != 5 {
		t.Fatalf("Keys: %v, %v", keys, err)
	}
}

func TestClusterWithReplicas(t *testing.T) {
	start := time.Now()
	c := redistest.Cluster(t, redistest.WithReplicas(1))
	t.Logf("cluster with replicas ready in %v", time.Since(start))
	if len(c.Replicas) != 3 {
		t.Fatalf("%d replicas, want 3", len(c.Replicas))
	}
	info, err := c.Replicas[0].Info("replication")
	if err != nil || info["role"] != "slave" {
		t.Fatalf("replica role: %v, %v", info["role"], err)
	}
}

func TestSentinelGroupFailsOverToTheReplica(t *testing.T) {
	start := time.Now()
	f := redistest.SentinelGroup(t, "primary")
	t.Logf("master, replica and 3 sentinels ready in %v", time.Since(start))
	old, err := f.Master()
	if err != nil || old != f.Servers[0] {
		t.Fatalf("master at start: %v, %v", old, err)
	}
	killed := time.Now()
	old.Kill()
	m, err := f.WaitMaster(old, 15*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if m != f.Servers[1] {
		t.Fatalf("new master %s, want the replica %s", m.Addr, f.Servers[1].Addr)
	}
	t.Logf("the replica is master %v after the kill", time.Since(killed))
}

// TestSecureServerAdmitsOnlyTLSClientsWithThePassword: the TLS port needs
// a client certificate and the password, and follows SetPassword; the
// default user is off.
func TestSecureServerAdmitsOnlyTLSClientsWithThePassword(t *testing.T) {
	s := redistest.Secure(t, "first-secret")
	ping := func(c *tls.Config, user, password string) error {
		client, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{s.TLSAddr}, TLSConfig: c,
			Username: user, Password: password, ForceSingleClient: true, DisableCache: true, DisableRetry: true})
		if err != nil {
			return err
		}
		defer client.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		return client.Do(ctx, client.B().Ping().Build()).Error()
	}
	good := s.ClientTLS(t)
	if err := ping(good, redistest.SecureUser, "first-secret"); err != nil {
		t.Fatalf("with the certificate and the password: %v", err)
	}
	if err := ping(good, "", ""); err == nil || !strings.Contains(err.Error(), "NOAUTH") {
		t.Errorf("as the default user: %v, want NOAUTH", err)
	}
	if err := ping(good, redistest.SecureUser, "wrong"); err == nil {
		t.Error("a wrong password was admitted")
	}
	if err := ping(&tls.Config{RootCAs: s.CA.Pool}, redistest.SecureUser, "first-secret"); err == nil {
		t.Error("a client without a certificate was admitted")
	}
	s.SetPassword("second-secret")
	if err := ping(good, redistest.SecureUser, "first-secret"); err == nil {
		t.Error("the old password is still admitted")
	}
	if err := ping(good, redistest.SecureUser, "second-secret"); err != nil {
		t.Errorf("the new password: %v", err)
	}
	if v, err := s.Do("PING"); err != nil || v != "PONG" {
		t.Errorf("the fixture's own Do after SetPassword: %v, %v", v, err)
	}
}
