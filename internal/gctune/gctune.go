// Package gctune keeps the Go garbage collector from starting a cycle while
// the heap is small. It changes the process's collector: only main packages
// (cmd/sluice, the bench module's server child) may call it; the server
// package, which programs embed, never does.
package gctune

import (
	"os"
	"runtime"
	"runtime/debug"
	rtmetrics "runtime/metrics"
	"sync"
)

// DefaultHeapFloor is the heap size below which `sluice serve` keeps the Go
// garbage collector from starting a cycle: 64 MiB.
//
// Why: the server's live heap is small (its configuration, the metrics, the
// in-memory store's keys), while every request allocates a few kilobytes
// that die with it. With Go's default GOGC=100 the collector starts a cycle
// each time the heap doubles its live size: under the Envoy load of make
// bench, about ten cycles a second, a tenth of the CPU, and mark assists in
// the tail latency. Letting the heap reach 64 MiB first costs at most that
// much memory; a process whose live heap is larger (a memory store of many
// keys) is collected exactly as with GOGC=100.
const DefaultHeapFloor = 64 << 20

// gcTuner raises the collector's target (debug.SetGCPercent) after every
// cycle so that the next one starts no earlier than when the heap reaches
// floor, and never earlier than the runtime's own setting would.
type gcTuner struct {
	floor  int64
	mu     sync.Mutex
	base   int  // the GC percent before start
	done   bool // stop was called: the hook ends
	sample []rtmetrics.Sample
}

// Start applies floor (bytes) to the process's collector and returns
// the function that restores the runtime's setting. It does nothing when
// floor ≤ 0, when the environment sets GOGC or GOMEMLIMIT (the operator's
// own settings win), or when the collector is off.
func Start(floor int64) (stop func()) {
	_, gogc := os.LookupEnv("GOGC")
	_, limit := os.LookupEnv("GOMEMLIMIT")
	if floor <= 0 || gogc || limit {
		return func() {}
	}
	base := debug.SetGCPercent(100)
	debug.SetGCPercent(base)
	if base < 0 {
		return func() {}
	}
	g := &gcTuner{floor: floor, base: base, sample: []rtmetrics.Sample{
		{Name: "/gc/heap/live:bytes"}, {Name: "/gc/scan/stack:bytes"}, {Name: "/gc/scan/globals:bytes"}}}
	g.mu.Lock()
	g.tuneLocked()
	g.mu.Unlock()
	g.arm()
	return func() {
		g.mu.Lock()
		defer g.mu.Unlock()
		if !g.done {
			g.done = true
			debug.SetGCPercent(g.base)
		}
	}
}

// gcSentinel is an object the hook lets die, to learn of a cycle. It is 16
// bytes: the runtime may pack smaller objects without pointers together,
// and a cleanup attached to one of those may never run.
type gcSentinel struct{ _ [16]byte }

// arm runs tune once the next cycle has found a fresh sentinel unreachable,
// and arms itself again, until stop.
func (g *gcTuner) arm() {
	runtime.AddCleanup(new(gcSentinel), func(g *gcTuner) {
		g.mu.Lock()
		defer g.mu.Unlock()
		if g.done {
			return
		}
		g.tuneLocked()
		g.arm()
	}, g)
}

// tuneLocked sets the GC percent from the last cycle's figures; the caller
// holds g.mu.
//
// The runtime starts the next cycle when the heap reaches
// live + (live + stacks + globals) × GOGC/100, so the floor is reached with
// GOGC = (floor − live) ÷ (live + stacks + globals) × 100. Before the first
// cycle the runtime's target is 4 MiB × GOGC/100, which the same formula
// gives with a live heap of 4 MiB and nothing else.
func (g *gcTuner) tuneLocked() {
	rtmetrics.Read(g.sample)
	var v [3]float64
	for i, m := range g.sample {
		if m.Value.Kind() == rtmetrics.KindUint64 {
			v[i] = float64(m.Value.Uint64())
		}
	}
	live, scanned := v[0], v[0]+v[1]+v[2]
	if live == 0 {
		live, scanned = 4<<20, 4<<20
	}
	percent := g.base
	if float64(g.floor) > live {
		percent = max(percent, int(min((float64(g.floor)-live)/scanned*100, 1e6)))
	}
	debug.SetGCPercent(percent)
}
