package httplimit_test

import (
	"context"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/internal/redistest"
	"github.com/sluice-dev/sluice/memory"
	"github.com/sluice-dev/sluice/redis"
)

// leasedBox is a plan whose quota is leased (a fixed window with room to
// spare) and a penalty box.
var leasedBox = httplimit.Options{
	Plans:       []*httplimit.Plan{{Name: "free", Limits: []sluice.Limit{sluice.FixedWindow(10_000, time.Hour)}}},
	Penalty:     httplimit.Penalty{Refusals: 5, Within: time.Minute, For: 10 * time.Minute},
	StoreLeases: true,
}

// leasedMiddlewares returns two middlewares configured by o, as two
// instances of a service on one real Redis, each with the store Open makes
// with leases (as the server runs it), with their stores, the Redis server
// and the fake clock the middlewares and the stores' leases run by.
func leasedMiddlewares(t *testing.T, o httplimit.Options) ([2]*httplimit.Middleware, [2]*redis.Guarded, *redistest.Server, *fakeClock) {
	t.Helper()
	clock := clockAt(time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC))
	srv := redistest.Standalone(t)
	o.Clock, o.Scope = clock.Now, "api"
	o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	var mws [2]*httplimit.Middleware
	var gs [2]*redis.Guarded
	for i := range mws {
		g, err := redis.Open(context.Background(), redis.Options{Addrs: []string{srv.Addr}, Timeout: 10 * time.Second, Instances: 2,
			Lease: redis.LeaseOptions{Mode: redis.LeaseAuto}}, redis.WithTimeForTesting(clock.Now))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { g.Close() })
		mw, err := httplimit.New(sluice.NewLimiter(g), o)
		if err != nil {
			t.Fatal(err)
		}
		mws[i], gs[i] = mw, g
	}
	return mws, gs, srv, clock
}

// scriptRuns returns how many scripts Redis has run (INFO commandstats):
// every decision, take and give-back that reached it. An EVALSHA of a
// script Redis did not know yet, which fails (NOSCRIPT) and is sent again
// as an EVAL, once per script, is not counted.
func scriptRuns(t *testing.T, srv *redistest.Server) int64 {
	t.Helper()
	info, err := srv.Info("commandstats")
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	for _, k := range []string{"cmdstat_evalsha", "cmdstat_eval"} {
		for _, f := range strings.Split(info[k], ",") {
			if v, ok := strings.CutPrefix(f, "calls="); ok {
				n, _ := strconv.ParseInt(v, 10, 64)
				total += n
			}
			if v, ok := strings.CutPrefix(f, "failed_calls="); ok {
				n, _ := strconv.ParseInt(v, 10, 64)
				total -= n
			}
		}
	}
	return total
}

// leaseSettled waits until g takes no lease in the background and returns
// its lease counts then.
func leaseSettled(t *testing.T, g *redis.Guarded) redis.LeaseStats {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		s := g.Leases().Stats()
		if s.Taking == 0 {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("takes still running after 10 s: %+v", s)
		}
		time.Sleep(time.Millisecond)
	}
}

// With leased quota and a penalty box, the requests of a client not in the
// box are decided from the instance's leases: 200 requests over 10 seconds
// cost Redis a guarded call per second (10) and the takes of their leases,
// not 200 script runs.
func TestALeasedClientNotBoxedCostsRedisOncePerSecond(t *testing.T) {
	mws, gs, srv, clock := leasedMiddlewares(t, leasedBox)
	h := mws[1].Handler(okHandler())
	a := req{remote: "192.0.2.1:1"}
	const n, step = 200, 50 * time.Millisecond
	before, stats := scriptRuns(t, srv), gs[1].Leases().Stats()
	for i := range n {
		if w := do(h, a); w.Code != 200 {
			t.Fatalf("request %d: %d %s, want 200", i, w.Code, w.Body.String())
		}
		if i < n-1 {
			clock.Advance(step)
		}
	}
	leaseSettled(t, gs[1])
	runs := scriptRuns(t, srv) - before
	after := gs[1].Leases().Stats()
	takes, giveBacks := after.Leases-stats.Leases, after.GiveBacks-stats.GiveBacks
	span := time.Duration(n-1) * step
	guarded := int64(span/time.Second) + 1 // at 0 s, 1 s, … 9 s
	t.Logf("%d requests over %v: %d script runs in Redis (%d takes, %d give-backs, %d decided from leases)",
		n, span, runs, takes, giveBacks, after.Local-stats.Local)
	if runs > guarded+takes+giveBacks {
		t.Errorf("%d requests of a client not in the box over %v ran %d scripts in Redis, want at most %d guarded calls + %d takes + %d give-backs",
			n, span, runs, guarded, takes, giveBacks)
	}
}

// A box set on one instance reaches another that decides the client from
// its leases within a second of the store's last word on the client there:
// meanwhile that instance admits the client only from the leases it holds
// (no request of it reaches Redis, beyond takes), and from then on it
// refuses it by the box.
func TestABoxSetElsewhereReachesALeasedInstanceWithinASecond(t *testing.T) {
	mws, gs, srv, clock := leasedMiddlewares(t, leasedBox)
	h := mws[1].Handler(okHandler())
	a, subject := req{remote: "192.0.2.1:1"}, "ip:192.0.2.1"
	for i := range 5 { // the first asks the store of the box; the others lease
		if w := do(h, a); w.Code != 200 {
			t.Fatalf("request %d before the box: %d, want 200", i, w.Code)
		}
		clock.Advance(time.Millisecond)
	}
	held := leaseSettled(t, gs[1])
	if held.Held == 0 {
		t.Fatalf("no lease held after 5 requests: %+v", held)
	}
	clock.Advance(5 * time.Millisecond) // 10 ms after the store's word
	if _, err := mws[0].Penalize(context.Background(), subject); err != nil {
		t.Fatal(err)
	}
	before := scriptRuns(t, srv)
	admitted := 0
	for clock.Advance(10 * time.Millisecond); ; clock.Advance(10 * time.Millisecond) {
		if clock.Now().Sub(time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)) >= time.Second {
			break
		}
		w := do(h, a)
		switch {
		case w.Code == 200:
			admitted++
		case w.Code != 429 || decodeProblem(t, w.Body.String()).Type != httplimit.ProblemPenalty:
			t.Fatalf("%v after the box: %d %s", clock.Now().Sub(time.Date(2026, 11, 30, 12, 0, 0, 10_000_000, time.UTC)), w.Code, w.Body.String())
		}
	}
	after := leaseSettled(t, gs[1])
	runs := scriptRuns(t, srv) - before
	takes, giveBacks := after.Leases-held.Leases, after.GiveBacks-held.GiveBacks
	limit := held.Held + after.Leased - held.Leased
	t.Logf("within the second: %d admitted from leases holding %d units and %d leased since; %d script runs (%d takes, %d give-backs)",
		admitted, held.Held, after.Leased-held.Leased, runs, takes, giveBacks)
	if int64(admitted) > limit {
		t.Errorf("admitted %d requests of the boxed client within the second, more than its leases held (%d)", admitted, limit)
	}
	if runs > takes+giveBacks {
		t.Errorf("within the second, %d script runs in Redis, want only the %d takes and %d give-backs", runs, takes, giveBacks)
	}
	// A second after the call that found it not boxed, the box refuses it.
	w := do(h, a)
	if w.Code != 429 || decodeProblem(t, w.Body.String()).Type != httplimit.ProblemPenalty || w.Header().Get("Retry-After") != "600" {
		t.Fatalf("a second on: %d Retry-After %q %s, want the box's 429 with Retry-After 600", w.Code, w.Header().Get("Retry-After"), w.Body.String())
	}
	if got := statuses(mws[1], a); got[0] != 429 {
		t.Errorf("next request: %d, want 429 (the box remembered)", got[0])
	}
}

// guardCounting counts the calls that reach its store with the penalty
// box's guard beside a request's limits.
type guardCounting struct {
	sluice.Store
	calls, guarded atomic.Int64
}

func (s *guardCounting) Apply(ctx context.Context, checks []sluice.Check, out []sluice.Status) error {
	s.calls.Add(1)
	if len(checks) > 1 && checks[len(checks)-1].Limit.Name() == "penalty" {
		s.guarded.Add(1)
	}
	return s.Store.Apply(ctx, checks, out)
}

// Without StoreLeases (its zero value) every request's call holds the
// box's guard, as before the field existed; with it, the call of a client
// the store said was not in the box less than a second before holds none.
// A client boxed elsewhere is refused at once without StoreLeases, and
// within a second with it.
func TestTheGuardIsSentOncePerSecondOnlyWithStoreLeases(t *testing.T) {
	for _, tc := range []struct {
		leases           bool
		guarded, boxedBy int64 // guarded calls of 20 requests; ms until a box set elsewhere refuses
	}{{false, 20, 0}, {true, 2, 1000}} {
		t.Run(strconv.FormatBool(tc.leases), func(t *testing.T) {
			clock := clockAt(time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC))
			mem := memory.New(memory.WithClock(clock.Now), memory.WithSweepInterval(0))
			t.Cleanup(func() { mem.Close() })
			counted := &guardCounting{Store: mem}
			o := leasedBox
			o.StoreLeases = tc.leases
			o.Clock, o.Scope = clock.Now, "api"
			o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
			var mws [2]*httplimit.Middleware
			for i := range mws {
				mw, err := httplimit.New(sluice.NewLimiter(counted), o)
				if err != nil {
					t.Fatal(err)
				}
				mws[i] = mw
			}
			a := req{remote: "192.0.2.1:1"}
			for i := range 20 {
				if got := statuses(mws[1], a); got[0] != 200 {
					t.Fatalf("request %d: %d, want 200", i, got[0])
				}
				clock.Advance(100 * time.Millisecond)
			}
			if c, g := counted.calls.Load(), counted.guarded.Load(); c != 20 || g != tc.guarded {
				t.Errorf("20 requests over 2 s: %d store calls, %d with the guard; want 20, %d", c, g, tc.guarded)
			}
			// The last call with the guard was sent at 1 s; the box is set at 2 s.
			if _, err := mws[0].Penalize(context.Background(), "ip:192.0.2.1"); err != nil {
				t.Fatal(err)
			}
			boxedAt := clock.Now()
			for {
				w := do(mws[1].Handler(okHandler()), a)
				if w.Code == 429 && decodeProblem(t, w.Body.String()).Type == httplimit.ProblemPenalty {
					break
				}
				if w.Code != 200 {
					t.Fatalf("%v after the box: %d %s", clock.Now().Sub(boxedAt), w.Code, w.Body.String())
				}
				clock.Advance(time.Millisecond)
			}
			if got := clock.Now().Sub(boxedAt); got > time.Duration(tc.boxedBy)*time.Millisecond {
				t.Errorf("a box set elsewhere refused the client %v after it was set, want within %d ms", got, tc.boxedBy)
			}
		})
	}
}
