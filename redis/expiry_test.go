package redis_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/conformance"
	"github.com/sluice-dev/sluice/internal/storetest"
)

// Why a key may expire at its reset-after: on a clock that does not step
// back, a state reaching that time decides every later check exactly as a
// key never seen would. Checked here on the reference itself, with the TTL
// the scripts set (reset-after rounded up to a millisecond), over the
// random scenarios of the conformance suite.
func TestStatePastItsTTLIsWorthAFreshOne(t *testing.T) {
	compared := 0
	for seed := uint64(1); seed <= 200; seed++ {
		sc := conformance.Random(seed)
		r := rand.New(rand.NewPCG(seed, 9))
		type held struct {
			st      sluice.State
			expires int64        // µs since Epoch
			by      sluice.Limit // the parameters that wrote it
		}
		states := map[string]held{}
		now := sluice.MicrosSinceEpoch(sc.Start)
		for n, step := range sc.Steps {
			now += max(int64(step.Advance/time.Microsecond), 0) // forward only
			for _, c := range step.Checks {
				k := c.Key + "/" + c.Limit.Name() + "/" + c.Limit.Algorithm().String()
				h := states[k]
				// (Under other parameters — a plan change — the TTL set by the
				// old ones does not tell: both stores forget by the old ones
				// unless a refused call under the new ones lengthened it; see
				// TestAKeyARefusedCallReadsOutlivesTheTTLOfAShorterWindow.)
				if h.expires != 0 && now >= h.expires && sameParameters(h.by, c.Limit) {
					// Any check at any later time: the held state and a fresh
					// one must agree.
					at := now + r.Int64N(int64(c.Limit.Window()/time.Microsecond)*3+1)
					cost := r.Int64N(c.Limit.Burst() + 2)
					_, got := storetest.Decided(c.Limit.Decide(h.st, at, cost))
					_, want := storetest.Decided(c.Limit.Decide(sluice.State{}, at, cost))
					compared++
					if got != want {
						t.Fatalf("seed %d step %d: %v past its TTL decides %+v at %d, a fresh key %+v", seed, n, c.Limit, got, at, want)
					}
				}
				next, st := storetest.Decided(c.Limit.Decide(h.st, now, c.Cost))
				if st.Allowed && c.Cost > 0 {
					ttlMs := max((int64(st.ResetAfter/time.Microsecond)+999)/1000, 1)
					states[k] = held{next, now + ttlMs*1000, c.Limit}
				}
			}
		}
	}
	if compared < 1000 {
		t.Fatalf("only %d states were seen past their TTL", compared)
	}
	t.Logf("%d states past their TTL decided as fresh ones", compared)
}

func sameParameters(a, b sluice.Limit) bool {
	return a.Quantity() == b.Quantity() && a.Window() == b.Window() && a.Burst() == b.Burst() && a.MaxWait() == b.MaxWait()
}
