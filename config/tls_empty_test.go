package config_test

import (
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/config"
)

// A tls: key with nothing under it (null) is refused at its line, saying
// what to write: for Redis or the upstream, tls: true or tls: {} turns TLS
// on with the system's roots and tls: false leaves it off; a listener has
// no TLS without a certificate, so its tls: must give one, and an empty
// mapping is refused as well.
func TestEmptyTLSIsRefusedAtItsLine(t *testing.T) {
	const plans = "plans:\n  free: {limits: [{name: hourly, algorithm: gcra, quantity: 10, window: 1h}]}\n"
	for _, c := range []struct{ yaml, want string }{
		{"store:\n  type: redis\n  redis:\n    addresses: [\"r:6380\"]\n    tls:\n" + plans,
			`t.yaml:5:9: store.redis.tls: empty: write true (or {}) for TLS with the system's roots, false for none, or its files`},
		{"store:\n  type: redis\n  redis:\n    addresses: [\"r:6380\"]\n    tls: ~\n" + plans,
			`t.yaml:5:10: store.redis.tls: empty`},
		{"upstream: https://api.internal\nupstream_tls:\n" + plans,
			`t.yaml:2:14: upstream_tls: empty: write true`},
		{"tls:\n" + plans,
			`t.yaml:1:5: tls: empty: give cert_file and key_file for HTTPS, or remove tls: for plain HTTP`},
		{"tls: {}\n" + plans,
			`t.yaml:1:6: tls: empty: give cert_file and key_file`},
		{"admin:\n  tls:\n" + plans,
			`t.yaml:2:7: admin.tls: empty: give cert_file and key_file`},
		{"admin:\n  tls: {}\n" + plans,
			`t.yaml:2:8: admin.tls: empty: give cert_file and key_file`},
	} {
		_, err := config.Parse("t.yaml", []byte(c.yaml))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want it to contain %s", c.yaml, err, c.want)
		}
	}
	// An empty mapping is TLS with the system's roots where sluice is the client.
	c, err := config.Parse("t.yaml", []byte("store:\n  type: redis\n  redis:\n    addresses: [\"r:6380\"]\n    tls: {}\n"+plans))
	if err != nil || !c.Store.Redis.TLS.Enabled {
		t.Errorf("tls: {} for Redis: %v, enabled %v; want TLS with the system's roots", err, c != nil && c.Store.Redis.TLS.Enabled)
	}
}
