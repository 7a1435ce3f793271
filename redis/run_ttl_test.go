package redis

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/redistest"
)

// A run of several calls (group commit) decides exactly as the calls sent
// one by one (apply.lua), and leaves each key's TTL as they would. Two
// calls of one key in one run: the first refused under the hour's window
// of a limit ID (a refusal keeps the key to the hour's end), the second
// admitted under the same ID's limit of a second (a reload, or another
// plan sharing the ID). One by one the second's write gives the key its
// own TTL, that second; so it does in the run, where the refusal's
// extension would otherwise outlive the write, and the state would count
// under the hourly limit long after it is gone one by one. Both kinds of
// key: a string state (fixed window) and a hash (sliding log).
func TestAWriteAfterARefusalInOneRunGivesTheKeyItsTTL(t *testing.T) {
	ctx := context.Background()
	client := redistest.Standalone(t).Client(t)
	store := New(client, WithTimeout(testTimeout)) // Redis's own clock: keys expire as in production
	algs := map[string]func(int64, time.Duration) sluice.Limit{
		"fixed-window": sluice.FixedWindow,
		"sliding-log":  sluice.SlidingLog,
	}
	apply := func(key string, l sluice.Limit, cost int64) sluice.Status {
		t.Helper()
		out := make([]sluice.Status, 1)
		if err := store.Apply(ctx, []sluice.Check{{Key: key, Limit: l, Cost: cost}}, out); err != nil {
			t.Fatal(err)
		}
		return out[0]
	}
	time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(time.Second + 20*time.Millisecond)))
	began := time.Now()
	type keys struct{ run, oneByOne string }
	ks := map[string]keys{}
	for alg, mk := range algs {
		short, long := mk(5, time.Second).WithID(alg), mk(3, time.Hour).WithID(alg)
		k := keys{fmt.Sprintf("run-%s-%d", alg, began.UnixNano()), fmt.Sprintf("one-%s-%d", alg, began.UnixNano())}
		ks[alg] = k
		for _, key := range []string{k.run, k.oneByOne} {
			if st := apply(key, short, 3); !st.Allowed {
				t.Fatalf("%s: spending 3 of 5/s: %+v", alg, st)
			}
		}
		// Under the hour's 3 the key's 3 units refuse 1 more; under the
		// second's 5 they admit it.
		c1, err := newCall([]sluice.Check{{Key: k.run, Limit: long, Cost: 1}}, nil, nil, make([]sluice.Status, 1))
		if err != nil {
			t.Fatal(err)
		}
		c2, err := newCall([]sluice.Check{{Key: k.run, Limit: short, Cost: 1}}, nil, nil, make([]sluice.Status, 1))
		if err != nil {
			t.Fatal(err)
		}
		store.runCalls(ctx, modeApply, "", []*call{c1, c2})
		if c1.err != nil || c2.err != nil || c1.out[0].Allowed || !c2.out[0].Allowed {
			t.Fatalf("%s: the run: %v %v %+v %+v", alg, c1.err, c2.err, c1.out[0], c2.out[0])
		}
		if st := apply(k.oneByOne, long, 1); st.Allowed {
			t.Fatalf("%s: one by one, under the hour: %+v", alg, st)
		}
		if st := apply(k.oneByOne, short, 1); !st.Allowed {
			t.Fatalf("%s: one by one, under the second: %+v", alg, st)
		}
	}
	if time.Since(began) > 800*time.Millisecond {
		t.Skip("too slow to keep the calls in one second")
	}
	// Past the second's end, met by no call since.
	time.Sleep(time.Until(began.Truncate(time.Second).Add(2500 * time.Millisecond)))
	if began.Truncate(time.Hour) != time.Now().Truncate(time.Hour) {
		t.Skip("an hour's boundary passed")
	}
	for alg, mk := range algs {
		long := mk(3, time.Hour).WithID(alg)
		want, got := apply(ks[alg].oneByOne, long, 0), apply(ks[alg].run, long, 0)
		if want.Remaining != 3 {
			t.Fatalf("%s: one by one, the key outlived the second's write: %+v", alg, want)
		}
		if got.Remaining != want.Remaining {
			t.Errorf("%s: 2 s later under the hourly limit: the calls run together left remaining=%d reset=%v; sent one by one remaining=%d",
				alg, got.Remaining, got.ResetAfter, want.Remaining)
		}
	}
}
