package redis

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/redistest"
)

// admission is one admitted check: the script's time (Redis's clock, µs
// since sluice.Epoch), its cost and its delay (µs).
type admission struct{ at, cost, delay int64 }

// Four independent stores, each with its own connection, and 64 goroutines
// each hammer one hot key per algorithm with Redis's own time. Whatever the
// interleaving, no algorithm admits more than it promises, checked against
// the times Redis decided at.
func TestDistributedInstancesNeverAdmitMoreThanPromised(t *testing.T) {
	t.Parallel()
	const round = 2 * time.Second
	t.Run("standalone", func(t *testing.T) {
		t.Parallel()
		srv := redistest.Standalone(t)
		hammerAndCheck(t, round, func() rueidis.Client { return srv.Client(t) })
	})
	t.Run("cluster", func(t *testing.T) {
		t.Parallel()
		c := redistest.Cluster(t)
		hammerAndCheck(t, round, func() rueidis.Client { return c.Client(t) })
	})
}

func hammerAndCheck(t *testing.T, d time.Duration, newClient func() rueidis.Client) {
	limits := []sluice.Limit{
		sluice.FixedWindow(50, 100*time.Millisecond),
		sluice.SlidingLog(50, 100*time.Millisecond),
		sluice.SlidingCounter(50, 100*time.Millisecond),
		sluice.TokenBucket(1000, time.Second).WithBurst(40),
		sluice.LeakyBucket(1000, time.Second).WithBurst(40),
		sluice.GCRA(700, 3*time.Second).WithBurst(25), // a unit every 4285.714…µs
		sluice.LeakyBucket(1000, time.Second).WithBurst(10).WithMaxWait(20 * time.Millisecond),
	}
	for i, l := range limits {
		limits[i] = l.Named(fmt.Sprintf("l%d", i)) // one key each
	}
	const instances = 4
	stores := make([]*Store, instances)
	for i := range stores {
		stores[i] = New(newClient(), WithTimeout(testTimeout))
	}
	// A loaded machine may not fill a window in d: hammer on, a round of
	// d at a time, until every windowed limit has filled one, for at
	// most 30 s.
	seen := make([][]admission, len(limits))
	for begin := time.Now(); ; {
		if !hammer(t, d, stores, limits, seen) {
			return
		}
		if everyWindowFilled(limits, seen) || time.Since(begin) > 30*time.Second {
			break
		}
		t.Logf("a windowed limit filled no window in %v: hammering on", time.Since(begin).Round(time.Millisecond))
	}
	for li, l := range limits {
		adm := seen[li]
		var units int64
		for _, a := range adm {
			units += a.cost
		}
		t.Logf("%v: admitted %d units in %d checks", l, units, len(adm))
		if len(adm) == 0 {
			t.Errorf("%v admitted nothing", l)
			continue
		}
		switch l.Algorithm() {
		case sluice.AlgorithmFixedWindow, sluice.AlgorithmSlidingCounter:
			checkAlignedWindows(t, l, adm)
		case sluice.AlgorithmSlidingLog:
			checkSlidingWindows(t, l, adm)
		default:
			checkBucket(t, l, adm)
		}
	}
}

// hammer has 64 goroutines per store each check a random limit's hot key
// for d, and appends what they admit to seen (by limit). It reports
// whether every call succeeded.
func hammer(t *testing.T, d time.Duration, stores []*Store, limits []sluice.Limit, seen [][]admission) bool {
	const goroutines = 64
	var (
		mu     sync.Mutex
		wg     sync.WaitGroup
		failed atomic.Bool
	)
	deadline := time.Now().Add(d)
	for i, store := range stores {
		for g := range goroutines {
			wg.Go(func() {
				r := rand.New(rand.NewPCG(uint64(i), uint64(g)+uint64(deadline.UnixNano())))
				mine := make([][]admission, len(limits))
				out := make([]sluice.Status, 1)
				for time.Now().Before(deadline) {
					li := r.IntN(len(limits))
					c := []sluice.Check{{Key: "hot", Limit: limits[li], Cost: 1 + r.Int64N(3)}}
					at, err := store.apply(context.Background(), c, out, nil)
					if err != nil {
						failed.Store(true)
						t.Error(err)
						return
					}
					if out[0].Allowed {
						mine[li] = append(mine[li], admission{at, c[0].Cost, int64(out[0].Delay / time.Microsecond)})
					}
				}
				mu.Lock()
				for li := range mine {
					seen[li] = append(seen[li], mine[li]...)
				}
				mu.Unlock()
			})
		}
	}
	wg.Wait()
	return !failed.Load()
}

// windowUnits sums adm by window aligned to Epoch.
func windowUnits(l sluice.Limit, adm []admission) map[int64]int64 {
	w := int64(l.Window() / time.Microsecond)
	per := map[int64]int64{}
	for _, a := range adm {
		per[a.at-((a.at%w)+w)%w] += a.cost
	}
	return per
}

// filled reports whether some aligned window holds exactly Q units.
func filled(l sluice.Limit, per map[int64]int64) bool {
	for _, n := range per {
		if n == l.Quantity() {
			return true
		}
	}
	return false
}

// everyWindowFilled reports whether each limit with aligned windows has
// filled one, the sign that the hammer contended on it.
func everyWindowFilled(limits []sluice.Limit, seen [][]admission) bool {
	for li, l := range limits {
		switch l.Algorithm() {
		case sluice.AlgorithmFixedWindow, sluice.AlgorithmSlidingCounter:
			if !filled(l, windowUnits(l, seen[li])) {
				return false
			}
		}
	}
	return true
}

// checkAlignedWindows: at most Q units in each window aligned to Epoch.
func checkAlignedWindows(t *testing.T, l sluice.Limit, adm []admission) {
	per := windowUnits(l, adm)
	for start, n := range per {
		if n > l.Quantity() {
			t.Errorf("%v: %d units in the window starting at %d", l, n, start)
		}
	}
	if !filled(l, per) {
		t.Errorf("%v: no window filled up: the test did not contend", l)
	}
}

// checkSlidingWindows: at most Q units in any span (t-W, t].
func checkSlidingWindows(t *testing.T, l sluice.Limit, adm []admission) {
	w := int64(l.Window() / time.Microsecond)
	slices.SortStableFunc(adm, func(a, b admission) int { return cmpInt(a.at, b.at) })
	var sum int64
	lo := 0
	for _, a := range adm {
		sum += a.cost
		for adm[lo].at <= a.at-w {
			sum -= adm[lo].cost
			lo++
		}
		if sum > l.Quantity() {
			t.Fatalf("%v: %d units in the window ending at %d", l, sum, a.at)
		}
	}
}

// checkBucket: in any span [s, e] at most Burst + ⌊(e-s)·Q/W⌋ units. For a
// queue the span is of the times the checks proceed (admission + delay).
func checkBucket(t *testing.T, l sluice.Limit, adm []admission) {
	q, w, b := l.Quantity(), int64(l.Window()/time.Microsecond), l.Burst()
	start := make([]admission, len(adm))
	for i, a := range adm {
		start[i] = admission{at: a.at + a.delay, cost: a.cost}
	}
	slices.SortStableFunc(start, func(a, b admission) int { return cmpInt(a.at, b.at) })
	for i := range start {
		var sum int64
		for j := i; j < len(start); j++ {
			sum += start[j].cost
			if allowed := b + (start[j].at-start[i].at)*q/w; sum > allowed {
				t.Fatalf("%v: %d units in [%d, %d], more than %d", l, sum, start[i].at, start[j].at, allowed)
			}
		}
	}
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
