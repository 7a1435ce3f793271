package config_test

import (
	"crypto/sha256"
	"fmt"
	"testing"

	"github.com/sluice-dev/sluice/config"
)

// A configuration is judged by the store in force, which a reload keeps
// whatever the file's store section says: AlgorithmsAgreeOn refuses, when
// that store is Redis, each plan's limit and key's own limit whose ID is
// that of a limit of another algorithm before it, at its entry's path (a
// key's own limit by the key's name), naming the other and the store
// running, though the file says memory; a key that only takes its plan's
// limits is not named again. On memory it accepts them all.
func TestAlgorithmsAgreeOnTheStoreInForce(t *testing.T) {
	yaml := "store: {type: memory}\n" + twoPlans(fixedPerMinute, gcraPerMinute) +
		acmeOn("free", "{name: per-minute, algorithm: sliding-window-log, quantity: 30, window: 1m}") +
		fmt.Sprintf("  - {name: bob, sha256: %x, plan: pro}\n", sha256.Sum256([]byte("bob-secret")))
	cfg, err := config.Parse("t.yaml", []byte(yaml))
	if err != nil {
		t.Fatalf("the file says memory, and is judged by it: %v", err)
	}
	if err := cfg.AlgorithmsAgreeOn(config.Store{Type: "memory"}); err != nil {
		t.Errorf("on memory: %v", err)
	}
	const running = ", and the store running is Redis (a reload keeps the store it started on): "
	want := []string{
		`t.yaml: plans.pro.limits[0]: "per-minute" is also the ID of plans.free.limits[0], a fixed-window, and this one is a gcra` +
			running + whyRefused,
		`t.yaml: key "acme"'s own limit "per-minute": "per-minute" is also the ID of plans.free.limits[0], a fixed-window, ` +
			`and this one is a sliding-window-log` + running + whyRefused,
	}
	errs := config.Errors(cfg.AlgorithmsAgreeOn(config.Store{Type: "redis"}))
	if len(errs) != len(want) {
		t.Fatalf("on Redis: %d errors %v, want %d", len(errs), errs, len(want))
	}
	for i, e := range errs {
		if e.Error() != want[i] {
			t.Errorf("on Redis, error %d:\n%v\nwant:\n%s", i, e, want[i])
		}
	}
}

// Limits the Redis store keeps apart are accepted on it by
// AlgorithmsAgreeOn as by Load: plans sharing an ID of one algorithm, a
// limit of an id: of its own, a key's own limit of its plans' algorithm.
func TestAlgorithmsAgreeOnRedisAcceptWhatItKeepsApart(t *testing.T) {
	yaml := onRedis + twoPlans(fixedPerMinute, "id: pro-per-minute, "+gcraPerMinute) +
		acmeOn("free", "{name: per-minute, algorithm: fixed-window, quantity: 30, window: 1m}")
	cfg, err := config.Parse("t.yaml", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.AlgorithmsAgreeOn(cfg.Store); err != nil {
		t.Errorf("on Redis: %v", err)
	}
}
