package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// sluice check warns of each enforcing limit below store.redis.instances
// under on_store_error: local: while Redis is down each instance decides by
// its share, rounded up to 1 unit, so the instances together admit more
// than the limit (package redis's bounds). The warning names the limit and
// what the outage admits; a limit at or above the count, a shadow limit, a
// single instance and a policy other than local draw none.
func TestCheckWarnsOfALimitBelowTheInstancesCount(t *testing.T) {
	plans := "plans:\n  free: {limits: [" +
		"{name: in-flight, algorithm: concurrency, quantity: 1, window: 5m}, " +
		"{name: per-minute, algorithm: fixed-window, quantity: 3, window: 1m}, " +
		"{name: bursty, algorithm: gcra, quantity: 60, window: 1m, burst: 2}, " +
		"{name: roomy, algorithm: fixed-window, quantity: 4, window: 1h}, " +
		"{name: watched, algorithm: fixed-window, quantity: 1, window: 1m, shadow: true}]}\n"
	store := func(extra string) string {
		return "store:\n  type: redis\n  redis: {addresses: [\"r:6379\"]" + extra + "}\n"
	}
	warnings := []string{
		"WARNING: in-flight (plan free): quantity 1 is below store.redis.instances (4): while Redis is down each instance decides by its share, at least 1, so together they admit 4 at once, not 1 (5 with those Redis held)\n",
		"WARNING: per-minute (plan free): quantity 3 is below store.redis.instances (4): while Redis is down each instance decides by its share, at least 1, so together they admit 4 per 1m, not 3\n",
		"WARNING: bursty (plan free): burst 2 is below store.redis.instances (4): while Redis is down each instance decides by its share, at least 1, so together they admit a burst of 4, not 2\n",
	}
	for _, tc := range []struct {
		name  string
		store string
		want  []string
	}{
		{"four instances deciding locally", store(", instances: 4"), warnings},
		{"one instance", store(""), nil},
		{"four instances that deny while Redis is down", store(", instances: 4, on_store_error: deny"), nil},
		{"the memory store", "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "sluice.yaml")
			if err := os.WriteFile(file, []byte(tc.store+plans), 0o600); err != nil {
				t.Fatal(err)
			}
			var out, errOut bytes.Buffer
			if code := run(context.Background(), []string{"check", file}, &out, &errOut); code != 0 {
				t.Fatalf("exit %d: %s", code, errOut.String())
			}
			for _, want := range tc.want {
				if !strings.Contains(out.String(), want) {
					t.Errorf("output lacks %q:\n%s", want, out.String())
				}
			}
			if got := strings.Count(out.String(), "is below store.redis.instances"); got != len(tc.want) {
				t.Errorf("%d warnings of limits below the instances, want %d:\n%s", got, len(tc.want), out.String())
			}
		})
	}
}
