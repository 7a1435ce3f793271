package memory_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/memory"
)

// floodCase is one algorithm's victim and flood: the victim's limit, which
// it spends until refused, and the long-lived limit of the flood's subjects
// (each spends one unit once), whose states expire long after the victim's.
type floodCase struct {
	victim, flood sluice.Limit
}

func floodCases() []floodCase {
	day := 24 * time.Hour
	return []floodCase{
		{sluice.FixedWindow(25, time.Minute), sluice.FixedWindow(1000, day)},
		{sluice.SlidingLog(25, time.Minute), sluice.SlidingLog(1000, day)},
		{sluice.SlidingCounter(25, time.Minute), sluice.SlidingCounter(1000, day)},
		{sluice.TokenBucket(25, time.Minute), sluice.TokenBucket(1000, day)},
		{sluice.LeakyBucket(25, time.Minute), sluice.LeakyBucket(1000, day)},
		{sluice.LeakyBucket(25, time.Minute).WithMaxWait(10 * time.Second), sluice.LeakyBucket(1000, day).WithMaxWait(time.Hour)},
		{sluice.GCRA(25, time.Minute), sluice.GCRA(1000, day)},
		{sluice.Concurrency(25, time.Minute), sluice.Concurrency(1000, day).Named("concurrent-day")},
	}
}

// A client spends its limit and keeps asking while 50,000 subjects it
// never heard of arrive at a store of 4,096 states, each with one request
// on a long-lived limit: the store must admit the client exactly what an
// unbounded store admits it at the same times (nothing more: its refusing
// state is never the one evicted), for every algorithm. The flood is
// admitted by evicting its own states, except a flood of leases held,
// which no eviction frees. The clock advances a millisecond every 100
// arrivals, and the client asks once every 100.
func TestKeyFloodNeverFreesARefusedClient(t *testing.T) {
	const maxKeys, flood, every = 4096, 50_000, 100
	ctx := context.Background()
	for _, tc := range floodCases() {
		t.Run(tc.victim.String(), func(t *testing.T) {
			t.Parallel()
			store, bounded, clock := newStore(t, memory.WithMaxKeys(maxKeys), memory.WithSweepInterval(0))
			ref := memory.New(memory.WithClock(clock.Now), memory.WithSweepInterval(0))
			defer ref.Close()
			unbounded := sluice.NewLimiter(ref)
			victim := sluice.Check{Key: "victim", Limit: tc.victim, Cost: 1}
			ask := func() (got, want bool) {
				b, err := allow(bounded, ctx, victim)
				if err != nil {
					t.Fatal(err)
				}
				u, err := allow(unbounded, ctx, victim)
				if err != nil {
					t.Fatal(err)
				}
				return b.Allowed, u.Allowed
			}
			spent := 0
			for {
				got, want := ask()
				if got != want {
					t.Fatalf("before the flood: bounded admitted=%v, unbounded %v", got, want)
				}
				if !got {
					break
				}
				spent++
			}
			var admitted, extra, refusedNew int
			for i := range flood {
				c := sluice.Check{Key: "flood-" + strconv.Itoa(i), Limit: tc.flood, Cost: 1}
				d, err := allow(bounded, ctx, c)
				if err != nil {
					t.Fatal(err)
				}
				if !d.Allowed {
					refusedNew++
				}
				if (i+1)%every == 0 {
					clock.Advance(time.Millisecond)
					got, want := ask()
					if got {
						admitted++
					}
					if got && !want {
						extra++
					}
				}
			}
			st := store.Stats()
			t.Logf("victim spent %d, then admitted %d of %d during the flood (%d beyond an unbounded store); flood: %d refused; %+v",
				spent, admitted, flood/every, extra, refusedNew, st)
			if extra != 0 {
				t.Errorf("the flood freed the refused client: %d admissions an unbounded store refuses", extra)
			}
			if st.Keys > maxKeys {
				t.Errorf("holds %d states, bound %d", st.Keys, maxKeys)
			}
			switch {
			case tc.flood.Algorithm() == sluice.AlgorithmConcurrency:
				// Each flood key holds a lease in flight, which no
				// eviction frees: once the store is full, the flood is
				// refused for want of room.
				if st.Evictions != 0 || int64(refusedNew) != st.NoRoom {
					t.Errorf("%d of the flood's requests refused, %d evictions, %d refused for want of room: want none evicted and every refusal for want of room",
						refusedNew, st.Evictions, st.NoRoom)
				}
			case refusedNew != 0:
				t.Errorf("%d of the flood's requests refused: the store had states it could evict", refusedNew)
			}
		})
	}
}

// A client spends its limit at a degraded level (the server's degradation
// scales a plan's limits, names kept) and is refused; a flood of 50,000
// new subjects that each spend all but one unit of a long-lived limit
// follows. The client's state, decided without the mutex, was only ever
// inserted under the full limit, whose view of it is half used: the store
// must still rank it as refusing, by the degraded parameters it has seen
// anywhere (here, one new key's).
func TestKeyFloodNeverFreesADegradedClient(t *testing.T) {
	const maxKeys, flood, every = 4096, 50_000, 100
	ctx := context.Background()
	store, bounded, clock := newStore(t, memory.WithMaxKeys(maxKeys), memory.WithSweepInterval(0))
	ref := memory.New(memory.WithClock(clock.Now), memory.WithSweepInterval(0))
	defer ref.Close()
	unbounded := sluice.NewLimiter(ref)
	full := sluice.FixedWindow(24, time.Minute)
	degraded := full.Scale(1, 2)
	both := func(c sluice.Check) (got, want bool) {
		b, err := allow(bounded, ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		u, err := allow(unbounded, ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		return b.Allowed, u.Allowed
	}
	if got, want := both(sluice.Check{Key: "victim", Limit: full, Cost: 4}); !got || !want {
		t.Fatal("the victim's first call was refused")
	}
	both(sluice.Check{Key: "another", Limit: degraded, Cost: 1})
	victim := sluice.Check{Key: "victim", Limit: degraded, Cost: 8}
	if got, want := both(victim); !got || !want {
		t.Fatal("the victim's call at the degraded level was refused")
	}
	victim.Cost = 1
	var extra int
	day := sluice.FixedWindow(1000, 24*time.Hour)
	for i := range flood {
		if d, err := allow(bounded, ctx, sluice.Check{Key: "flood-" + strconv.Itoa(i), Limit: day, Cost: 999}); err != nil || !d.Allowed {
			t.Fatalf("flood %d: %v, %v", i, d.Allowed, err)
		}
		if (i+1)%every == 0 {
			clock.Advance(time.Millisecond)
			if got, want := both(victim); got && !want {
				extra++
			}
		}
	}
	t.Logf("victim admitted %d times beyond an unbounded store during the flood; %+v", extra, store.Stats())
	if extra != 0 {
		t.Errorf("the flood freed the refused client: %d admissions an unbounded store refuses", extra)
	}
}
