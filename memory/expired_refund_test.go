package memory_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/conformance"
	"github.com/sluice-dev/sluice/memory"
)

// A receipt is not refunded into a state its key built after the state
// that counted it expired, however the store met the expired state: as
// the Redis store leaves a state born after a receipt alone (its born).
//
// Two limits share the ID "quota" (the plans of a policy, degradation
// levels, a reload): 2 an hour and 2 a minute. A request under the hour's
// limit is charged at 12:00:10 (its receipt R0); one under the minute's
// limit at 12:00:20 writes the state, which then expires at the minute's
// end, 12:01:00, still counting R0 under the hour's limit. From then on
// the state is absent, and two requests under the minute's limit build a
// fresh one, 2 of 2 for that minute. R0 is then refunded under the hour's
// limit: the fresh state never counted it, and a third request in that
// minute stays refused. A receipt of the fresh state is still refunded,
// even one given in the µs the old state expired.
//
// The expired state is met first by a call holding only its key's entry,
// by one under its shard's mutex (a call with a new key), by a refused
// call (which writes no state), by the sweep, or by an eviction at a full
// shard (which sweeps itself at most once a millisecond: just after a
// sweep it evicts the state back at full quota).
func TestARefundLeavesAStateBuiltAfterTheOneThatCountedItExpiredAlone(t *testing.T) {
	ctx := context.Background()
	hour := sluice.FixedWindow(2, time.Hour).Named("quota")
	minute := sluice.FixedWindow(2, time.Minute).Named("quota")
	type env struct {
		t     *testing.T
		s     *memory.Store
		clock *conformance.Clock
	}
	apply := func(e env, key string, l sluice.Limit, cost int64, more ...sluice.Check) sluice.Status {
		e.t.Helper()
		checks := append([]sluice.Check{{Key: key, Limit: l, Cost: cost}}, more...)
		out := make([]sluice.Status, len(checks))
		if err := e.s.Apply(ctx, checks, out); err != nil {
			e.t.Fatal(err)
		}
		return out[0]
	}
	for _, tc := range []struct {
		name string
		opts []memory.Option
		// before runs before the state expires; meet is the first to
		// meet it past its expiry, at 12:01:00.
		before, meet func(e env)
		// locked: the first fresh request is decided with a new key.
		locked bool
	}{
		{name: "met by a call holding its entry"},
		{name: "met by a call under the mutex", locked: true},
		{name: "met by a refused call", meet: func(e env) {
			if st := apply(e, "client", minute, 3); st.Allowed {
				e.t.Fatalf("3 of 2 admitted: %+v", st)
			}
		}},
		{name: "swept", meet: func(e env) { e.s.Sweep() }},
		{
			name: "evicted",
			opts: []memory.Option{memory.WithMaxKeys(1), memory.WithShards(1)},
			before: func(e env) {
				e.clock.Advance(39*time.Second + 999500*time.Microsecond) // 12:00:59.9995
				e.s.Sweep()
				e.clock.Advance(500 * time.Microsecond)
			},
			meet: func(e env) { apply(e, "other", minute, 1) },
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := conformance.NewClock(time.Date(2026, 11, 30, 12, 0, 10, 0, time.UTC))
			s := memory.New(append([]memory.Option{memory.WithClock(clock.Now), memory.WithSweepInterval(0)}, tc.opts...)...)
			defer s.Close()
			e := env{t, s, clock}
			r0 := apply(e, "client", hour, 1)
			clock.Advance(10 * time.Second) // 12:00:20
			apply(e, "client", minute, 1)
			if tc.before != nil {
				tc.before(e)
			}
			clock.Advance(time.Date(2026, 11, 30, 12, 1, 0, 0, time.UTC).Sub(clock.Now())) // the state's expiry
			if tc.meet != nil {
				tc.meet(e)
			}
			var more []sluice.Check
			if tc.locked {
				more = []sluice.Check{{Key: "new", Limit: minute, Cost: 1}}
			}
			fresh := apply(e, "client", minute, 1, more...)
			if st := apply(e, "client", minute, 1); !fresh.Allowed || !st.Allowed {
				t.Fatalf("the new minute's requests: %+v, %+v", fresh, st)
			}
			clock.Advance(time.Second)
			if err := s.Refund(ctx, []sluice.Check{{Key: "client", Limit: hour, Cost: 1}}, []int64{r0.Charged}); err != nil {
				t.Fatal(err)
			}
			if st := apply(e, "client", minute, 1); st.Allowed {
				t.Errorf("a third request in the minute from 12:01 under 2/minute admitted: the refund of a receipt from 12:00:10 was taken out of the state built at 12:01:00, after the one that counted it expired")
			}
			if err := s.Refund(ctx, []sluice.Check{{Key: "client", Limit: minute, Cost: 1}}, []int64{fresh.Charged}); err != nil {
				t.Fatal(err)
			}
			if st := apply(e, "client", minute, 1); !st.Allowed {
				t.Errorf("the refund of the new state's first receipt (%d) did not give its unit back", fresh.Charged)
			}
		})
	}
}

// The expiry of a state that still counted something is noted for the
// longest window among the parameter sets of its limit's ID that any call
// was decided under: one the store met only for a key it already held
// (decided holding the key's entry, without the shard's mutex), or one
// beyond the sets it keeps, counts too. As on the Redis store, whose
// state records its born, a receipt from before the expiry is not
// refunded into the state built since.
//
// Two limits share the ID "quota": 3 a minute and 5 an hour. The minute's
// first request (12:00:05, a new key) is decided under the mutex; the
// hour's (12:00:10, its receipt R0) on the key held. A second request
// under the minute's limit at 12:00:20 writes the state, which expires at
// 12:01:00 still counting R0, and is swept or met past it by the call at
// 12:03:30 that starts a fresh state: past a note that would last two
// minutes' windows and a second, though not two hours'. Three requests
// fill the fresh minute; R0 refunded under the hour's limit then leaves a
// fourth refused.
func TestAnExpiryIsNotedForTheLongestWindowOfEverySetItsLimitMet(t *testing.T) {
	ctx := context.Background()
	minute := sluice.FixedWindow(3, time.Minute).Named("quota")
	hour := sluice.FixedWindow(5, time.Hour).Named("quota")
	for _, tc := range []struct {
		name   string
		sweep  bool // at 12:01:00, else met by the call at 12:03:30
		beyond bool // the hour's set is met beyond the sets the store keeps
	}{
		{name: "met by a call"},
		{name: "swept", sweep: true},
		{name: "a set beyond those kept", beyond: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := conformance.NewClock(time.Date(2026, 11, 30, 12, 0, 5, 0, time.UTC))
			s := memory.New(memory.WithClock(clock.Now), memory.WithSweepInterval(0))
			defer s.Close()
			apply := func(key string, l sluice.Limit) sluice.Status {
				t.Helper()
				out := make([]sluice.Status, 1)
				if err := s.Apply(ctx, []sluice.Check{{Key: key, Limit: l, Cost: 1}}, out); err != nil {
					t.Fatal(err)
				}
				return out[0]
			}
			apply("client", minute)
			if tc.beyond {
				for i := range 70 { // more than the 64 sets kept
					apply(fmt.Sprint("key-", i), sluice.FixedWindow(int64(10+i), time.Minute).Named("quota"))
				}
				apply("other", hour)
			}
			clock.Advance(5 * time.Second) // 12:00:10
			r0 := apply("client", hour)
			clock.Advance(10 * time.Second) // 12:00:20
			if st := apply("client", minute); !r0.Allowed || !st.Allowed {
				t.Fatalf("the first minute's requests: %+v, %+v", r0, st)
			}
			clock.Advance(40 * time.Second) // 12:01:00, the state's expiry
			if tc.sweep {
				s.Sweep()
			}
			clock.Advance(150 * time.Second) // 12:03:30
			for j := range 3 {
				if st := apply("client", minute); !st.Allowed {
					t.Fatalf("request %d of the minute from 12:03:30 refused: %+v", j+1, st)
				}
			}
			if err := s.Refund(ctx, []sluice.Check{{Key: "client", Limit: hour, Cost: 1}}, []int64{r0.Charged}); err != nil {
				t.Fatal(err)
			}
			if st := apply("client", minute); st.Allowed {
				t.Errorf("a fourth request in a minute limited to 3 admitted: the refund of a receipt from 12:00:10 was taken out of the state built at 12:03:30, after the one that counted it expired")
			}
		})
	}
}
