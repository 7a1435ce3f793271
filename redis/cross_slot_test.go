package redis

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/conformance"
	"github.com/sluice-dev/sluice/internal/redistest"
	"github.com/sluice-dev/sluice/internal/storetest"
)

// subjectsBySlot returns n subjects whose keys lie in distinct slots, in
// ascending slot order.
func subjectsBySlot(n int, prefix string) []string {
	seen := map[uint16]bool{}
	var subjects []string
	for i := 0; len(subjects) < n; i++ {
		s := fmt.Sprintf("%s%d", prefix, i)
		if sl := slot(Key(s, "x")); !seen[sl] {
			seen[sl] = true
			subjects = append(subjects, s)
		}
	}
	slices.SortFunc(subjects, func(a, b string) int { return int(slot(Key(a, "x"))) - int(slot(Key(b, "x"))) })
	return subjects
}

func exists(t *testing.T, c rueidis.Client, key string) bool {
	t.Helper()
	n, err := c.Do(context.Background(), c.B().Exists().Key(key).Build()).AsInt64()
	if err != nil {
		t.Fatal(err)
	}
	return n == 1
}

// A call spanning two slots reserves in the first; when the second refuses,
// the first is refunded and the statuses are DecideBatch's. When the first
// refuses, the second is decided without being written.
func TestCrossSlotRefusalLeavesNoTrace(t *testing.T) {
	t.Parallel()
	client := redistest.Cluster(t).Client(t)
	clock := conformance.NewClock(conformance.DefaultStart)
	store := New(client, WithTimeForTesting(clock.Now), WithTimeout(testTimeout))
	subj := subjectsBySlot(2, "subject-")
	low, high := subj[0], subj[1]
	user := sluice.TokenBucket(3, time.Second).Named("user")
	global := sluice.FixedWindow(1, time.Hour).Named("global")
	ctx := context.Background()
	states := map[string]sluice.State{}
	call := func(checks ...sluice.Check) []sluice.Status {
		t.Helper()
		got := make([]sluice.Status, len(checks))
		if err := store.Apply(ctx, checks, got); err != nil {
			t.Fatal(err)
		}
		want := make([]sluice.Status, len(checks))
		st := make([]sluice.State, len(checks))
		for i, c := range checks {
			st[i] = states[Key(c.Key, c.Limit.Name())]
		}
		changed, err := sluice.DecideBatch(checks, st, clock.Micros(), want)
		if err != nil {
			t.Fatal(err)
		}
		if changed {
			for i, c := range checks {
				states[Key(c.Key, c.Limit.Name())] = st[i]
			}
		}
		if !slices.Equal(got, want) {
			t.Fatalf("statuses %+v, want %+v", got, want)
		}
		return got
	}

	// The later slot refuses: the earlier slot's reservation is refunded.
	call(sluice.Check{Key: high, Limit: global, Cost: 1})
	st := call(sluice.Check{Key: low, Limit: user, Cost: 2}, sluice.Check{Key: high, Limit: global, Cost: 1})
	if !st[0].Allowed || st[0].Remaining != 3 || st[1].Allowed {
		t.Fatalf("statuses %+v: want the user check reported as a peek of a full bucket, the global one refused", st)
	}
	if exists(t, client, Key(low, "user")) {
		t.Errorf("the refunded reservation left %s behind", Key(low, "user"))
	}

	// The earlier slot refuses: the later slot is never written.
	call(sluice.Check{Key: low, Limit: global, Cost: 1})
	st = call(sluice.Check{Key: low, Limit: global, Cost: 1}, sluice.Check{Key: high, Limit: user, Cost: 1})
	if st[0].Allowed || !st[1].Allowed || st[1].Remaining != 3 {
		t.Fatalf("statuses %+v", st)
	}
	if exists(t, client, Key(high, "user")) {
		t.Errorf("a slot decided after a refusal was written: %s", Key(high, "user"))
	}

	// A refund restores an existing state exactly, TTL included.
	call(sluice.Check{Key: low, Limit: user, Cost: 1})
	ttl := func() int64 {
		ms, err := client.Do(ctx, client.B().Pexpiretime().Key(Key(low, "user")).Build()).AsInt64()
		if err != nil {
			t.Fatal(err)
		}
		return ms
	}
	before := ttl()
	call(sluice.Check{Key: low, Limit: user, Cost: 1}, sluice.Check{Key: high, Limit: global, Cost: 1})
	if after := ttl(); after != before {
		t.Errorf("expiry moved from %d to %d", before, after)
	}
	call(sluice.Check{Key: low, Limit: user, Cost: 0})
}

// A refund undoes exactly what its reservation added even when another
// call wrote the key in between (the undo path rather than the restore):
// afterwards every algorithm decides as if only the other call had run.
func TestRefundAfterAnotherWriteUndoesOnlyTheReservation(t *testing.T) {
	t.Parallel()
	client := redistest.Cluster(t).Client(t)
	limits := []sluice.Limit{
		sluice.FixedWindow(10, time.Minute), sluice.SlidingLog(10, time.Minute), sluice.SlidingCounter(10, time.Minute),
		sluice.TokenBucket(3, time.Second).WithBurst(10), sluice.LeakyBucket(3, time.Second).WithBurst(10).WithMaxWait(time.Second),
		sluice.GCRA(3, time.Second).WithBurst(10),
	}
	for _, l := range limits {
		t.Run(l.Algorithm().String(), func(t *testing.T) {
			clock := conformance.NewClock(conformance.DefaultStart.Add(17 * time.Second))
			store := New(client, WithTimeForTesting(clock.Now), WithTimeout(testTimeout))
			ctx := context.Background()
			subject := "undo-" + l.Algorithm().String()
			checks := []sluice.Check{{Key: subject, Limit: l, Cost: 4}}
			keys := []string{Key(subject, l.Name())}
			out := make([]sluice.Status, 1)

			// Reserve 4 units, let another call take 2 a little later,
			// then refund the reservation.
			r, err := store.run(ctx, modeReserve, "tok", checks, keys, []int{0}, out)
			if err != nil || r.refused {
				t.Fatalf("reserve: %+v, %v", r, err)
			}
			clock.Advance(100 * time.Millisecond)
			other := []sluice.Check{{Key: subject, Limit: l, Cost: 2}}
			if err := store.Apply(ctx, other, out); err != nil || !out[0].Allowed {
				t.Fatalf("other call: %+v, %v", out, err)
			}
			clock.Advance(100 * time.Millisecond)
			if err := store.refund(ctx, "tok", checks, keys, reservation{idx: []int{0}, undo: r.undo}, out); err != nil {
				t.Fatal(err)
			}

			// The reference saw only the other call.
			ref, _ := storetest.Decided(l.Decide(sluice.State{}, clock.Micros()-100_000, 2))
			_, want := storetest.Decided(l.Decide(ref, clock.Micros(), 0))
			if out[0] != want {
				t.Fatalf("after the refund: %+v, want %+v", out[0], want)
			}
			for range 12 {
				clock.Advance(150 * time.Millisecond)
				var w sluice.Status
				ref, w = storetest.Decided(l.Decide(ref, clock.Micros(), 1))
				if err := store.Apply(ctx, []sluice.Check{{Key: subject, Limit: l, Cost: 1}}, out); err != nil {
					t.Fatal(err)
				}
				if out[0] != w {
					t.Fatalf("later: %+v, want %+v", out[0], w)
				}
			}
		})
	}
}

// Many goroutines send calls that span slots (a global limit and per-user
// limits) with real Redis time: every admitted call is counted exactly once
// in every key it touched, and no refund leaves units behind.
func TestConcurrentCrossSlotCallsCountExactly(t *testing.T) {
	t.Parallel()
	client := redistest.Cluster(t).Client(t)
	const window = 400 * 24 * time.Hour // no boundary during the test
	// Both the global and the per-user limits bind: 12 users × 8 > 60.
	global := sluice.FixedWindow(60, window).Named("global")
	perUser := sluice.FixedWindow(10, window).Named("fw")
	logUser := sluice.SlidingLog(8, window).Named("log")
	counterUser := sluice.SlidingCounter(12, window).Named("counter")
	users := subjectsBySlot(12, "user-")
	admitted := make([]atomic.Int64, len(users))
	var total atomic.Int64
	var wg sync.WaitGroup
	for g := range 32 {
		store := New(client, WithTimeout(testTimeout))
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(g), 7))
			for range 40 {
				u := r.IntN(len(users))
				checks := []sluice.Check{
					{Key: "global", Limit: global, Cost: 1},
					{Key: users[u], Limit: perUser, Cost: 1},
					{Key: users[u], Limit: logUser, Cost: 1},
					{Key: users[u], Limit: counterUser, Cost: 1},
				}
				var d sluice.Decision
				if err := sluice.NewLimiter(store).Allow(context.Background(), checks, &d); err != nil {
					t.Error(err)
					return
				}
				if d.Allowed {
					admitted[u].Add(1)
					total.Add(1)
				}
			}
		})
	}
	wg.Wait()
	// field reads the stored count a: a hash field (sliding log), or the
	// a of the string state (the other algorithms).
	field := func(key, f string) int64 {
		ctx := context.Background()
		v, err := client.Do(ctx, client.B().Hget().Key(key).Field(f).Build()).ToString()
		if err != nil && strings.Contains(err.Error(), "WRONGTYPE") {
			var s string
			if s, err = client.Do(ctx, client.B().Get().Key(key).Build()).ToString(); err == nil {
				_, _, a, _, ok := stringState(s)
				if !ok {
					t.Fatalf("%s holds %q, not a string state", key, s)
				}
				v = strconv.FormatInt(a, 10)
			}
		}
		if rueidis.IsRedisNil(err) {
			return 0
		}
		if err != nil {
			t.Fatal(err)
		}
		n, _ := strconv.ParseInt(v, 10, 64)
		return n
	}
	if got := field(Key("global", "global"), "a"); got != total.Load() || got > 60 {
		t.Errorf("global counts %d, admitted %d (limit 60)", got, total.Load())
	}
	for i, u := range users {
		want := admitted[i].Load()
		if want > 8 {
			t.Errorf("%s: admitted %d, above its sliding log's 8", u, want)
		}
		for _, name := range []string{"fw", "log", "counter"} {
			if got := field(Key(u, name), "a"); got != want {
				t.Errorf("%s: %s counts %d, admitted %d", u, name, got, want)
			}
		}
	}
	t.Logf("admitted %d calls of %d", total.Load(), 32*40)
}

// A caller that gives up once a later slot has refused its call (its
// context cancelled, say by a client that went away) does not strand the
// earlier slots' reservations: the refund is the store's own work, not
// the caller's, and the units are back for the next call.
func TestCrossSlotRefundOutlivesTheCallersContext(t *testing.T) {
	t.Parallel()
	client := redistest.Cluster(t).Client(t)
	subj := subjectsBySlot(2, "gone-")
	low, high := subj[0], subj[1]
	limit := sluice.FixedWindow(1, 400*24*time.Hour).Named("fw")
	base := conformance.NewClock(conformance.DefaultStart)
	bg := context.Background()

	// Exhaust the later slot's limit.
	plain := New(client, WithTimeForTesting(base.Now), WithTimeout(testTimeout))
	out := make([]sluice.Status, 2)
	if err := plain.Apply(bg, []sluice.Check{{Key: high, Limit: limit, Cost: 1}}, out[:1]); err != nil || !out[0].Allowed {
		t.Fatalf("first call: %+v, %v", out[0], err)
	}

	// The store reads its clock once per script run: the third read comes
	// after both slots have answered, before the refund is sent. The
	// caller's context ends there.
	ctx, cancel := context.WithCancel(bg)
	defer cancel()
	var reads atomic.Int64
	now := func() time.Time {
		if reads.Add(1) == 3 {
			cancel()
		}
		return base.Now()
	}
	store := New(client, WithTimeForTesting(now), WithTimeout(testTimeout))
	checks := []sluice.Check{{Key: low, Limit: limit, Cost: 1}, {Key: high, Limit: limit, Cost: 1}}
	err := store.Apply(ctx, checks, out)
	if reads.Load() < 3 {
		t.Fatalf("the clock was read %d times, want a run per slot and the refund's (err %v)", reads.Load(), err)
	}
	if err == nil && (out[1].Allowed || !out[0].Allowed) {
		t.Fatalf("statuses %+v: want the later slot refused and the earlier one a peek", out)
	}

	// The earlier slot's unit is back: a call of it alone is admitted.
	if err := plain.Apply(bg, []sluice.Check{{Key: low, Limit: limit, Cost: 1}}, out[:1]); err != nil || !out[0].Allowed {
		t.Fatalf("after the refused call: %+v, %v; want the earlier slot's unit refunded and admitted", out[0], err)
	}
}
