package redis

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/conformance"
	"github.com/sluice-dev/sluice/internal/redistest"
)

// One apply.lua run of several calls (a batch) decides them exactly as
// sluice.DecideBatch decides the same calls one after another at the run's
// instant: the calls of random conformance scenarios, in runs of one to
// eight calls that share keys and limits, every Status field compared.
func TestARunOfSeveralCallsDecidesThemOneByOne(t *testing.T) {
	t.Parallel()
	client := redistest.Standalone(t).Client(t)
	ctx := context.Background()
	type stateKey struct {
		key, id string
		alg     sluice.Algorithm
	}
	for seed := uint64(1); seed <= 40; seed++ {
		sc := conformance.Random(seed)
		clock := conformance.NewClock(sc.Start)
		store := New(client, WithTimeForTesting(clock.Now), WithTimeout(testTimeout))
		prefix := fmt.Sprintf("run-%x-%d/", time.Now().UnixNano(), seed)
		states := map[stateKey]sluice.State{}
		r := rand.New(rand.NewPCG(seed, 8))
		for j := 0; j < len(sc.Steps); {
			n := min(1+r.IntN(8), len(sc.Steps)-j)
			clock.Advance(sc.Steps[j].Advance) // the run's instant; the others' moves are left out
			calls := make([]*call, n)
			want := make([][]sluice.Status, n)
			for k := range n {
				checks := make([]sluice.Check, len(sc.Steps[j+k].Checks))
				keys := make([]stateKey, len(checks))
				st := make([]sluice.State, len(checks))
				for i, c := range sc.Steps[j+k].Checks {
					c.Key = prefix + c.Key
					checks[i], keys[i] = c, stateKey{c.Key, c.Limit.ID(), c.Limit.Algorithm()}
					st[i] = states[keys[i]]
				}
				want[k] = make([]sluice.Status, len(checks))
				changed, err := sluice.DecideBatch(checks, st, clock.Micros(), want[k])
				if err != nil {
					t.Fatal(err)
				}
				if changed {
					for i, key := range keys {
						states[key] = st[i]
					}
				}
				if calls[k], err = newCall(checks, nil, nil, make([]sluice.Status, len(checks))); err != nil {
					t.Fatal(err)
				}
			}
			store.runCalls(ctx, modeApply, "", calls)
			for k, c := range calls {
				if c.err != nil {
					t.Fatalf("seed %d, call %d of a run of %d (step %d): %v", seed, k, n, j+k, c.err)
				}
				for i := range c.out {
					if c.out[i] != want[k][i] {
						t.Fatalf("seed %d, call %d of a run of %d (step %d), check %d (%s cost %d):\n got  %+v\n want %+v",
							seed, k, n, j+k, i, c.checks[i].Limit, c.checks[i].Cost, c.out[i], want[k][i])
					}
				}
				c.release()
			}
			j += n
		}
	}
}
