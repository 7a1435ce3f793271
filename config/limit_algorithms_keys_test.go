package config_test

import (
	"crypto/sha256"
	"fmt"
	"testing"

	"github.com/sluice-dev/sluice/config"
)

// Two listed keys, each with a limit of its own that no plan has, of one
// name and two algorithms: each key's client is decided under its own key's
// limits (its subject is "key:" and its key's SHA-256), or under a plan
// named for it (the decision API, a trusted plan header), never under the
// other key's own limits. No client can meet both states, so Redis's one
// state per client and ID is never read by the other algorithm: the
// configuration is sound, and config must not refuse it.
func TestTwoKeysOwnLimitsOfOneIDAndTwoAlgorithmsAreAcceptedOnRedis(t *testing.T) {
	yaml := "store: {type: redis, redis: {addresses: [\"r:6379\"]}}\n" +
		"plans:\n  free:\n    limits:\n      - {name: per-minute, algorithm: fixed-window, quantity: 3, window: 1m}\n" +
		"keys:\n" +
		fmt.Sprintf("  - {name: acme, sha256: %x, plan: free, limits: [{name: deal, algorithm: token-bucket, quantity: 10, window: 1s}]}\n", sha256.Sum256([]byte("acme-secret"))) +
		fmt.Sprintf("  - {name: initech, sha256: %x, plan: free, limits: [{name: deal, algorithm: gcra, quantity: 20, window: 1s}]}\n", sha256.Sum256([]byte("initech-secret")))
	cfg, err := config.Parse("t.yaml", []byte(yaml))
	if err != nil {
		t.Fatalf("refused: %v", err)
	}
	// A reload judged by a running Redis store weighs them alike.
	if err := cfg.AlgorithmsAgreeOn(cfg.Store); err != nil {
		t.Errorf("AlgorithmsAgreeOn(redis): %v", err)
	}
}
