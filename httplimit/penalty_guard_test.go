package httplimit_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/internal/redistest"
	"github.com/sluice-dev/sluice/memory"
	"github.com/sluice-dev/sluice/redis"
)

// A request of a client the box does not hold costs one store call, the
// box decided in it with the request's limits; so does a refused one that
// does not box its client, beside the call that counts the refusal. The
// requests come at one instant (the fake clock stands still): what each
// admitted one spends of the box's guard refuses none of the next.
func TestAClientNotBoxedCostsOneStoreCallPerRequest(t *testing.T) {
	o := boxedAfterOneRefusal
	o.Plans = []*httplimit.Plan{{Name: "free", Limits: []sluice.Limit{sluice.FixedWindow(3, time.Minute)}}}
	o.Penalty.Refusals = 2
	mws, _, counted, _ := countedMiddlewares(t, 1, o)
	h := mws[0].Handler(okHandler())
	a := req{remote: "192.0.2.1:1"}
	for i, want := range []struct{ code, calls int }{{200, 1}, {200, 1}, {200, 1}, {429, 2}} {
		before := counted.calls.Load()
		if w := do(h, a); w.Code != want.code {
			t.Fatalf("request %d: %d, want %d", i, w.Code, want.code)
		}
		if got := counted.calls.Load() - before; got != int64(want.calls) {
			t.Errorf("request %d (%d) made %d store calls, want %d", i, want.code, got, want.calls)
		}
	}
}

// storeKinds are the stores a box shared by instances is tested on.
var storeKinds = []string{"memory", "redis"}

// sharedMiddlewares returns two middlewares configured by o, as two
// instances of a service sharing one store of kind (memory, or a real
// Redis), with their fake clock.
func sharedMiddlewares(t *testing.T, kind string, o httplimit.Options) ([2]*httplimit.Middleware, *fakeClock) {
	t.Helper()
	clock := clockAt(time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC))
	var store sluice.Store
	switch kind {
	case "memory":
		mem := memory.New(memory.WithClock(clock.Now), memory.WithSweepInterval(0))
		t.Cleanup(func() { mem.Close() })
		store = mem
	case "redis":
		rs := redis.New(redistest.Standalone(t).Client(t), redis.WithTimeout(10*time.Second), redis.WithTimeForTesting(clock.Now))
		t.Cleanup(func() { rs.Close() })
		store = rs
	}
	o.Clock, o.Scope = clock.Now, "api"
	o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	var mws [2]*httplimit.Middleware
	for i := range mws {
		mw, err := httplimit.New(sluice.NewLimiter(store), o)
		if err != nil {
			t.Fatal(err)
		}
		mws[i] = mw
	}
	return mws, clock
}

// used returns what subject has used of each of its limits, by name, as
// Inspect reads it (spending nothing).
func used(t *testing.T, mw *httplimit.Middleware, subject string) map[string]int64 {
	t.Helper()
	states, err := mw.Inspect(context.Background(), subject, "")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for _, s := range states {
		out[s.Name] = s.Used
	}
	return out
}

// A client boxed through another instance, which this one knows nothing
// of, is refused by the box with the time left, spending nothing of its
// limits (a window, a bucket, a concurrency limit): the box is decided in
// the request's own call, all or nothing. It is admitted when the box
// lifts, to the microsecond, and not before.
func TestAClientBoxedElsewhereSpendsNothing(t *testing.T) {
	for _, kind := range storeKinds {
		t.Run(kind, func(t *testing.T) {
			o := boxedAfterOneRefusal
			o.Plans = []*httplimit.Plan{{Name: "free", Limits: []sluice.Limit{
				sluice.FixedWindow(5, 24*time.Hour), sluice.GCRA(5, 24*time.Hour).Named("burst"),
				sluice.Concurrency(5, time.Minute)}}}
			mws, clock := sharedMiddlewares(t, kind, o)
			a, subject := req{remote: "192.0.2.1:1"}, "ip:192.0.2.1"
			if got := statuses(mws[1], a); got[0] != 200 {
				t.Fatalf("before the box: %d, want 200", got[0])
			}
			if left, err := mws[0].Penalize(context.Background(), subject); err != nil || left != 10*time.Minute {
				t.Fatalf("Penalize: %v, %v; want 10m", left, err)
			}
			before := used(t, mws[1], subject)
			for _, tc := range []struct {
				after time.Duration
				retry string
			}{{0, "600"}, {time.Second, "599"}, {10*time.Minute - time.Second - time.Microsecond, "1"}} {
				clock.Advance(tc.after)
				w := do(mws[1].Handler(okHandler()), a)
				if p := decodeProblem(t, w.Body.String()); w.Code != 429 || p.Type != httplimit.ProblemPenalty || w.Header().Get("Retry-After") != tc.retry {
					t.Fatalf("boxed, %v on: %d Retry-After %q %s, want the box's 429 with Retry-After %s",
						tc.after, w.Code, w.Header().Get("Retry-After"), w.Body.String(), tc.retry)
				}
				if w.Header().Get("RateLimit") != "" {
					t.Errorf("a refusal by the box carries RateLimit %q", w.Header().Get("RateLimit"))
				}
			}
			after := used(t, mws[1], subject)
			if !maps.Equal(before, after) || before["penalty"] != 1 || before["per-day"] != 1 {
				t.Errorf("used before the boxed requests %v, after %v: want them equal, the box's 1 and the first request's", before, after)
			}
			clock.Advance(time.Microsecond)
			if got := statuses(mws[1], a); got[0] != 200 {
				t.Errorf("when the box lifts: %d, want 200", got[0])
			}
		})
	}
}

// headerModes are the configured header modes of the comparisons below:
// IETF's list of every limit, and the drafts' figures of one.
var headerModes = [][]string{
	{httplimit.ModeIETF, httplimit.ModeDraft6, httplimit.ModeLegacy},
	{httplimit.ModeDraft7},
}

// The box shows in no header, body or observation of an admitted request:
// a middleware with a penalty box answers the same headers, and tells its
// Observer of the same checks and deciding limit, as one without, for
// plans whose limits hold more than the box's guard could (which a
// deciding limit picked among every check would then be) and plans of
// shadow limits alone.
func TestABoxShowsNowhereInAnAdmittedRequest(t *testing.T) {
	plans := map[string][]sluice.Limit{
		"plain": {sluice.FixedWindow(5, time.Minute), sluice.GCRA(100, time.Second).Named("burst")},
		"huge":  {sluice.FixedWindow(sluice.MaxQuantity, time.Hour)},
		"shadow": {sluice.FixedWindow(5, time.Minute).WithShadow(true),
			sluice.SlidingLog(3, time.Second).WithShadow(true).Named("per-3s")},
	}
	for _, modes := range headerModes {
		for name, limits := range plans {
			t.Run(name+"/"+modes[0], func(t *testing.T) {
				type seen struct {
					limit  string
					checks int
				}
				var h [2]http.Handler
				var observed [2][]seen
				clock := clockAt(time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC))
				for i, p := range []httplimit.Penalty{{}, boxedAfterOneRefusal.Penalty} {
					store := memory.New(memory.WithClock(clock.Now), memory.WithSweepInterval(0))
					t.Cleanup(func() { store.Close() })
					mw, err := httplimit.New(sluice.NewLimiter(store), httplimit.Options{
						Plans: []*httplimit.Plan{{Name: "free", Limits: limits}}, Penalty: p, Headers: modes, Clock: clock.Now,
						Observer: func(res *httplimit.Result, _ time.Duration, _ error) {
							observed[i] = append(observed[i], seen{res.Decision.Limit.Name(), len(res.Decision.Statuses)})
						},
						Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
					})
					if err != nil {
						t.Fatal(err)
					}
					h[i] = mw.Handler(okHandler())
				}
				a := req{remote: "192.0.2.1:1"}
				for n := range 4 {
					without, with := do(h[0], a), do(h[1], a)
					if with.Code != 200 || without.Code != 200 {
						t.Fatalf("request %d: %d without a box, %d with one; want 200", n, without.Code, with.Code)
					}
					if !maps.EqualFunc(with.Header(), without.Header(), slices.Equal) {
						t.Errorf("request %d: headers with a box\n%v\nwithout\n%v", n, with.Header(), without.Header())
					}
					clock.Advance(time.Millisecond)
				}
				if !slices.Equal(observed[0], observed[1]) {
					t.Errorf("observed with a box %v, without %v", observed[1], observed[0])
				}
			})
		}
	}
}

// The box's guard is checked with a request's limits, in the same call:
// a plan whose limits with the global ones fill a call leaves it no room,
// and is refused with a penalty box, not at its first request.
func TestAPenaltyBoxNeedsRoomInTheCall(t *testing.T) {
	limits := func(n int) []sluice.Limit {
		var out []sluice.Limit
		for i := range n {
			out = append(out, sluice.FixedWindow(int64(i+1), time.Hour).Named("l"+strconv.Itoa(i)))
		}
		return out
	}
	o := httplimit.Options{
		Plans:   []*httplimit.Plan{{Name: "free", Limits: limits(sluice.MaxChecks - 1)}},
		Global:  []sluice.Limit{sluice.FixedWindow(100, time.Hour).Named("service")},
		Penalty: boxedAfterOneRefusal.Penalty,
	}
	var fe *httplimit.FieldError
	err := o.Validate()
	if !errors.As(err, &fe) || fe.Field != "Penalty" ||
		fe.Err.Error() != "plan free: 64 limits with the global ones and those of every rule that may apply to it, at most 63 with a penalty box, whose guard is checked with them" {
		t.Errorf("64 limits with a box: %v, want a Penalty error", err)
	}
	o.Global = nil
	if err := o.Validate(); err != nil {
		t.Fatalf("63 limits with a box: %v", err)
	}
	mws, _, _, _ := countedMiddlewares(t, 1, o)
	if got := statuses(mws[0], req{remote: "192.0.2.1:1"}); got[0] != 200 {
		t.Errorf("a request checked against 63 limits and the box: %d, want 200", got[0])
	}
}

// A client boxed through another instance reads its box as its standing:
// the peek of its limits finds the box in the same call, and spends
// nothing of either.
func TestTheStandingOfAClientBoxedElsewhereIsItsBox(t *testing.T) {
	for _, kind := range storeKinds {
		t.Run(kind, func(t *testing.T) {
			mws, clock := sharedMiddlewares(t, kind, boxedAfterOneRefusal)
			a, subject := req{remote: "192.0.2.1:1"}, "ip:192.0.2.1"
			if _, err := mws[0].Penalize(context.Background(), subject); err != nil {
				t.Fatal(err)
			}
			clock.Advance(time.Minute)
			st, _ := standing(t, mws[1].StatusHandler(), a)
			if st.Penalty == nil || st.Penalty.RetryAfter != 540 || len(st.Limits) != 0 {
				t.Fatalf("standing: %+v (penalty %+v), want the box's, 540 s left", st, st.Penalty)
			}
			if u := used(t, mws[1], subject); u["penalty"] != 1 || u["per-minute"] != 0 {
				t.Errorf("used after the standing: %v, want the box's 1 and nothing of per-minute", u)
			}
		})
	}
}

// A box holds its client for exactly For, from a microsecond to
// sluice.MaxWindow, on both stores: refused to the last microsecond with
// the time left, admitted at the end.
func TestABoxOfAnyLengthHoldsExactly(t *testing.T) {
	for _, kind := range storeKinds {
		for _, d := range []time.Duration{time.Microsecond, time.Second + time.Microsecond, sluice.MaxWindow} {
			t.Run(kind+"/"+d.String(), func(t *testing.T) {
				o := boxedAfterOneRefusal
				o.Penalty.For = d
				mws, clock := sharedMiddlewares(t, kind, o)
				a := req{remote: "192.0.2.1:1"}
				if left, err := mws[0].Penalize(context.Background(), "ip:192.0.2.1"); err != nil || left != d {
					t.Fatalf("Penalize: %v, %v; want %v", left, err, d)
				}
				clock.Advance(d - time.Microsecond)
				w := do(mws[1].Handler(okHandler()), a)
				if p := decodeProblem(t, w.Body.String()); w.Code != 429 || p.Type != httplimit.ProblemPenalty || w.Header().Get("Retry-After") != "1" {
					t.Fatalf("1µs before the end: %d Retry-After %q %s, want the box's 429, Retry-After 1", w.Code, w.Header().Get("Retry-After"), w.Body.String())
				}
				clock.Advance(time.Microsecond)
				if got := statuses(mws[1], a); got[0] != 200 {
					t.Errorf("at the end: %d, want 200", got[0])
				}
			})
		}
	}
}
