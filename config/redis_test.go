package config_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/internal/testpki"
)

// The store's Redis section reaches its fields, the durability option and
// a limit's id included.
func TestRedisSectionAndLimitID(t *testing.T) {
	c, err := config.Parse("t.yaml", []byte(`
store:
  type: redis
  redis: {addresses: ["127.0.0.1:6379"], on_store_error: deny, instances: 2, replicas: 1, replica_wait: 20ms}
plans:
  free: {limits: [{name: hourly, id: per-hour, algorithm: gcra, quantity: 10, window: 1h}]}
`))
	if err != nil {
		t.Fatal(err)
	}
	r := c.Store.Redis
	if r.OnStoreError != "deny" || r.Instances != 2 || r.Replicas != 1 || r.ReplicaWait != 20*time.Millisecond {
		t.Errorf("redis section: %+v", r)
	}
	if l := c.Policy.Plans[0].Limits[0]; l.Name() != "hourly" || l.ID() != "per-hour" {
		t.Errorf("limit: name %q id %q, want hourly and per-hour", l.Name(), l.ID())
	}
	_, err = config.Parse("t.yaml", []byte(`
plans:
  free:
    limits:
      - {name: a, algorithm: gcra, quantity: 10, window: 1h}
      - {name: b, id: a, algorithm: gcra, quantity: 10, window: 1m}
`))
	if err == nil {
		t.Error("a limit whose id is another limit's name was accepted")
	}
}

// TLS to Redis and a password kept in a file: paths are relative to the
// configuration; the password file's trailing newline is not part of the
// password; tls: true takes the system's roots.
func TestClientTLSAndPasswordFile(t *testing.T) {
	ca := testpki.New(t, "redis CA")
	ca.Client(t, "client")
	if err := os.WriteFile(filepath.Join(ca.Dir, "redis-password"), []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(ca.Dir, "sluice.yaml")
	if err := os.WriteFile(file, []byte(`
store:
  type: redis
  redis:
    addresses: ["redis.internal:6380"]
    username: sluice
    password_file: redis-password
    tls: {ca_file: ca.pem, cert_file: client.pem, key_file: client-key.pem, server_name: redis.internal}
plans:
  free: {limits: [{name: hourly, algorithm: gcra, quantity: 10, window: 1h}]}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := config.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	r := c.Store.Redis
	want := config.ClientTLS{Enabled: true, CAFile: ca.File("ca"), CertFile: ca.File("client"), KeyFile: ca.KeyFile("client"), ServerName: "redis.internal"}
	if r.TLS != want || r.PasswordFile != filepath.Join(ca.Dir, "redis-password") || r.Password != "" {
		t.Errorf("redis section: %+v", r)
	}
	tc, err := r.TLS.Load()
	if err != nil || tc == nil || tc.RootCAs == nil || tc.GetClientCertificate == nil || tc.ServerName != "redis.internal" {
		t.Fatalf("TLS.Load: %+v, %v", tc, err)
	}
	if cert, err := tc.GetClientCertificate(nil); err != nil || len(cert.Certificate) == 0 {
		t.Errorf("the client certificate: %v, %v", cert, err)
	}
	if secret, err := config.ReadSecret(r.PasswordFile); secret != "s3cret" || err != nil {
		t.Errorf("ReadSecret: %q, %v; want s3cret", secret, err)
	}

	for text, enabled := range map[string]bool{"tls: true": true, "tls: {}": true, "tls: false": false} {
		c, err := config.Parse("t.yaml", []byte("store:\n  type: redis\n  redis:\n    addresses: [\"r:6380\"]\n    "+text+"\n"+
			"plans:\n  free: {limits: [{name: hourly, algorithm: gcra, quantity: 10, window: 1h}]}\n"))
		if err != nil {
			t.Errorf("%s: %v", text, err)
			continue
		}
		if c.Store.Redis.TLS.Enabled != enabled {
			t.Errorf("%s: enabled %v, want %v", text, c.Store.Redis.TLS.Enabled, enabled)
		}
		if tc, err := c.Store.Redis.TLS.Load(); err != nil || (tc != nil) != enabled || (tc != nil && tc.RootCAs != nil) {
			t.Errorf("%s: Load = %+v, %v; want the system's roots when enabled, nil otherwise", text, tc, err)
		}
	}
}

// What a Redis section cannot hold is refused at its line.
func TestRedisSecretsAndTLSRefused(t *testing.T) {
	dir := t.TempDir()
	for name, text := range map[string]string{"empty": "\n", "notpem": "not a certificate\n", "big": strings.Repeat("x", 70_000)} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct{ redis, want string }{
		{`password: x, password_file: empty`, "store.redis.password_file"},
		{`password_file: empty`, "empty is empty"},
		{`password_file: missing`, "no such file"},
		{`password_file: /dev/zero`, "is not a regular file"},
		{`password_file: big`, "holds more than 65536 bytes"},
		{`tls: {ca_file: /dev/zero}`, "is not a regular file"},
		{`tls: {cert_file: notpem}`, "cert_file and key_file go together"},
		{`tls: {ca_file: notpem}`, "holds no PEM certificate"},
		{`tls: {ca_file: missing}`, "no such file"},
		{`tls: {cert_file: notpem, key_file: notpem}`, "client certificate"},
		{`tls: yes-please`, "want true or false"},
		{`tls: {insecure_skip_verify: true}`, "unknown field"},
		{`sentinel_password: x`, "store.redis.sentinel_password: only sentinel mode has Sentinels"},
		{`mode: cluster, sentinel_username: u`, "store.redis.sentinel_username: only sentinel mode has Sentinels"},
		{`mode: sentinel, master_name: m, sentinel_password: x, sentinel_password_file: empty`, "set sentinel_password or sentinel_password_file, not both"},
		{`mode: sentinel, master_name: m, sentinel_password_file: missing`, "no such file"},
	} {
		file := filepath.Join(dir, "sluice.yaml")
		if err := os.WriteFile(file, []byte("store:\n  type: redis\n  redis: {addresses: [\"r:6379\"], "+tc.redis+"}\n"+
			"plans:\n  free: {limits: [{name: hourly, algorithm: gcra, quantity: 10, window: 1h}]}\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := config.Load(file)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "sluice.yaml:3:") {
			t.Errorf("%s: %v, want an error at line 3 saying %q", tc.redis, err, tc.want)
		}
	}
}

// A redis section serves only type: redis: without it (the store is memory
// by default) the section is refused at its line, not ignored, which would
// leave every instance counting alone.
func TestRedisSectionWithoutTypeRedisIsRefused(t *testing.T) {
	const plans = "plans:\n  free: {limits: [{name: m, algorithm: gcra, quantity: 10, window: 1m}]}\n"
	for _, store := range []string{
		"store:\n  redis: {addresses: [\"r:6379\"], instances: 3}\n",
		"store:\n  type: memory\n  redis: {addresses: [\"r:6379\"], instances: 3}\n",
	} {
		_, err := config.Parse("s.yaml", []byte(plans+store))
		if err == nil || !strings.Contains(err.Error(), "store.redis: applies only to type: redis") {
			t.Errorf("%q: %v, want store.redis: applies only to type: redis", store, err)
		}
	}
	_, err := config.Parse("s.yaml", []byte(plans+"store:\n  redis: {addresses: [\"r:6379\"]}\n"))
	if err == nil || !strings.HasPrefix(err.Error(), "s.yaml:4:3: store.redis:") {
		t.Errorf("error %v, want it at s.yaml:4:3", err)
	}
}

// A Redis address is host:port: one without a port, or with a port past
// 65535, would never be reached, and every decision would fall back to
// on_store_error. It is refused at its line.
func TestRedisAddressesNeedAHostAndPort(t *testing.T) {
	const plans = "plans:\n  free: {limits: [{name: m, algorithm: gcra, quantity: 10, window: 1m}]}\n"
	for _, c := range []struct{ addresses, want string }{
		{`["redis.internal"]`, `a.yaml:3:42: store.redis.addresses[0]: "redis.internal" is not a host:port address`},
		{`["r1:6379", "r2:99999"]`, `a.yaml:3:53: store.redis.addresses[1]: "r2:99999" is not a host:port address`},
		{`["r1:0"]`, `a.yaml:3:42: store.redis.addresses[0]: "r1:0" is not a host:port address`},
		{`[":6379"]`, `a.yaml:3:42: store.redis.addresses[0]: ":6379" is not a host:port address`},
		{`redis.internal`, `a.yaml:3:41: store.redis.addresses: "redis.internal" is not a host:port address`},
	} {
		_, err := config.Parse("a.yaml", []byte(plans+"store: {type: redis, redis: {addresses: "+c.addresses+"}}\n"))
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%s: %v, want %s", c.addresses, err, c.want)
		}
	}
	c, err := config.Parse("a.yaml", []byte(plans+"store: {type: redis, redis: {mode: cluster, addresses: [\"r1:6379\", \"[::1]:6380\", \"10.0.0.1:7000\"]}}\n"))
	if err != nil || len(c.Store.Redis.Addresses) != 3 {
		t.Errorf("valid addresses: %v", err)
	}
}

// What a Redis Cluster cannot do is refused at its line: it has database
// 0 alone (a db of another would fail only at start), and a write waits for
// no replica there (a script run decides one slot, and redis.WithReplicas
// is off on a Cluster), so replicas would be read and never applied.
func TestClusterRefusesDBAndReplicas(t *testing.T) {
	const plans = "plans:\n  free: {limits: [{name: m, algorithm: gcra, quantity: 10, window: 1m}]}\n"
	for _, c := range []struct{ redis, want string }{
		{`{mode: cluster, addresses: ["r:6379"], db: 3}`,
			`c.yaml:3:72: store.redis.db: a Redis Cluster has database 0 only`},
		{`{mode: cluster, addresses: ["r:6379"], replicas: 1}`,
			`c.yaml:3:78: store.redis.replicas: a Redis Cluster waits for no replica (a script run decides one slot): ` +
				`configure min-replicas-to-write on its masters instead`},
		{`{mode: cluster, addresses: ["r:6379"], replicas: 1, replica_wait: 20ms}`,
			`c.yaml:3:78: store.redis.replicas: a Redis Cluster waits for no replica (a script run decides one slot): ` +
				`configure min-replicas-to-write on its masters instead`},
	} {
		_, err := config.Parse("c.yaml", []byte(plans+"store: {type: redis, redis: "+c.redis+"}\n"))
		if err == nil || err.Error() != c.want {
			t.Errorf("%s:\n%v\nwant exactly:\n%s", c.redis, err, c.want)
		}
	}
	for _, ok := range []string{
		`{mode: cluster, addresses: ["r:6379"], db: 0, replicas: 0}`,
		`{mode: standalone, addresses: ["r:6379"], db: 3, replicas: 1}`,
	} {
		if _, err := config.Parse("c.yaml", []byte(plans+"store: {type: redis, redis: "+ok+"}\n")); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
}

// A Redis setting its mode does not read is refused at its line rather
// than read and never applied: the master set's name is sentinel mode's,
// and replica_wait bounds the wait of replicas, of which none is waited
// for without replicas.
func TestRedisSettingsOfAnotherModeAreRefused(t *testing.T) {
	const plans = "plans:\n  free: {limits: [{name: m, algorithm: gcra, quantity: 10, window: 1m}]}\n"
	for _, c := range []struct{ redis, want string }{
		{`{addresses: ["r:6379"], master_name: mymaster}`,
			`m.yaml:3:66: store.redis.master_name: only sentinel mode has a master set to name (mode is standalone)`},
		{`{mode: cluster, addresses: ["r:6379"], master_name: mymaster}`,
			`m.yaml:3:81: store.redis.master_name: only sentinel mode has a master set to name (mode is cluster)`},
		{`{addresses: ["r:6379"], replica_wait: 20ms}`,
			`m.yaml:3:67: store.redis.replica_wait: applies only with replicas above 0: without them no write waits`},
	} {
		_, err := config.Parse("m.yaml", []byte(plans+"store: {type: redis, redis: "+c.redis+"}\n"))
		if err == nil || err.Error() != c.want {
			t.Errorf("%s:\n%v\nwant exactly:\n%s", c.redis, err, c.want)
		}
	}
	for _, ok := range []string{
		`{mode: sentinel, addresses: ["r:26379"], master_name: mymaster}`,
		`{addresses: ["r:6379"], replicas: 1, replica_wait: 20ms}`,
	} {
		if _, err := config.Parse("m.yaml", []byte(plans+"store: {type: redis, redis: "+ok+"}\n")); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
}

// The store's timeout bounds a write's whole round trip, the wait for its
// replicas included: a replica_wait at or past it (100ms beside the 50ms
// default) loaded, and a write its replicas took longer than the timeout
// to hold failed as a timeout, never waited for as long as configured. It
// is refused at its line; a wait below the timeout loads.
func TestReplicaWaitIsBelowTheTimeout(t *testing.T) {
	const plans = "plans:\n  free: {limits: [{name: m, algorithm: gcra, quantity: 10, window: 1m}]}\n"
	for _, c := range []struct{ redis, want string }{
		{`{addresses: ["r:6379"], replicas: 1, replica_wait: 100ms}`,
			`w.yaml:3:80: store.redis.replica_wait: 100ms is not below timeout (50ms), which bounds a write's round trip, the wait for its replicas included: give a shorter wait, or a longer timeout`},
		{`{addresses: ["r:6379"], replicas: 1, replica_wait: 250ms, timeout: 250ms}`,
			`w.yaml:3:80: store.redis.replica_wait: 250ms is not below timeout (250ms), which bounds a write's round trip, the wait for its replicas included: give a shorter wait, or a longer timeout`},
	} {
		_, err := config.Parse("w.yaml", []byte(plans+"store: {type: redis, redis: "+c.redis+"}\n"))
		if err == nil || err.Error() != c.want {
			t.Errorf("%s:\n%v\nwant exactly:\n%s", c.redis, err, c.want)
		}
	}
	for _, ok := range []string{
		`{addresses: ["r:6379"], replicas: 1, replica_wait: 40ms}`,
		`{addresses: ["r:6379"], replicas: 1, replica_wait: 200ms, timeout: 250ms}`,
	} {
		if _, err := config.Parse("w.yaml", []byte(plans+"store: {type: redis, redis: "+ok+"}\n")); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
}

// With replicas and no replica_wait, each write waits for its replicas up
// to redis.DefaultReplicaWait (20ms), within the same timeout: a timeout
// at or below it loaded (replica_wait left out was never compared), and a
// write whose replicas took longer than the timeout failed as a timeout
// instead of waiting as long as the default says. It is refused at the
// timeout's line, as a replica_wait written at or past the timeout is.
func TestTheDefaultReplicaWaitIsBelowTheTimeout(t *testing.T) {
	const plans = "plans:\n  free: {limits: [{name: m, algorithm: gcra, quantity: 10, window: 1m}]}\n"
	for _, c := range []struct{ redis, want string }{
		{`{addresses: ["r:6379"], replicas: 1, timeout: 20ms}`,
			`w.yaml:3:75: store.redis.timeout: 20ms is not above replica_wait (20ms when left out), a wait the timeout bounds: give a longer timeout, or a shorter replica_wait`},
		{`{addresses: ["r:6379"], timeout: 5ms, replicas: 2}`,
			`w.yaml:3:62: store.redis.timeout: 5ms is not above replica_wait (20ms when left out), a wait the timeout bounds: give a longer timeout, or a shorter replica_wait`},
	} {
		_, err := config.Parse("w.yaml", []byte(plans+"store: {type: redis, redis: "+c.redis+"}\n"))
		if err == nil || err.Error() != c.want {
			t.Errorf("%s:\n%v\nwant exactly:\n%s", c.redis, err, c.want)
		}
	}
	for _, ok := range []string{
		`{addresses: ["r:6379"], replicas: 1, timeout: 21ms}`,
		`{addresses: ["r:6379"], replicas: 1, timeout: 10ms, replica_wait: 5ms}`,
		`{addresses: ["r:6379"], timeout: 5ms}`,
		`{addresses: ["r:6379"], replicas: 0, timeout: 5ms}`,
	} {
		if _, err := config.Parse("w.yaml", []byte(plans+"store: {type: redis, redis: "+ok+"}\n")); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
}

// Redis's WAIT counts whole milliseconds: a replica_wait of 1500us waited
// 1ms, and one of 500us waited 1ms, twice what it said. One that is not a
// whole number of milliseconds is refused at its line.
func TestReplicaWaitIsWholeMilliseconds(t *testing.T) {
	const plans = "plans:\n  free: {limits: [{name: m, algorithm: gcra, quantity: 10, window: 1m}]}\n"
	for _, c := range []struct{ redis, want string }{
		{`{addresses: ["r:6379"], replicas: 1, replica_wait: 1500us}`,
			`w.yaml:3:80: store.redis.replica_wait: 1.5ms is not a whole number of milliseconds, which Redis's WAIT counts in`},
		{`{addresses: ["r:6379"], replicas: 1, replica_wait: 500us}`,
			`w.yaml:3:80: store.redis.replica_wait: 500µs is not a whole number of milliseconds, which Redis's WAIT counts in`},
	} {
		_, err := config.Parse("w.yaml", []byte(plans+"store: {type: redis, redis: "+c.redis+"}\n"))
		if err == nil || err.Error() != c.want {
			t.Errorf("%s:\n%v\nwant exactly:\n%s", c.redis, err, c.want)
		}
	}
	if _, err := config.Parse("w.yaml", []byte(plans+"store: {type: redis, redis: {addresses: [\"r:6379\"], replicas: 1, replica_wait: 1ms}}\n")); err != nil {
		t.Errorf("replica_wait 1ms: %v", err)
	}
}
