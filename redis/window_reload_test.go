package redis

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/conformance"
	"github.com/sluice-dev/sluice/internal/redistest"
)

// The limits of a reload that lengthens a window: "quota" was 3 a second,
// is 3 an hour; "daily" is spent by the first call of a subject.
var (
	quotaBefore = sluice.FixedWindow(3, time.Second).Named("quota")
	quotaNow    = sluice.FixedWindow(3, time.Hour).Named("quota")
	daily       = sluice.FixedWindow(1, 24*time.Hour).Named("daily")
)

// clearOfTheHour waits, when the hour (quotaNow's window) ends within 15
// s, for the next one: a refusal near its end would count for seconds.
func clearOfTheHour() {
	if left := time.Until(time.Now().Truncate(time.Hour).Add(time.Hour)); left < 15*time.Second {
		time.Sleep(left + 100*time.Millisecond)
	}
}

// earlyInASecond waits, past the middle of a second, for the next one: a
// state quotaBefore admits then keeps its key for half a second at least,
// time for the refusal that follows to meet it.
func earlyInASecond() {
	now := time.Now()
	if next := now.Truncate(time.Second).Add(time.Second); next.Sub(now) < 500*time.Millisecond {
		time.Sleep(next.Sub(now) + 10*time.Millisecond)
	}
}

// applyNow applies checks with store and returns their statuses.
func applyNow(t *testing.T, store *Store, checks ...sluice.Check) []sluice.Status {
	t.Helper()
	out := make([]sluice.Status, len(checks))
	if err := store.Apply(context.Background(), checks, out); err != nil {
		t.Fatal(err)
	}
	return out
}

// spend admits cost units of l for subject, with daily's unit alongside
// when withDaily.
func spend(t *testing.T, store *Store, subject string, l sluice.Limit, cost int64, withDaily bool) {
	t.Helper()
	earlyInASecond()
	checks := []sluice.Check{{Key: subject, Limit: l, Cost: cost}}
	if withDaily {
		checks = append(checks, sluice.Check{Key: subject, Limit: daily, Cost: 1})
	}
	for i, st := range applyNow(t, store, checks...) {
		if !st.Allowed {
			t.Fatalf("%s: check %d (%v) refused while spending", subject, i, checks[i].Limit)
		}
	}
}

// checkOutlives fails t unless subject's state of l, which a refused call
// read with status st, lives for st's reset-after at least (to the whole
// millisecond before it, less the time since the call): far beyond the
// second quotaBefore gave it.
func checkOutlives(t *testing.T, c rueidis.Client, subject string, l sluice.Limit, st sluice.Status) {
	t.Helper()
	key := Key(subject, l.ID())
	ttl, err := c.Do(context.Background(), c.B().Pttl().Key(key).Build()).AsInt64()
	if err != nil {
		t.Fatal(err)
	}
	// PTTL counts from the millisecond Redis's clock shows: up to 1 ms more.
	left := time.Duration(ttl) * time.Millisecond
	if st.ResetAfter < 5*time.Second || left < st.ResetAfter-time.Second || left > st.ResetAfter+time.Millisecond {
		t.Errorf("%s after a refused call (status %+v): TTL %v, want the reset-after under %v", key, st, left, l)
	}
}

// A reload that lengthens a limit's window keeps what clients spent
// (docs/decisions.md), for as long as the limit now in force counts it: a
// key that a refused call reads lives until that limit has its state back
// at full quota, not until the TTL its last write under the old limit gave
// it — on every path that decides: one check, a call of several refused by
// the key's limit or by another (conformance.RunLengthenedWindows, past
// the old TTLs on Redis's clock), a lease take refused or blocked.
func TestAKeyARefusedCallReadsOutlivesTheTTLOfAShorterWindow(t *testing.T) {
	t.Parallel()
	srv := redistest.Standalone(t)
	client := srv.Client(t)
	store := New(client, WithTimeout(testTimeout))
	clearOfTheHour()

	t.Run("apply", func(t *testing.T) {
		t.Parallel()
		earlyInASecond()
		conformance.RunLengthenedWindows(t, store, "reload", func() { time.Sleep(2 * time.Second) })
	})
	t.Run("lease take refused", func(t *testing.T) {
		t.Parallel()
		spend(t, store, "take", quotaBefore, 3, false)
		out, got := make([]sluice.Status, 1), make([]int64, 1)
		if _, err := store.take(context.Background(), []sluice.Check{{Key: "take", Limit: quotaNow, Cost: 1}}, []int64{2}, out, got); err != nil {
			t.Fatal(err)
		}
		if out[0].Allowed {
			t.Fatalf("take after the reload: %+v, want refused", out[0])
		}
		checkOutlives(t, client, "take", quotaNow, out[0])
	})
	t.Run("lease take refused by another limit", func(t *testing.T) {
		t.Parallel()
		spend(t, store, "take-elsewhere", quotaBefore, 2, true)
		checks := []sluice.Check{{Key: "take-elsewhere", Limit: quotaNow, Cost: 1}, {Key: "take-elsewhere", Limit: daily, Cost: 1}}
		out, got := make([]sluice.Status, 2), make([]int64, 2)
		if _, err := store.take(context.Background(), checks, []int64{1, 0}, out, got); err != nil {
			t.Fatal(err)
		}
		if !out[0].Allowed || out[1].Allowed {
			t.Fatalf("take after the reload: %+v, want the quota's peek and daily refusing", out)
		}
		checkOutlives(t, client, "take-elsewhere", quotaNow, out[0])
	})
}

// In a batched run (group commit), a call's refusal lengthens its key's TTL
// as a lone run's does, beside a call that writes its own key.
func TestAKeyARefusedCallInABatchReadsOutlivesTheTTLOfAShorterWindow(t *testing.T) {
	t.Parallel()
	store, srv := pausedStore(t)
	client := srv.Client(t)
	clearOfTheHour()
	// Spent in a window of 10 s with 2 s of it left at least: the pause
	// below must not outlast the TTL it gives.
	before := sluice.FixedWindow(3, 10*time.Second).Named("quota")
	if left := time.Until(time.Now().Truncate(10 * time.Second).Add(10 * time.Second)); left < 2*time.Second {
		time.Sleep(left + 100*time.Millisecond)
	}
	spend(t, store, "batched", before, 3, false)
	srv.MustDo("CONFIG", "RESETSTAT")
	srv.MustDo("CLIENT", "PAUSE", "300", "ALL")
	outs := [3][]sluice.Status{make([]sluice.Status, 1), make([]sluice.Status, 1), make([]sluice.Status, 1)}
	errs := make([]error, 3)
	var wg sync.WaitGroup
	apply := func(i int, c sluice.Check) {
		wg.Go(func() { errs[i] = store.Apply(context.Background(), []sluice.Check{c}, outs[i]) })
	}
	apply(0, sluice.Check{Key: "first", Limit: quotaNow, Cost: 1}) // held by the pause
	waitRunning(t, store)
	apply(1, sluice.Check{Key: "batched", Limit: quotaNow, Cost: 1})
	apply(2, sluice.Check{Key: "written", Limit: quotaNow, Cost: 1})
	waitQueued(t, store, 2)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	if outs[1][0].Allowed || !outs[2][0].Allowed {
		t.Fatalf("the batch: %+v and %+v, want the spent subject refused and the other admitted", outs[1][0], outs[2][0])
	}
	stats, err := srv.Info("commandstats")
	if err != nil {
		t.Fatal(err)
	}
	if n := scriptCalls(stats["cmdstat_evalsha"]); n != 2 {
		t.Fatalf("3 calls took %d script runs, want 2: the first, then the two queued ones together", n)
	}
	checkOutlives(t, client, "batched", quotaNow, outs[1][0])
}

// A call spanning Cluster slots that a later slot refuses has its earlier
// slot's reservation refunded — its key restored with the TTL it had —
// and one that an earlier slot refuses decides the later ones without
// writing: either way each state the call read keeps its key for as long
// as the limit now checking it counts it.
func TestAKeyACallRefusedInAnotherSlotReadsOutlivesTheTTLOfAShorterWindow(t *testing.T) {
	t.Parallel()
	client := redistest.Cluster(t).Client(t)
	store := New(client, WithTimeout(testTimeout))
	clearOfTheHour()
	subjects := subjectsBySlot(4, "slot-")
	for _, tc := range []struct {
		name            string
		quota, refusing string
	}{
		{"refunded", subjects[0], subjects[1]}, // the quota's slot reserves first
		{"dry run", subjects[3], subjects[2]},  // the refusing slot decides first
	} {
		t.Run(tc.name, func(t *testing.T) {
			earlyInASecond()
			spend(t, store, tc.quota, quotaBefore, 2, false)
			spend(t, store, tc.refusing, daily, 1, false)
			out := applyNow(t, store, sluice.Check{Key: tc.quota, Limit: quotaNow, Cost: 1},
				sluice.Check{Key: tc.refusing, Limit: daily, Cost: 1})
			if !out[0].Allowed || out[1].Allowed || out[0].Remaining != 1 {
				t.Fatalf("after the reload: %+v, want the quota's peek (1 left) and daily refusing", out)
			}
			checkOutlives(t, client, tc.quota, quotaNow, out[0])
		})
	}
}

// A refusal under the limit that wrote a state leaves its key's expiry as
// that write set it: it never keeps a key longer than its limit counts it.
func TestARefusalUnderTheSameLimitLeavesTheTTL(t *testing.T) {
	t.Parallel()
	srv := redistest.Standalone(t)
	client := srv.Client(t)
	store := New(client, WithTimeout(testTimeout))
	l := sluice.SlidingLog(1, time.Minute).Named("quota")
	spend(t, store, "same", l, 1, false)
	at := func() int64 {
		ms, err := client.Do(context.Background(), client.B().Pexpiretime().Key(Key("same", l.ID())).Build()).AsInt64()
		if err != nil {
			t.Fatal(err)
		}
		return ms
	}
	before := at()
	// The refusals come 300 ms after the write, so that one that set the
	// key's expiry anew would move it by 300 ms or more; a run on a loaded
	// machine may set it a few milliseconds off (its PEXPIRE counts from
	// when Redis runs it), which is no such defect.
	time.Sleep(300 * time.Millisecond)
	for range 20 {
		if st := applyNow(t, store, sluice.Check{Key: "same", Limit: l, Cost: 1})[0]; st.Allowed {
			t.Fatal("a 2nd request within the minute admitted")
		}
	}
	if after := at(); after > before+50 {
		t.Errorf("20 refusals moved the key's expiry from %d to %d ms", before, after)
	}
}
