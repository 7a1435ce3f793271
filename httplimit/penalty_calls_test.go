package httplimit_test

import (
	"context"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/memory"
)

// countingStore counts the calls that reach its store.
type countingStore struct {
	sluice.Store
	calls atomic.Int64
}

func (s *countingStore) Apply(ctx context.Context, checks []sluice.Check, out []sluice.Status) error {
	s.calls.Add(1)
	return s.Store.Apply(ctx, checks, out)
}

// countedMiddlewares returns n middlewares configured by o, as n instances
// of a service sharing one store, with the store, the calls that reach it
// and a fake clock shared by all.
func countedMiddlewares(t *testing.T, n int, o httplimit.Options) ([]*httplimit.Middleware, *memory.Store, *countingStore, *fakeClock) {
	t.Helper()
	clock := clockAt(time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC))
	store := memory.New(memory.WithClock(clock.Now), memory.WithSweepInterval(0))
	t.Cleanup(func() { store.Close() })
	counted := &countingStore{Store: store}
	o.Clock = clock.Now
	o.Scope = "api" // one for every instance: they share the clients' state
	o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	var mws []*httplimit.Middleware
	for range n {
		mw, err := httplimit.New(sluice.NewLimiter(counted), o)
		if err != nil {
			t.Fatal(err)
		}
		mws = append(mws, mw)
	}
	return mws, store, counted, clock
}

// boxedAfterOneRefusal is a plan of 1 request a minute and a box that
// holds for 10 minutes from the first refusal.
var boxedAfterOneRefusal = httplimit.Options{
	Plans:   []*httplimit.Plan{{Name: "free", Limits: []sluice.Limit{sluice.FixedWindow(1, time.Minute)}}},
	Penalty: httplimit.Penalty{Refusals: 1, Within: time.Minute, For: 10 * time.Minute},
}

// wantBoxed fails t unless every request of r through mw is refused by the
// box with Retry-After retry, without a store call.
func wantBoxed(t *testing.T, mw *httplimit.Middleware, counted *countingStore, r req, n int, retry string) {
	t.Helper()
	h := mw.Handler(okHandler())
	before := counted.calls.Load()
	for i := range n {
		w := do(h, r)
		if p := decodeProblem(t, w.Body.String()); w.Code != 429 || p.Type != httplimit.ProblemPenalty || w.Header().Get("Retry-After") != retry {
			t.Fatalf("request %d: %d Retry-After %q %s, want the box's 429 with Retry-After %s", i, w.Code, w.Header().Get("Retry-After"), w.Body.String(), retry)
		}
	}
	if got := counted.calls.Load() - before; got != 0 {
		t.Errorf("%d requests of a boxed client made %d store calls, want 0", n, got)
	}
}

// A client the box holds is refused from what the instance knows, the
// box's end, without a store call per request: once at most per second
// (what overlimit.DefaultMaxAge bounds a remembered refusal to) it asks
// the store again, so that an operator's release reaches it.
func TestABoxedClientCostsNoStoreCall(t *testing.T) {
	mws, _, counted, clock := countedMiddlewares(t, 1, boxedAfterOneRefusal)
	mw := mws[0]
	a := req{remote: "192.0.2.1:1"}
	if got := statuses(mw, a, a); got[0] != 200 || got[1] != 429 {
		t.Fatalf("a ×2: %v, want [200 429] (the refusal boxes a)", got)
	}
	wantBoxed(t, mw, counted, a, 20, "600")
	clock.Advance(time.Second)
	before := counted.calls.Load()
	if w := do(mw.Handler(okHandler()), a); w.Code != 429 || w.Header().Get("Retry-After") != "599" {
		t.Fatalf("a second later: %d Retry-After %q, want 429 and 599", w.Code, w.Header().Get("Retry-After"))
	}
	if got := counted.calls.Load() - before; got != 1 {
		t.Errorf("a second later the box was asked with %d store calls, want 1", got)
	}
	wantBoxed(t, mw, counted, a, 20, "599")
}

// The box is remembered with its end: a box shorter than a second lifts
// when the store says it does, not when the memory of it would expire.
func TestARememberedBoxLiftsOnTime(t *testing.T) {
	mws, _, counted, clock := countedMiddlewares(t, 1, httplimit.Options{
		Plans:   []*httplimit.Plan{{Name: "free", Limits: []sluice.Limit{sluice.FixedWindow(1, 100*time.Millisecond)}}},
		Penalty: httplimit.Penalty{Refusals: 1, Within: time.Minute, For: 500 * time.Millisecond},
	})
	mw := mws[0]
	a := req{remote: "192.0.2.1:1"}
	if got := statuses(mw, a, a); got[0] != 200 || got[1] != 429 {
		t.Fatalf("a ×2: %v, want [200 429] (the refusal boxes a)", got)
	}
	clock.Advance(400 * time.Millisecond)
	wantBoxed(t, mw, counted, a, 5, "1")
	clock.Advance(100*time.Millisecond - time.Microsecond)
	if got := statuses(mw, a); got[0] != 429 {
		t.Fatalf("1µs before the box lifts: %d, want 429", got[0])
	}
	clock.Advance(time.Microsecond)
	if got := statuses(mw, a); got[0] != 200 {
		t.Fatalf("when the box lifts: %d, want 200", got[0])
	}
}

// A client boxed by another instance sharing the store costs this one a
// store call to learn of it, then none while the box holds it.
func TestABoxSetByAnotherInstanceCostsOneStoreCall(t *testing.T) {
	mws, _, counted, _ := countedMiddlewares(t, 2, boxedAfterOneRefusal)
	a := req{remote: "192.0.2.1:1"}
	if got := statuses(mws[0], a, a); got[0] != 200 || got[1] != 429 {
		t.Fatalf("a ×2 on the first instance: %v, want [200 429] (the refusal boxes a)", got)
	}
	before := counted.calls.Load()
	if got := statuses(mws[1], a); got[0] != 429 {
		t.Fatalf("a on the second instance: %d, want 429", got[0])
	}
	if got := counted.calls.Load() - before; got != 1 {
		t.Errorf("the second instance learned of the box in %d store calls, want 1", got)
	}
	wantBoxed(t, mws[1], counted, a, 20, "600")
}

// An operator who lets a client out of the box through one instance (its
// SubjectLimits, the store's reset, then its ForgetBox) is seen by that instance at once,
// and by another that remembers the box within a second: it asks the
// store again then.
func TestAReleaseFromTheBoxReachesEveryInstanceWithinASecond(t *testing.T) {
	o := boxedAfterOneRefusal
	o.Penalty.Refusals = 2
	mws, store, _, clock := countedMiddlewares(t, 2, o)
	a := req{remote: "192.0.2.1:1"}
	if got := statuses(mws[0], a, a, a); got[0] != 200 || got[1] != 429 || got[2] != 429 {
		t.Fatalf("a ×3: %v, want [200 429 429] (the second refusal boxes a)", got)
	}
	if got := statuses(mws[1], a); got[0] != 429 {
		t.Fatalf("a on the second instance: %d, want 429", got[0])
	}
	key, limits, err := mws[0].SubjectLimits("ip:192.0.2.1", "")
	if err != nil {
		t.Fatal(err)
	}
	store.Reset(key, limits) // its quota, its refusals and its box
	if got := statuses(mws[0], a); got[0] != 429 {
		t.Fatalf("after the store's reset, before ForgetBox: %d, want 429 (the box remembered)", got[0])
	}
	mws[0].ForgetBox(key)
	clock.Advance(time.Second - time.Microsecond)
	if w := do(mws[1].Handler(okHandler()), a); w.Code != 429 || decodeProblem(t, w.Body.String()).Type != httplimit.ProblemPenalty {
		t.Fatalf("just under a second after the release, on the other instance: %d %s, want the box's 429 (remembered)", w.Code, w.Body.String())
	}
	if got := statuses(mws[0], a); got[0] != 200 {
		t.Fatalf("after the release, on the instance it went through: %d, want 200 at once", got[0])
	}
	clock.Advance(time.Microsecond)
	if w := do(mws[1].Handler(okHandler()), a); w.Code != 429 || decodeProblem(t, w.Body.String()).Type != httplimit.ProblemQuotaExceeded {
		t.Fatalf("a second after the release, on the other instance: %d %s, want a refusal by the quota it spent", w.Code, w.Body.String())
	}
}
