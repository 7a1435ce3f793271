package memory_test

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/memory"
)

// A store keeps the first 64 parameter sets of a limit name to rank its
// states by. Keys with quotas of their own under a plan's limit name
// (config's per-key quotas) are how a name meets more. The 65th set's
// state is one the kept sets cannot tell from their own: a window's ends
// where theirs does whatever the quantity, and a bucket's debt is a time
// that every rate reads alike. Judged by a kept set of 1,000 or more, its
// client, refused at 10 of 10, would look hardly used and be the first
// evicted by a flood of new keys, and admitted again with nothing
// refilled. The package doc: "Evicting a state never frees a client its
// limit refuses".
func TestAParameterSetBeyondTheKeptOnesNeverFreesItsRefusedClient(t *testing.T) {
	for _, tc := range []struct {
		name   string
		kept   func(q int64) sluice.Limit
		victim sluice.Limit
	}{
		{"fixed window", func(q int64) sluice.Limit { return sluice.FixedWindow(q, time.Minute) }, sluice.FixedWindow(10, time.Minute)},
		{"sliding counter", func(q int64) sluice.Limit { return sluice.SlidingCounter(q, time.Minute) }, sluice.SlidingCounter(10, time.Minute)},
		{"sliding log", func(q int64) sluice.Limit { return sluice.SlidingLog(q, time.Minute) }, sluice.SlidingLog(10, time.Minute)},
		// A bucket's debt of a minute is all of the victim's burst, a
		// sixtieth of a kept set's.
		{"token bucket", func(q int64) sluice.Limit { return sluice.TokenBucket(q, time.Hour) }, sluice.TokenBucket(10, time.Minute)},
		{"GCRA", func(q int64) sluice.Limit { return sluice.GCRA(q, time.Hour) }, sluice.GCRA(10, time.Minute)},
		{"leaky bucket", func(q int64) sluice.Limit { return sluice.LeakyBucket(q, time.Hour) }, sluice.LeakyBucket(10, time.Minute)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			store, lim, _ := newStore(t, memory.WithMaxKeys(16), memory.WithShards(1), memory.WithSweepInterval(0))
			var d sluice.Decision
			ask := func(key string, l sluice.Limit, cost int64) bool {
				t.Helper()
				if err := lim.Allow(ctx, []sluice.Check{{Key: key, Limit: l, Cost: cost}}, &d); err != nil {
					t.Fatal(err)
				}
				return d.Allowed
			}
			for i := range 64 { // the sets kept
				ask("customer-"+strconv.Itoa(i), tc.kept(1000+int64(i)).Named("per-minute"), 1)
			}
			victim := tc.victim.Named("per-minute")
			if !ask("victim", victim, 10) || ask("victim", victim, 1) {
				t.Fatalf("the victim was not admitted 10 of 10, then refused: %+v", d.Statuses[0])
			}
			// A flood of new keys of another limit; the clock stands
			// still: the victim gets nothing back. The others' states,
			// which admit more under any set, still make room for it.
			flood := sluice.FixedWindow(5, time.Hour).Named("login")
			admitted := 0
			for i := range 200 {
				if !ask("flood-"+strconv.Itoa(i), flood, 1) {
					t.Fatalf("new key %d refused: %+v; %+v", i, d.Statuses[0], store.Stats())
				}
				if ask("victim", victim, 1) {
					admitted++
				}
			}
			if admitted > 0 {
				t.Errorf("the victim, refused at 10 of 10, was admitted %d more with nothing refilled after a flood of new keys; %+v",
					admitted, store.Stats())
			}
		})
	}
}

// A set beyond the 64 a name keeps may have written only the states of its
// own window (length, calendar period and offset): a day quota of 5 cannot
// have written a state that ends with this minute, nor a month from the
// 15th one that ends with the calendar month. So it ranks those states no
// more strictly than the sets kept do: a full store evicts the ordinary
// clients, each 5 into its 1,000 this minute (or 100,000 this month), for
// new ones as it does when the strict set is the 64th, kept, while the
// strict client, refused at 5 of 5, stays refused. Ranked by the strict
// set's quantity whatever their window, those clients would look refusing
// and a full store would refuse new ones until the window ends.
func TestASetBeyondTheBoundsRanksOnlyTheStatesOfItsWindow(t *testing.T) {
	for _, tc := range []struct {
		name          string
		at            time.Time
		kept          func(i int) sluice.Limit
		strict, flood sluice.Limit
	}{
		{
			name: "a day quota beside minute quotas",
			at:   time.Date(2026, 11, 30, 12, 0, 30, 0, time.UTC),
			kept: func(i int) sluice.Limit {
				return sluice.FixedWindow(1000+int64(i), time.Minute).Named("quota")
			},
			strict: sluice.FixedWindow(5, 24*time.Hour).Named("quota"),
			flood:  sluice.FixedWindow(1000, time.Minute).Named("quota"),
		},
		{
			name: "a month from another billing day",
			at:   time.Date(2026, 11, 20, 12, 0, 30, 0, time.UTC),
			kept: func(i int) sluice.Limit {
				return sluice.Calendar(100_000+int64(i), sluice.Month).Named("per-month")
			},
			strict: sluice.Calendar(5, sluice.Month).WithOffset(14 * 24 * time.Hour).Named("per-month"),
			flood:  sluice.Calendar(100_000, sluice.Month).Named("per-month"),
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, n := range []int{63, 64} { // the strict set kept, then beyond
				at := tc.at
				s := memory.New(memory.WithMaxKeys(16), memory.WithShards(1), memory.WithSweepInterval(0),
					memory.WithClock(func() time.Time { return at })) // stands still
				defer s.Close()
				lim := sluice.NewLimiter(s)
				var d sluice.Decision
				ask := func(key string, l sluice.Limit, cost int64) bool {
					t.Helper()
					if err := lim.Allow(context.Background(), []sluice.Check{{Key: key, Limit: l, Cost: cost}}, &d); err != nil {
						t.Fatal(err)
					}
					return d.Allowed
				}
				for i := range n {
					ask("customer-"+strconv.Itoa(i), tc.kept(i), 1)
				}
				if !ask("strict", tc.strict, 5) || ask("strict", tc.strict, 1) {
					t.Fatalf("the strict client was not admitted 5 of 5, then refused: %+v", d.Statuses[0])
				}
				refused := 0
				for i := range 200 {
					if !ask("client-"+strconv.Itoa(i), tc.flood, 5) {
						refused++
					}
				}
				if refused > 0 {
					t.Errorf("the strict set the name's %dth: %d of 200 new clients were refused for want of room; %+v",
						n+1, refused, s.Stats())
				}
				if ask("strict", tc.strict, 1) {
					t.Errorf("the strict set the name's %dth: the strict client, refused at 5 of 5, was admitted after the flood", n+1)
				}
			}
		})
	}
}

// The store tells apart the first 4 windows of the sets a name meets beyond
// the 64 it keeps, each by the least quantity met under it. A set of a
// fifth window is not told apart: every state of the name that some set
// judges used ranks by the least quantity of such sets, whatever its
// window. And a set stricter than those met before under its window lowers
// that window's quantity. Either way its client, refused at 10 of 10 a
// minute, is never freed by a flood of new keys.
func TestASetBeyondTheWindowsNotedNeverFreesItsRefusedClient(t *testing.T) {
	for _, tc := range []struct {
		name   string
		before []sluice.Limit // met beyond the kept sets, before the victim's
	}{
		{"a fifth window", []sluice.Limit{
			sluice.FixedWindow(1000, time.Hour), sluice.FixedWindow(1000, 2*time.Hour),
			sluice.FixedWindow(1000, 3*time.Hour), sluice.FixedWindow(1000, 4*time.Hour),
		}},
		{"a stricter set of a window noted", []sluice.Limit{sluice.FixedWindow(50, time.Minute)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			store, lim, _ := newStore(t, memory.WithMaxKeys(16), memory.WithShards(1), memory.WithSweepInterval(0))
			var d sluice.Decision
			ask := func(key string, l sluice.Limit, cost int64) bool {
				t.Helper()
				if err := lim.Allow(ctx, []sluice.Check{{Key: key, Limit: l, Cost: cost}}, &d); err != nil {
					t.Fatal(err)
				}
				return d.Allowed
			}
			for i := range 64 {
				ask("customer-"+strconv.Itoa(i), sluice.FixedWindow(1000+int64(i), time.Minute).Named("per-minute"), 1)
			}
			for i, l := range tc.before {
				ask("before-"+strconv.Itoa(i), l.Named("per-minute"), 1)
			}
			victim := sluice.FixedWindow(10, time.Minute).Named("per-minute")
			if !ask("victim", victim, 10) || ask("victim", victim, 1) {
				t.Fatalf("the victim was not admitted 10 of 10, then refused: %+v", d.Statuses[0])
			}
			flood := sluice.FixedWindow(5, time.Hour).Named("login")
			for i := range 200 {
				ask("flood-"+strconv.Itoa(i), flood, 1)
				if ask("victim", victim, 1) {
					t.Fatalf("the victim, refused at 10 of 10, was admitted after %d new keys; %+v", i+1, store.Stats())
				}
			}
		})
	}
}

// New keys under sets beyond the 64 a name keeps, of new windows and less
// quantities, are decided while other goroutines flood a full store with
// new keys of the name, which ranks its states by what is noted of those
// sets as it is replaced. (Run with -race.)
func TestSetsBeyondTheBoundsAreNotedWhileTheirStatesAreRanked(t *testing.T) {
	store, lim, _ := newStore(t, memory.WithMaxKeys(32), memory.WithShards(1), memory.WithSweepInterval(0))
	ctx := context.Background()
	for i := range 64 {
		allow(lim, ctx, sluice.Check{Key: "customer-" + strconv.Itoa(i), Limit: sluice.FixedWindow(1000+int64(i), time.Minute).Named("quota"), Cost: 1})
	}
	var wg sync.WaitGroup
	for g := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 300 {
				l := sluice.FixedWindow(1000, time.Minute).Named("quota")
				if g == 0 { // beyond: 8 windows, quantities falling
					l = sluice.FixedWindow(int64(900-i), time.Duration(1+i%8)*time.Hour).Named("quota")
				}
				if _, err := allow(lim, ctx, sluice.Check{Key: "g" + strconv.Itoa(g) + "-" + strconv.Itoa(i), Limit: l, Cost: 1}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if st := store.Stats(); st.Keys > 32 {
		t.Errorf("the store holds more states than its bound: %+v", st)
	}
}

// A bucket set beyond the 64 a name keeps (a key's own quota of 1 an hour
// beside 64 plans' per-minute buckets) leaves its client owing an hour.
// Its state ranks as refusing while the name was decided in enforcing mode
// within the longest debt such a set may write, not only within the kept
// sets' minute: the name has no enforcing check noted for 70 s (the strict
// client's checks need not be the one noted, once a second), then a flood
// of new keys needs room, and the client, refused with 58 minutes left to
// owe, is not admitted a second later. With the same set kept (the name's
// 64th), its hour counts as its window does. The package doc: "Evicting a
// state never frees a client its limit refuses".
func TestABucketSetBeyondTheBoundsKeepsItsClientRefusedForItsWholeDebt(t *testing.T) {
	for _, n := range []int{63, 64} { // the strict set kept, then beyond
		t.Run(strconv.Itoa(n)+" sets before", func(t *testing.T) {
			at := time.Date(2026, 11, 30, 12, 0, 0, 300_000_000, time.UTC)
			s := memory.New(memory.WithMaxKeys(16), memory.WithShards(1), memory.WithSweepInterval(0),
				memory.WithClock(func() time.Time { return at }))
			defer s.Close()
			out := make([]sluice.Status, 1)
			ask := func(key string, l sluice.Limit, cost int64) bool {
				t.Helper()
				if err := s.Apply(context.Background(), []sluice.Check{{Key: key, Limit: l, Cost: cost}}, out); err != nil {
					t.Fatal(err)
				}
				return out[0].Allowed
			}
			for i := range n {
				ask("customer-"+strconv.Itoa(i), sluice.TokenBucket(1000+int64(i), time.Minute).Named("quota"), 1)
			}
			// A second on, a plan's client comes first: its check is the
			// one noted as enforcing.
			at = at.Add(time.Second)
			ask("customer-0", sluice.TokenBucket(1000, time.Minute).Named("quota"), 1)
			victim := sluice.TokenBucket(1, time.Hour).Named("quota")
			if !ask("victim", victim, 1) || ask("victim", victim, 1) {
				t.Fatalf("the victim was not admitted 1 of 1, then refused: %+v", out[0])
			}
			at = at.Add(70 * time.Second)
			flood := sluice.FixedWindow(1, time.Second).Named("login")
			for i := range 100 {
				ask("flood-"+strconv.Itoa(i), flood, 1)
			}
			at = at.Add(time.Second)
			if ask("victim", victim, 1) {
				t.Errorf("the victim, refused with %v of its hour left to owe, was admitted again after a flood of new keys; %+v",
					time.Hour-70*time.Second, s.Stats())
			}
		})
	}
}
