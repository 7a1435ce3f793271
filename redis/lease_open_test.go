package redis_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/failover"
	"github.com/sluice-dev/sluice/internal/redistest"
	"github.com/sluice-dev/sluice/redis"
)

// openLeased opens the store a service runs, leasing every leasable
// limit, on srv.
func openLeased(t *testing.T, srv *redistest.Server, o redis.Options) *redis.Guarded {
	t.Helper()
	o.Addrs = []string{srv.Addr}
	if o.Timeout == 0 {
		o.Timeout = testTimeout
	}
	o.Lease.Mode = redis.LeaseAuto
	g, err := redis.Open(context.Background(), o, redis.WithBatching(0))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	return g
}

// spendN applies n checks of cost 1 and returns how many were admitted.
func spendN(t *testing.T, s sluice.Store, c sluice.Check, n int) int {
	t.Helper()
	admitted := 0
	for range n {
		out := make([]sluice.Status, 1)
		if err := s.Apply(context.Background(), []sluice.Check{c}, out); err != nil {
			t.Fatal(err)
		}
		if out[0].Allowed {
			admitted++
		}
	}
	return admitted
}

// settled waits until l runs no take (they run in the background) and
// returns its counts then.
func settled(t *testing.T, l *redis.Leased) redis.LeaseStats {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		s := l.Stats()
		if s.Taking == 0 {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("takes still running after 10 s: %+v", s)
		}
		time.Sleep(time.Millisecond)
	}
}

// peek returns what the shared state in Redis has left of c's limit.
func peek(t *testing.T, srv *redistest.Server, c sluice.Check) int64 {
	t.Helper()
	out := make([]sluice.Status, 1)
	c.Cost = 0
	if err := redis.New(srv.Client(t), redis.WithTimeout(testTimeout)).Apply(context.Background(), []sluice.Check{c}, out); err != nil {
		t.Fatal(err)
	}
	return out[0].Remaining
}

// Close gives the unspent units of its leases back: the shared state
// shows them counted while the lease is held and back once it is closed.
func TestLeasedCloseGivesBackItsUnits(t *testing.T) {
	t.Parallel()
	srv := redistest.Standalone(t)
	for _, limit := range []sluice.Limit{sluice.FixedWindow(1000, time.Hour), sluice.SlidingCounter(1000, time.Hour),
		sluice.GCRA(1000, time.Hour), sluice.TokenBucket(1000, time.Hour)} {
		t.Run(limit.Algorithm().String(), func(t *testing.T) {
			g := openLeased(t, srv, redis.Options{Lease: redis.LeaseOptions{Idle: time.Hour}})
			c := sluice.Check{Key: "close-" + limit.Algorithm().String(), Limit: limit, Cost: 1}
			// Two calls decided exactly (the second starts a take), then,
			// once the take is in, calls spent from its lease.
			if n := spendN(t, g, c, 2); n != 2 {
				t.Fatalf("admitted %d of 2", n)
			}
			settled(t, g.Leases())
			if n := spendN(t, g, c, 3); n != 3 {
				t.Fatalf("admitted %d of 3", n)
			}
			s := settled(t, g.Leases())
			if s.Held == 0 || s.Spent == 0 {
				t.Fatalf("no lease held after 5 calls: %+v", s)
			}
			// A bucket's shared remainder is of its shared burst, less its
			// hold-back (limit.Burst() − shared burst is constant).
			full := peek(t, srv, c) + 5 + s.Held
			g.Close()
			if got := peek(t, srv, c); got != full-5 {
				t.Errorf("after Close Redis has %d left, want %d (the %d units held given back, the 5 spent kept)", got, full-5, s.Held)
			}
			if s := g.Leases().Stats(); s.Returned == 0 || s.Held != 0 {
				t.Errorf("after Close: %+v, want the lease returned", s)
			}
		})
	}
}

// A call of two leased limits whose second take is refused by the shared
// state spends nothing of the first limit's lease: all or nothing.
func TestLeasedRefusalSpendsNoLease(t *testing.T) {
	t.Parallel()
	srv := redistest.Standalone(t)
	client := srv.Client(t)
	st := redis.New(client, redis.WithTimeout(testTimeout))
	one := redis.NewLeased(st, st, 2, redis.LeaseOptions{Mode: redis.LeaseAuto, Idle: time.Hour})
	other := redis.NewLeased(st, st, 2, redis.LeaseOptions{Mode: redis.LeaseAuto, Idle: time.Hour})
	t.Cleanup(func() { one.Close(); other.Close() })
	a := sluice.Check{Key: "aon", Limit: sluice.FixedWindow(1000, time.Hour).Named("a"), Cost: 1}
	b := sluice.Check{Key: "aon", Limit: sluice.FixedWindow(40, time.Hour).Named("b"), Cost: 1}
	spendN(t, one, b, 1)                                     // b's remainder known, and b leased
	if err := one.Return(context.Background()); err != nil { // b's lease back: a call of b needs a take
		t.Fatal(err)
	}
	spendN(t, one, a, 3) // a leased
	held := settled(t, one).Held
	if held == 0 {
		t.Fatalf("no lease of a: %+v", one.Stats())
	}
	spendN(t, other, b, 100) // b's shared quota spent
	out := make([]sluice.Status, 2)
	if err := one.Apply(context.Background(), []sluice.Check{a, b}, out); err != nil {
		t.Fatal(err)
	}
	if out[0].Allowed && out[1].Allowed {
		t.Fatalf("a call over b's exhausted limit admitted: %+v", out)
	}
	if s := one.Stats(); s.Held != held {
		t.Errorf("after the refusal %d units of a's lease are held, want %d: %+v", s.Held, held, s)
	}
}

// evalCalls returns how many scripts Redis has run.
func evalCalls(t *testing.T, srv *redistest.Server) int {
	t.Helper()
	info, err := srv.Info("commandstats")
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, k := range []string{"cmdstat_evalsha", "cmdstat_eval"} {
		v := info[k] // calls=N,usec=…
		if i := strings.Index(v, "calls="); i >= 0 {
			n, _ := strconv.Atoi(strings.SplitN(v[i+6:], ",", 2)[0])
			total += n
		}
	}
	return total
}

// A key whose shared quota is spent is refused in memory, by the over-limit
// cache, until its next unit could exist: 200 knocks cost Redis at most a
// few scripts.
func TestLeasedRefusalIsRememberedLocally(t *testing.T) {
	t.Parallel()
	srv := redistest.Standalone(t)
	g := openLeased(t, srv, redis.Options{})
	c := sluice.Check{Key: "abuser", Limit: sluice.FixedWindow(50, time.Hour), Cost: 1}
	if n := spendN(t, g, c, 60); n != 50 {
		t.Fatalf("admitted %d of 60 on a limit of 50", n)
	}
	before := evalCalls(t, srv)
	if n := spendN(t, g, c, 200); n != 0 {
		t.Fatalf("admitted %d over the limit", n)
	}
	if d := evalCalls(t, srv) - before; d > 2 {
		t.Errorf("200 refused calls ran %d scripts in Redis, want at most 2", d)
	}
}

// While Redis is stopped (SIGSTOP), an instance keeps spending the lease
// it holds, at memory speed, and then follows on_store_error (deny here);
// once Redis resumes, it decides on Redis again.
func TestLeasedOutageSpendsTheHeldLeaseThenThePolicy(t *testing.T) {
	t.Parallel()
	srv := redistest.Standalone(t)
	g := openLeased(t, srv, redis.Options{OnStoreError: failover.Deny, Timeout: 100 * time.Millisecond,
		Lease: redis.LeaseOptions{Idle: time.Hour, MaxAge: time.Hour}})
	c := sluice.Check{Key: "outage", Limit: sluice.FixedWindow(10_000, time.Hour), Cost: 1}
	// The lease grows with the calls; a take that a loaded machine makes
	// pass the 100 ms timeout is taken again by the next calls.
	var held int64
	for deadline := time.Now().Add(10 * time.Second); ; {
		spendN(t, g, c, 40)
		if held = settled(t, g.Leases()).Held; held >= 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("lease of %d units held after 10 s of calls", held)
		}
	}
	srv.Pause()
	defer srv.Resume()
	// A call that asked the stopped Redis would wait the whole timeout
	// (100 ms); one that spends the lease does not.
	var slowest time.Duration
	for i := range held {
		start := time.Now()
		if n := spendN(t, g, c, 1); n != 1 {
			t.Fatalf("with Redis stopped, unit %d of the %d held was refused", i+1, held)
		}
		slowest = max(slowest, time.Since(start))
	}
	if slowest >= 100*time.Millisecond {
		t.Errorf("spending %d held units with Redis stopped, a call took %v: it waited for Redis", held, slowest)
	}
	if n := spendN(t, g, c, 5); n != 0 {
		t.Errorf("after the lease, %d of 5 admitted with Redis stopped under deny", n)
	}
	srv.Resume()
	deadline := time.Now().Add(5 * time.Second)
	for spendN(t, g, c, 1) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("not admitting 5 s after Redis resumed")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// A reload that changes a limit (same ID, another quantity) gives the old
// limit's lease back: Redis shows the units held under the old limit
// returned once the new limit is used and the give-back has run.
func TestLeasedReloadGivesBackTheOldLimitsLease(t *testing.T) {
	t.Parallel()
	srv := redistest.Standalone(t)
	st := redis.New(srv.Client(t), redis.WithTimeout(testTimeout))
	l := redis.NewLeased(st, st, 1, redis.LeaseOptions{Mode: redis.LeaseAuto, Idle: time.Hour})
	t.Cleanup(func() { l.Close() })
	old := sluice.Check{Key: "reload", Limit: sluice.FixedWindow(1000, time.Hour).Named("per-hour"), Cost: 1}
	spendN(t, l, old, 5)
	held := settled(t, l).Held
	if held == 0 {
		t.Fatalf("no lease held: %+v", l.Stats())
	}
	changed := old
	changed.Limit = sluice.FixedWindow(2000, time.Hour).Named("per-hour")
	spendN(t, l, changed, 1) // decided exactly: a new limit's first check
	if err := l.Return(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got, want := peek(t, srv, changed), int64(2000-6); got != want {
		t.Errorf("after the reload Redis has %d left, want %d (the old lease's %d units given back)", got, want, held)
	}
}

// leasesHeld starts a Redis and two leasing stores on it, a and b (two
// instances, leases kept an hour), and has a spend c (key, limit, cost 1)
// one unit at a time, ten times, so that a holds a lease: it fails t, as
// holding nothing before event, unless a holds 5 units or more, and
// returns a's lease figures then.
func leasesHeld(t *testing.T, limit sluice.Limit, key, event string) (srv *redistest.Server, a, b *redis.Guarded, c sluice.Check, before redis.LeaseStats) {
	t.Helper()
	srv = redistest.Standalone(t)
	o := redis.Options{Instances: 2, OnStoreError: failover.Local,
		Lease: redis.LeaseOptions{MaxAge: time.Hour, Idle: time.Hour}}
	a, b = openLeased(t, srv, o), openLeased(t, srv, o)
	c = sluice.Check{Key: key, Limit: limit, Cost: 1}
	for range 10 {
		spendN(t, a, c, 1)
		settled(t, a.Leases())
	}
	before = settled(t, a.Leases())
	if before.Held < 5 {
		t.Fatalf("a holds %d units of lease before %s, want a lease", before.Held, event)
	}
	return srv, a, b, c, before
}
