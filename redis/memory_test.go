package redis_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/redistest"
	"github.com/sluice-dev/sluice/redis"
)

// usedMemory returns the server's INFO memory used_memory, in bytes.
func usedMemory(t *testing.T, c rueidis.Client) int64 {
	t.Helper()
	text, err := c.Do(context.Background(), c.B().Info().Section("memory").Build()).ToString()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(text, "\r\n") {
		if v, ok := strings.CutPrefix(line, "used_memory:"); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatalf("no used_memory in INFO memory:\n%s", text)
	return 0
}

// What a client costs in Redis, as docs/operations.md's sizing table says
// (a client keyed by its API key's SHA-256): the measured bytes may not
// pass the table's by more than a fifth.
func TestRedisMemoryPerClient(t *testing.T) {
	// A plan whose states all live through the test (a state is let go once
	// full again: a per-second limit's within a second).
	plan := []sluice.Limit{sluice.GCRA(1000, time.Hour).Named("per-hour"),
		sluice.SlidingCounter(600, time.Minute).Named("per-minute"), sluice.FixedWindow(10000, 24*time.Hour).Named("per-day")}
	for _, tc := range []struct {
		name             string
		clients, perEach int
		limits           []sluice.Limit
		table            int64 // bytes a client, docs/operations.md
	}{
		{"one limit", 10000, 1, plan[:1], 260},
		{"a plan of three", 10000, 1, plan, 696},
		{"a sliding log of 100", 1000, 100, []sluice.Limit{sluice.SlidingLog(1000, time.Hour)}, 2990},
	} {
		c := redistest.Standalone(t).Client(t)
		// The default 50 ms timeout is for production: a machine running
		// every test package at once has taken longer (a sliding log of
		// 100 entries per call).
		lim := sluice.NewLimiter(redis.New(c, redis.WithTimeout(testTimeout)))
		before := usedMemory(t, c)
		const workers = 8 // calls under way together, which the client pipelines
		var wg sync.WaitGroup
		errs := make(chan error, workers)
		for w := range workers {
			wg.Go(func() {
				var d sluice.Decision
				checks := make([]sluice.Check, len(tc.limits))
				for i := w; i < tc.clients; i += workers {
					key := fmt.Sprintf("key:%064d", i)
					for j, l := range tc.limits {
						checks[j] = sluice.Check{Key: key, Limit: l, Cost: 1}
					}
					for range tc.perEach {
						if err := lim.Allow(context.Background(), checks, &d); err != nil || !d.Allowed {
							errs <- fmt.Errorf("%s: %v, admitted %v", tc.name, err, d.Allowed)
							return
						}
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		got := (usedMemory(t, c) - before) / int64(tc.clients)
		t.Logf("%s: %d bytes a client (the table: %d)", tc.name, got, tc.table)
		if got > tc.table*6/5 {
			t.Errorf("%s: %d bytes a client, more than a fifth above docs/operations.md's %d", tc.name, got, tc.table)
		}
	}
}
