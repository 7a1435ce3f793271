package redis

import (
	"context"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/conformance"
	"github.com/sluice-dev/sluice/internal/redistest"
)

// hookClient runs hook once, before sending the first command
// that names key: the moment between a cross-slot call's reservation of
// an earlier slot and its run on key's slot.
type hookClient struct {
	rueidis.Client
	key  string
	once sync.Once
	hook func()
}

func (c *hookClient) Do(ctx context.Context, cmd rueidis.Completed) rueidis.RedisResult {
	if slices.Contains(cmd.Commands(), c.key) {
		c.once.Do(c.hook)
	}
	return c.Client.Do(ctx, cmd)
}

// A global bucket checked beside per-user limits in other slots: a call
// refused by its user's limit leaves the global bucket as if it had never
// run (the package doc, "Checks that span slots"; sluice.DecideBatch),
// even when four calls, admitted and finished, wrote the bucket between
// its reservation and its refund and pushed its record out of the
// bucket's tag (MAX_PENDING, bucket.lua): on a clock that does not move,
// the bound the refund then gives back is exact.
func TestABucketRefundBehindFourAdmittedCallsIsExact(t *testing.T) {
	cl := redistest.Cluster(t)
	plain := cl.Client(t)
	for _, global := range []sluice.Limit{ // no refill to speak of
		sluice.TokenBucket(100, time.Hour).Named("global-tb"),
		sluice.GCRA(100, time.Hour).Named("global-gcra"),
		sluice.LeakyBucket(100, time.Hour).Named("global-lb"),
	} {
		t.Run(global.Name(), func(t *testing.T) { bucketRefundBehindAdmittedCalls(t, plain, global) })
	}
}

func bucketRefundBehindAdmittedCalls(t *testing.T, plain rueidis.Client, global sluice.Limit) {
	ctx := context.Background()
	clock := conformance.NewClock(conformance.DefaultStart.Add(17 * time.Second))
	user := sluice.FixedWindow(1, time.Hour).Named("user")
	gslot := slot(Key("global", global.Name()))
	// Users whose slots come after the global's: the global bucket is
	// reserved first, then the user's slot decides.
	var users []string
	for i := 0; len(users) < 5; i++ {
		u := "bucket-user-" + global.Name() + strconv.Itoa(i)
		if slot(Key(u, "user")) > gslot {
			users = append(users, u)
		}
	}
	victim, others := users[0], users[1:]
	other := New(plain, WithTimeForTesting(clock.Now), WithTimeout(testTimeout))
	call := func(s *Store, u string) sluice.Decision {
		t.Helper()
		var d sluice.Decision
		checks := []sluice.Check{{Key: "global", Limit: global, Cost: 1}, {Key: u, Limit: user, Cost: 1}}
		if err := sluice.NewLimiter(s).Allow(ctx, checks, &d); err != nil {
			t.Fatal(err)
		}
		return d
	}
	// The victim spends its one unit of the hour: 99 left of the global 100.
	if d := call(other, victim); !d.Allowed {
		t.Fatalf("victim's first call: %+v", d)
	}
	// The victim's next call is refused by its user limit. Between its
	// global reservation and its user slot's run, four other users' calls
	// are admitted, one after another.
	hooked := &hookClient{Client: plain, key: Key(victim, "user"), hook: func() {
		for _, u := range others {
			if d := call(other, u); !d.Allowed {
				t.Errorf("%s: %+v", u, d)
			}
		}
	}}
	vs := New(hooked, WithTimeForTesting(clock.Now), WithTimeout(testTimeout))
	if d := call(vs, victim); d.Allowed {
		t.Fatalf("victim's second call admitted: %+v", d)
	}
	// Admitted: 1 + 4 = 5 units of the global 100. The refused call took none.
	out := make([]sluice.Status, 1)
	if err := other.Apply(ctx, []sluice.Check{{Key: "global", Limit: global, Cost: 0}}, out); err != nil {
		t.Fatal(err)
	}
	if out[0].Remaining != 95 {
		t.Errorf("global bucket has %d left after 5 admitted calls and 1 refused; want 95 (the refused call's reservation refunded); unrefunded=%d",
			out[0].Remaining, vs.Unrefunded())
	}
}

// The same through Open's store, as sluice serve runs it (over-limit
// cache, failover), 16 callers at once: users who have spent their own
// limit, each refused once, do not spend the global bucket they are
// checked beside. A refund whose record was pushed out gives back what
// the bucket misses because of it less the refill between reservation and
// refund (bucket.undo): under a 30-day bucket, 480 refunds of gaps within
// the 2 s store timeout lose less than one token in all.
func TestRefusedUsersDoNotSpendAGlobalBucketBesideThem(t *testing.T) {
	cl := redistest.Cluster(t)
	ctx := context.Background()
	st, err := Open(ctx, Options{Mode: ModeCluster, Addrs: cl.Addrs(), Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	global := sluice.TokenBucket(2000, 30*24*time.Hour).Named("global")
	user := sluice.FixedWindow(1, 24*time.Hour).Named("user")
	gslot := slot(Key("global", "global"))
	var users []string
	for i := 0; len(users) < 480; i++ {
		u := "open-user-" + strconv.Itoa(i)
		if slot(Key(u, "user")) > gslot {
			users = append(users, u)
		}
	}
	lim := sluice.NewLimiter(st)
	var admitted, refused atomic.Int64
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Go(func() {
			for i := g; i < len(users); i += 16 {
				for range 2 { // the user's one unit, then a call its limit refuses
					var d sluice.Decision
					checks := []sluice.Check{{Key: "global", Limit: global, Cost: 1}, {Key: users[i], Limit: user, Cost: 1}}
					if err := lim.Allow(ctx, checks, &d); err != nil {
						t.Error(err)
						return
					}
					if d.Allowed {
						admitted.Add(1)
					} else {
						refused.Add(1)
					}
				}
			}
		})
	}
	wg.Wait()
	out := make([]sluice.Status, 1)
	if err := st.Apply(ctx, []sluice.Check{{Key: "global", Limit: global, Cost: 0}}, out); err != nil {
		t.Fatal(err)
	}
	if want := 2000 - admitted.Load(); out[0].Remaining < want-1 || out[0].Remaining > want {
		t.Errorf("global bucket: %d left after %d admitted calls and %d refused by their users' limits; want %d, or one less (the refill the refunds cannot credit): %d tokens spent by refused calls",
			out[0].Remaining, admitted.Load(), refused.Load(), want, want-out[0].Remaining)
	}
}
