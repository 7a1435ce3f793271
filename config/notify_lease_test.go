package config_test

import (
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/config"
)

// A notified limit may not lease from Redis: a leased status's Remaining is
// the shared remainder and the instance's own units, so the units other
// instances lease and have not spent would be told as used (a share told
// before the client used it, under the id of its real crossing). The
// refusal is at the notify entry, whether the limit leases by the store's
// lease: or its own, and lease: off on the limit lifts it.
func TestNotifyRefusesALimitLeasedFromRedis(t *testing.T) {
	const store = "store:\n  type: redis\n  redis: {addresses: [\"127.0.0.1:6379\"]%s}\n"
	const notify = "notify: {url: \"https://x.example/\", limits: [%s]}\n"
	conf := func(storeLease, limits, limit string) string {
		return strings.Replace(store, "%s", storeLease, 1) + limits + strings.Replace(notify, "%s", limit, 1)
	}
	for _, c := range []struct{ name, yaml, want string }{
		{"by the store's lease", conf(", lease: auto",
			"plans:\n  free: {limits: [{name: per-day, algorithm: fixed-window, quantity: 2, window: 1d}]}\n", "per-day"),
			`t.yaml:6:46: notify.limits[0]: "per-day" is leased from Redis (lease: auto) in plan free`},
		{"by its own lease", conf("",
			"plans:\n  free: {limits: [{name: per-day, algorithm: fixed-window, quantity: 2, window: 1d, lease: auto}]}\n", "per-day"),
			`t.yaml:6:46: notify.limits[0]: "per-day" is leased from Redis (lease: auto) in plan free`},
		{"a rule's", conf(", lease: auto",
			"plans:\n  free: {limits: [{name: per-day, algorithm: fixed-window, quantity: 2, window: 1d, lease: off}]}\n"+
				"rules:\n  - name: scans\n    match: {paths: [\"/\"]}\n    key: [ip]\n"+
				"    limits: [{name: hits, algorithm: fixed-window, quantity: 5, window: 1h}]\n", "scans.hits"),
			`t.yaml:11:46: notify.limits[0]: "scans.hits" is leased from Redis (lease: auto) in rule scans`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := config.Parse("t.yaml", []byte(c.yaml))
			if err == nil || !strings.HasPrefix(err.Error(), c.want) {
				t.Fatalf("error:\n%v\nwant one starting:\n%s", err, c.want)
			}
		})
	}
	ok := conf(", lease: auto", "plans:\n  free: {limits: [{name: per-day, algorithm: fixed-window, quantity: 2, window: 1d, lease: off}]}\n", "per-day")
	if _, err := config.Parse("t.yaml", []byte(ok)); err != nil {
		t.Errorf("a limit that says lease: off: %v", err)
	}
}

// A running store's lease settings hold until the next start: a reload
// that notifies a limit that store leases is judged against them
// (NotifiedLeasedBy), at its notify entry, though the new file says
// lease: off; one the running store does not lease passes.
func TestNotifiedLeasedByJudgesTheRunningStoresLeases(t *testing.T) {
	const text = "store:\n  type: redis\n  redis: {addresses: [\"127.0.0.1:6379\"]}\n" +
		"plans:\n  free: {limits: [{name: per-day, algorithm: fixed-window, quantity: 2, window: 1d}]}\n" +
		"notify: {url: \"https://x.example/\", limits: [per-day]}\n"
	cfg, err := config.Parse("t.yaml", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	running := cfg.Store
	running.Redis.Lease = "auto"
	err = cfg.NotifiedLeasedBy(running)
	if want := `t.yaml:6:46: notify.limits[0]: "per-day" is leased from Redis by the running store`; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("notifying a limit the running store leases: %v; want an error starting %s", err, want)
	}
	if err := cfg.NotifiedLeasedBy(cfg.Store); err != nil {
		t.Errorf("notifying a limit the running store does not lease: %v", err)
	}
	memory := cfg.Store
	memory.Type = "memory"
	if err := cfg.NotifiedLeasedBy(memory); err != nil {
		t.Errorf("a running memory store: %v", err)
	}
}
