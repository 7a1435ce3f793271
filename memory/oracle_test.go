package memory_test

import (
	"context"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/algo"
	"github.com/sluice-dev/sluice/memory"
)

// A store swept after every call, whose clock steps back as well as
// forward, and whose callers refund charges and release leases, decides
// every call as sluice.DecideBatch does on a map of states, where a call,
// a refund or a release reads a state past its expiry as absent, whether
// or not a sweep has run since, and a refund leaves alone a state built
// after one that expired still counting something (a clock stepped back
// reaches it): one that a call meets or the sweep forgets past its expiry
// is noted at the µs before it, for two windows and a second.
func TestPropertyStoreIsDecideBatchOnAMap(t *testing.T) {
	limits := []sluice.Limit{
		sluice.GCRA(5, time.Second).Named("a"),
		sluice.GCRA(2, time.Second).WithBurst(4).Named("a"), // same ID and algorithm, other parameters
		sluice.TokenBucket(3, 200*time.Millisecond).Named("b"),
		sluice.LeakyBucket(4, time.Second).WithMaxWait(500 * time.Millisecond).Named("c"),
		sluice.FixedWindow(3, time.Second).Named("d"),
		sluice.FixedWindow(5, 1500*time.Millisecond).Named("d2"),
		sluice.SlidingCounter(4, time.Second).Named("e"),
		sluice.SlidingLog(3, time.Second).Named("f"),
		sluice.Concurrency(2, time.Second).Named("g"),
	}
	type sk struct {
		key string
		id  string
		alg sluice.Algorithm
	}
	rapid.Check(t, func(t *rapid.T) {
		clock := newClock()
		store := memory.New(memory.WithClock(clock.Now), memory.WithSweepInterval(0), memory.WithShards(2))
		defer store.Close()
		states := map[sk]sluice.State{}
		// expiry is when the store may forget a state: its back-at-full
		// time rounded up to a whole second (see expSecs).
		expiry := map[sk]int64{}
		setExp := func(k sk, now int64, reset time.Duration) {
			exp := now + int64(reset/time.Microsecond)
			expiry[k] = max((exp+999_999)/1_000_000, 0) * 1_000_000
		}
		// notes are the expiries of states that still counted something,
		// met by a call or swept (see noteExpired), as the store keeps them.
		type note struct{ at, until int64 }
		notes := map[sk]note{}
		noteExpired := func(k sk, l sluice.Limit) {
			st, exp := states[k], expiry[k]
			if st.A == 0 && st.B == 0 && len(st.Log) == 0 {
				return
			}
			w, sec := int64(l.Window()/time.Microsecond), int64(time.Second/time.Microsecond)
			var life int64
			switch l.Algorithm() {
			case sluice.AlgorithmFixedWindow, sluice.AlgorithmSlidingCounter:
				life = 2*w + sec
			case sluice.AlgorithmSlidingLog:
				life = w + sec
			default:
				return
			}
			at, until := exp-1, exp-1+life
			if r, ok := notes[k]; ok && r.until > at {
				at = max(at, r.at)
				until = max(at+life, r.until)
			}
			notes[k] = note{at, until}
		}
		limitOf := map[sk]sluice.Limit{}
		ctx := context.Background()
		type receipt struct {
			c       sluice.Check
			charged int64
			lease   int64
		}
		var receipts []receipt
		for step := range rapid.IntRange(1, 80).Draw(t, "steps") {
			switch rapid.IntRange(0, 9).Draw(t, "clock") {
			case 0:
				clock.Advance(-time.Duration(rapid.Int64Range(0, 3000).Draw(t, "back")) * time.Millisecond)
			case 1:
				clock.Advance(time.Duration(rapid.Int64Range(0, 5000).Draw(t, "far")) * time.Millisecond)
			default:
				clock.Advance(time.Duration(rapid.Int64Range(0, 400).Draw(t, "ms")) * time.Millisecond)
			}
			now := sluice.MicrosSinceEpoch(clock.Now())
			// live reports whether the store holds k's state and reads it
			// at now: not past its expiry.
			live := func(k sk) bool {
				exp, ok := expiry[k]
				return ok && exp > now
			}
			if len(receipts) > 0 && rapid.IntRange(0, 3).Draw(t, "undo") == 0 {
				i := rapid.IntRange(0, len(receipts)-1).Draw(t, "receipt")
				r := receipts[i]
				receipts = append(receipts[:i], receipts[i+1:]...)
				k := sk{r.c.Key, r.c.Limit.ID(), r.c.Limit.Algorithm()}
				// A receipt from before a noted expiry: the state since
				// never counted it. A refund reaching a state drops a
				// note that has lapsed, as the store does.
				nt, noted := notes[k]
				if noted && live(k) && nt.until <= now {
					delete(notes, k)
					noted = false
				}
				before := noted && r.lease == 0 && r.charged <= nt.at
				if st := states[k]; live(k) && !before {
					if r.lease != 0 {
						states[k] = r.c.Limit.Release(st, r.lease, r.c.Cost)
					} else {
						l := r.c.Limit
						p, _ := algo.NewParams(algo.Kind(l.Algorithm()), l.Quantity(), int64(l.Window()/time.Microsecond), l.Burst(), 0)
						states[k] = sluice.State(algo.Refund(&p, algo.State(st), r.charged, r.c.Cost))
					}
					// Never earlier: the limit may not be the one that
					// last set it.
					_, peek, _ := r.c.Limit.Decide(states[k], now, 0)
					was := expiry[k]
					setExp(k, now, peek.ResetAfter)
					expiry[k] = max(expiry[k], was)
				}
				var err error
				if r.lease != 0 {
					err = store.Release(ctx, []sluice.Check{r.c}, []int64{r.lease})
				} else {
					err = store.Refund(ctx, []sluice.Check{r.c}, []int64{r.charged})
				}
				if err != nil {
					t.Fatal(err)
				}
				continue
			}
			n := rapid.IntRange(1, 3).Draw(t, "checks")
			checks := make([]sluice.Check, 0, n)
			seen := map[sk]bool{}
			for len(checks) < n {
				key := rapid.SampledFrom([]string{"k1", "k2", "k3"}).Draw(t, "key")
				l := rapid.SampledFrom(limits).Draw(t, "limit")
				k := sk{key, l.ID(), l.Algorithm()}
				if seen[k] {
					break
				}
				seen[k] = true
				checks = append(checks, sluice.Check{Key: key, Limit: l, Cost: rapid.Int64Range(0, 3).Draw(t, "cost")})
			}
			n = len(checks)
			for _, c := range checks {
				k := sk{c.Key, c.Limit.ID(), c.Limit.Algorithm()}
				if exp, ok := expiry[k]; ok && exp <= now {
					noteExpired(k, limitOf[k])
				}
				limitOf[k] = c.Limit
			}
			want := make([]sluice.Status, n)
			st := make([]sluice.State, n)
			for i, c := range checks {
				if k := (sk{c.Key, c.Limit.ID(), c.Limit.Algorithm()}); live(k) {
					st[i] = states[k]
				}
			}
			changed, err := sluice.DecideBatch(checks, st, now, want)
			if err != nil {
				t.Fatal(err)
			}
			blocked := false
			for i := range want {
				blocked = blocked || !want[i].Allowed && !checks[i].Limit.Shadow()
			}
			for i, c := range checks {
				k := sk{c.Key, c.Limit.ID(), c.Limit.Algorithm()}
				switch held := live(k); {
				case changed:
					states[k] = st[i]
					setExp(k, now, want[i].ResetAfter)
				case held && (blocked || !want[i].Allowed):
					// A state a refused call reads lives as long as the
					// limit that checked it counts it, never less.
					was := expiry[k]
					setExp(k, now, want[i].ResetAfter)
					expiry[k] = max(expiry[k], was)
				}
			}
			got := make([]sluice.Status, n)
			if err := store.Apply(ctx, checks, got); err != nil {
				t.Fatal(err)
			}
			for i := range got {
				if got[i] != want[i] {
					t.Fatalf("step %d, check %d (%s %v): store %+v, DecideBatch %+v", step, i, checks[i].Key, checks[i].Limit, got[i], want[i])
				}
				if got[i].Allowed && checks[i].Cost > 0 && (got[i].Charged != 0 || got[i].Lease != 0) {
					receipts = append(receipts, receipt{checks[i], got[i].Charged, got[i].Lease})
				}
			}
			store.Sweep()
			for k, exp := range expiry {
				if exp <= now {
					noteExpired(k, limitOf[k])
					delete(states, k)
					delete(expiry, k)
				}
			}
		}
	})
}
