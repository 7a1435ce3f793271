package server

import (
	"os"
	"runtime"
	"runtime/debug"
	rtmetrics "runtime/metrics"
	"sync"
)

// DefaultGCHeapFloor is the heap size below which a serving Server keeps
// the Go garbage collector from starting a cycle, unless Options.GCHeapFloor
// or the environment (GOGC, GOMEMLIMIT) says otherwise: 64 MiB.
//
// Why: the server's live heap is small (its configuration, the metrics, the
// in-memory store's keys), while every request allocates a few kilobytes
// that die with it (gRPC's and net/http's per-request state). With Go's
// default GOGC=100 the collector starts a cycle each time the heap doubles
// its live size, which under the Envoy load of make bench (a live heap of a
// few MB, about 170 MB/s of garbage) meant about 10 cycles a second: about
// a tenth of the server's CPU, and requests that allocate during a cycle
// pay for marking too (assists), which shows in the tail latency. Letting
// the heap reach 64 MiB first costs at most that much memory and cuts the
// cycles several times over; a server whose live heap is larger (a memory
// store of many keys) is collected exactly as with GOGC=100.
const DefaultGCHeapFloor = 64 << 20

// gcTuner raises the garbage collector's target (debug.SetGCPercent) after
// every cycle so that the next cycle starts no earlier than when the heap
// reaches the floor, and never earlier than the runtime's own setting
// would (see tuneLocked). There is one per
// process (gcFloor), shared by the Servers serving in it (the highest floor
// wins); the last to stop restores the runtime's setting.
type gcTuner struct {
	mu     sync.Mutex
	floors map[*Server]int64
	base   int    // the GC percent before the first start
	epoch  uint64 // bumped when the last user stops: older hooks end
	sample []rtmetrics.Sample
}

var gcFloor gcTuner

// gcEnvSet reports whether the operator tuned the collector through the
// environment (GOGC or GOMEMLIMIT), in which case the server leaves it alone.
func gcEnvSet() bool {
	_, gogc := os.LookupEnv("GOGC")
	_, limit := os.LookupEnv("GOMEMLIMIT")
	return gogc || limit
}

// startGCFloor applies s's heap floor while s serves and returns the
// function that removes it. It does nothing (and returns a no-op) when the
// floor is off, the environment sets GOGC or GOMEMLIMIT, or the collector
// is off.
func (s *Server) startGCFloor() (stop func()) {
	floor := s.opts.GCHeapFloor
	if floor == 0 {
		floor = DefaultGCHeapFloor
	}
	if floor < 0 || gcEnvSet() {
		return func() {}
	}
	g := &gcFloor
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.floors) == 0 {
		base := debug.SetGCPercent(100)
		debug.SetGCPercent(base)
		if base < 0 {
			return func() {}
		}
		g.base = base
		g.floors = map[*Server]int64{}
		g.sample = []rtmetrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/gc/scan/stack:bytes"}, {Name: "/gc/scan/globals:bytes"}}
		g.floors[s] = floor
		g.tuneLocked()
		g.arm(g.epoch)
	} else {
		g.floors[s] = floor
		g.tuneLocked()
	}
	return func() { g.stop(s) }
}

// stop removes s's floor, restoring the runtime's setting after the last.
func (g *gcTuner) stop(s *Server) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if _, ok := g.floors[s]; !ok {
		return
	}
	delete(g.floors, s)
	if len(g.floors) == 0 {
		g.epoch++
		debug.SetGCPercent(g.base)
		return
	}
	g.tuneLocked()
}

// gcSentinel is an object that the hook lets die, to learn of a cycle. It
// is 16 bytes: the runtime may pack smaller objects without pointers
// together, and a cleanup attached to one of those may never run.
type gcSentinel struct{ _ [16]byte }

// arm runs tune once the next GC cycle has found a fresh sentinel
// unreachable, and arms itself again, until the epoch changes.
func (g *gcTuner) arm(epoch uint64) {
	runtime.AddCleanup(new(gcSentinel), func(epoch uint64) {
		g.mu.Lock()
		defer g.mu.Unlock()
		if g.epoch != epoch || len(g.floors) == 0 {
			return
		}
		g.tuneLocked()
		g.arm(epoch)
	}, epoch)
}

// tuneLocked sets the GC percent from the last cycle's figures. The
// caller holds g.mu and g.floors is not empty.
//
// The runtime starts the next cycle when the heap reaches
// live + (live + stacks + globals) × GOGC/100 (the live heap, stacks and
// globals scanned by the last cycle), so the floor is reached with
// GOGC = (floor − live) ÷ (live + stacks + globals) × 100. Before the first
// cycle the runtime's target is 4 MiB × GOGC/100, which the same formula
// gives with a live heap of 4 MiB and nothing else.
func (g *gcTuner) tuneLocked() {
	var floor int64
	for _, f := range g.floors {
		floor = max(floor, f)
	}
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
	if float64(floor) > live {
		percent = max(percent, int(min((float64(floor)-live)/scanned*100, 1e6)))
	}
	debug.SetGCPercent(percent)
}
