package memory_test

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/memory"
)

// What a client costs on the Go heap, as docs/operations.md's sizing table
// says (a client keyed by its API key's SHA-256): the measured bytes may
// not pass the table's by more than a fifth.
func TestHeapPerClient(t *testing.T) {
	if raceEnabled {
		t.Skip("1.2 million decisions: make test runs this without the race detector (scripts/test)")
	}
	// A plan whose states all live through the test (a state is let go once
	// full again: a per-second limit's within a second).
	plan := []sluice.Limit{sluice.GCRA(1000, time.Hour).Named("per-hour"),
		sluice.SlidingCounter(600, time.Minute).Named("per-minute"), sluice.FixedWindow(10000, 24*time.Hour).Named("per-day")}
	const clients = 300000
	keys := make([]string, clients)
	for i := range keys {
		keys[i] = fmt.Sprintf("key:%064d", i)
	}
	for _, tc := range []struct {
		name   string
		limits []sluice.Limit
		table  int64 // bytes a client, docs/operations.md
	}{
		{"one limit", plan[:1], 98},
		{"a plan of three", plan, 265},
	} {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.GC()
		runtime.ReadMemStats(&before)
		st := memory.New(memory.WithSweepInterval(0), memory.WithMaxKeys(1<<21))
		lim := sluice.NewLimiter(st)
		checks := make([]sluice.Check, len(tc.limits))
		var d sluice.Decision
		for _, key := range keys {
			for j, l := range tc.limits {
				checks[j] = sluice.Check{Key: key, Limit: l, Cost: 1}
			}
			if err := lim.Allow(context.Background(), checks, &d); err != nil || !d.Allowed {
				t.Fatalf("%s: %v, admitted %v", tc.name, err, d.Allowed)
			}
		}
		runtime.GC()
		runtime.GC()
		runtime.ReadMemStats(&after)
		got := (int64(after.HeapAlloc) - int64(before.HeapAlloc)) / clients
		if held := st.Stats().Keys; held != clients*len(tc.limits) {
			t.Fatalf("%s: the store holds %d states, want %d", tc.name, held, clients*len(tc.limits))
		}
		st.Close()
		t.Logf("%s: %d bytes a client (the table: %d)", tc.name, got, tc.table)
		if got > tc.table*6/5 {
			t.Errorf("%s: %d bytes a client, more than a fifth above docs/operations.md's %d", tc.name, got, tc.table)
		}
	}
}
