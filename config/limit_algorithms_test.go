package config_test

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/config"
)

// onRedis is the store section of a Redis store.
const onRedis = "store: {type: redis, redis: {addresses: [\"r:6379\"]}}\n"

// twoPlans is free and pro, each with a limit of the given body (a YAML
// flow mapping without its braces), on its fourth and seventh line.
func twoPlans(free, pro string) string {
	return fmt.Sprintf("plans:\n  free:\n    limits:\n      - {%s}\n  pro:\n    limits:\n      - {%s}\n", free, pro)
}

// acmeOn is the keys: entry of the key "acme-secret" on plan, with the
// limits given (YAML flow mappings).
func acmeOn(plan, limits string) string {
	return fmt.Sprintf("keys:\n  - {name: acme, sha256: %x, plan: %s, limits: [%s]}\n", sha256.Sum256([]byte("acme-secret")), plan, limits)
}

const (
	fixedPerMinute = "name: per-minute, algorithm: fixed-window, quantity: 3, window: 1m"
	gcraPerMinute  = "name: per-minute, algorithm: gcra, quantity: 3, window: 1m"
	// whyRefused ends the error of a limit ID of two algorithms.
	whyRefused = "Redis keeps one state per client and ID, so a client decided under both in turn would start each afresh (give one an id: of its own)"
)

// The Redis store keeps one state per client and limit ID, holding its
// algorithm, and a state of another algorithm counts as fresh (package
// redis): a client decided in turn under two limits of one ID and two
// algorithms — tokens naming two plans, a trusted proxy's plan header, the
// decision API naming a plan for a subject, a key's own limit beside its
// plan's — would start each afresh at every turn, limited by neither. On
// a Redis store such a configuration is refused, once, at the later limit's
// id: (else its name:), the error naming the earlier one and both
// algorithms: plans' limits, keys' own limits (in the keys file too),
// whether they share the ID by name or by id:.
func TestALimitIDOfTwoAlgorithmsIsRefusedOnRedis(t *testing.T) {
	for _, c := range []struct{ name, yaml, want string }{
		{"two plans' limits of one name", onRedis + twoPlans(fixedPerMinute, gcraPerMinute),
			`t.yaml:8:16: plans.pro.limits[0].name: "per-minute" is also the ID of plans.free.limits[0] (line 5), ` +
				`a fixed-window, and this one is a gcra: ` + whyRefused},
		{"two plans' limits of one id", onRedis + twoPlans("name: a, id: shared, algorithm: sliding-window-log, quantity: 3, window: 1m",
			"name: b, id: shared, algorithm: token-bucket, quantity: 3, window: 1m"),
			`t.yaml:8:23: plans.pro.limits[0].id: "shared" is also the ID of plans.free.limits[0] (line 5), ` +
				`a sliding-window-log, and this one is a token-bucket: ` + whyRefused},
		{"a key's own limit replacing its plan's", onRedis + twoPlans(fixedPerMinute, fixedPerMinute) + acmeOn("pro", "{"+gcraPerMinute+"}"),
			`t.yaml:10:119: keys[0].limits[0].name: "per-minute" is also the ID of plans.free.limits[0] (line 5), ` +
				`a fixed-window, and this one is a gcra: ` + whyRefused},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := config.Parse("t.yaml", []byte(c.yaml))
			if err == nil || err.Error() != c.want {
				t.Errorf("error:\n%v\nwant only:\n%s", err, c.want)
			}
		})
	}
	// A key of the keys file is refused there, naming the configuration's
	// limit with its file.
	dir := t.TempDir()
	file := filepath.Join(dir, "sluice.yaml")
	keys := fmt.Sprintf("- {name: acme, sha256: %x, plan: free, limits: [{%s}]}\n", sha256.Sum256([]byte("acme-secret")),
		"name: per-minute, algorithm: sliding-window-counter, quantity: 30, window: 1m")
	if err := os.WriteFile(filepath.Join(dir, "keys.yaml"), []byte(keys), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte(onRedis+twoPlans(fixedPerMinute, fixedPerMinute)+"keys_file: keys.yaml\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := config.Load(file)
	want := filepath.Join(dir, "keys.yaml") + `:1:118: [0].limits[0].name: "per-minute" is also the ID of plans.free.limits[0] of ` +
		file + ` (line 5), a fixed-window, and this one is a sliding-window-counter: ` + whyRefused
	if err == nil || err.Error() != want {
		t.Errorf("keys file: error:\n%v\nwant only:\n%s", err, want)
	}
}

// What the Redis store keeps apart, and every configuration on the memory
// store (which keeps a state per client, ID and algorithm), is accepted:
// plans sharing an ID of one algorithm (other quantities clamp one state),
// a limit given an id: of its own, a global limit whose ID is a plan's
// (the global limits are kept under a subject of their own), and limits of
// one ID and two algorithms when the store is memory, said or by default.
func TestLimitIDsTheStoreKeepsApartAreAccepted(t *testing.T) {
	for _, c := range []struct{ name, yaml string }{
		{"one algorithm, other quantities", onRedis + twoPlans(fixedPerMinute, strings.Replace(fixedPerMinute, "quantity: 3", "quantity: 100", 1))},
		{"an id: of its own", onRedis + twoPlans(fixedPerMinute, "id: pro-per-minute, "+gcraPerMinute)},
		{"a key's own limit of its own id", onRedis + twoPlans(fixedPerMinute, fixedPerMinute) + acmeOn("pro", "{id: acme-per-minute, "+gcraPerMinute+"}")},
		{"a key's own limit of the plans' algorithm", onRedis + twoPlans(fixedPerMinute, fixedPerMinute) +
			acmeOn("pro", "{"+strings.Replace(fixedPerMinute, "quantity: 3", "quantity: 30", 1)+"}")},
		{"a global limit of a plan's ID", onRedis + twoPlans(fixedPerMinute, fixedPerMinute) +
			"global: [{name: everyone, id: per-minute, algorithm: gcra, quantity: 1000, window: 1m}]\n"},
		{"the memory store", "store: {type: memory}\n" + twoPlans(fixedPerMinute, gcraPerMinute) + acmeOn("pro", "{name: per-minute, algorithm: sliding-window-log, quantity: 30, window: 1m}")},
		{"the default store", twoPlans(fixedPerMinute, gcraPerMinute)},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, err := config.Parse("t.yaml", []byte(c.yaml)); err != nil {
				t.Errorf("refused: %v", err)
			}
		})
	}
}
