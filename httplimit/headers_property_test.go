package httplimit_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/dunglas/httpsfv"
	"pgregory.net/rapid"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/memory"
)

// sfPolicy is one policy as a client reads it with an independent parser
// (httpsfv): RateLimit-Policy's q, w and qu, RateLimit's r and t.
type sfPolicy struct {
	q, w, r, t   int64
	hasW, hasT   bool
	qu           string
	seenInLimits bool
}

// readIETF parses the IETF headers of h with httpsfv, in policy order.
func readIETF(t *rapid.T, h http.Header) ([]string, map[string]*sfPolicy) {
	policies, err := httpsfv.UnmarshalList(h.Values("RateLimit-Policy"))
	if err != nil {
		t.Fatalf("RateLimit-Policy %q: %v", h.Values("RateLimit-Policy"), err)
	}
	limits, err := httpsfv.UnmarshalList(h.Values("RateLimit"))
	if err != nil {
		t.Fatalf("RateLimit %q: %v", h.Values("RateLimit"), err)
	}
	var names []string
	out := map[string]*sfPolicy{}
	for _, m := range policies {
		it := m.(httpsfv.Item)
		name := it.Value.(string)
		p := &sfPolicy{}
		q, ok := it.Params.Get("q")
		if p.q, _ = q.(int64); !ok {
			t.Fatalf("policy %s has no q", name)
		}
		if w, ok := it.Params.Get("w"); ok {
			p.w, p.hasW = w.(int64), true
		}
		if qu, ok := it.Params.Get("qu"); ok {
			p.qu = qu.(string)
		}
		names = append(names, name)
		out[name] = p
	}
	for _, m := range limits {
		it := m.(httpsfv.Item)
		name := it.Value.(string)
		p := out[name]
		if p == nil {
			t.Fatalf("RateLimit names %s, which RateLimit-Policy does not", name)
		}
		r, ok := it.Params.Get("r")
		if p.r, _ = r.(int64); !ok {
			t.Fatalf("RateLimit %s has no r", name)
		}
		if v, ok := it.Params.Get("t"); ok {
			p.t, p.hasT = v.(int64), true
		}
		p.seenInLimits = true
	}
	return names, out
}

// drawLimit draws a limit of any algorithm, with windows that are and are
// not whole seconds, bursts above and below the rate, and short queues.
func drawLimit(t *rapid.T, name string) sluice.Limit {
	alg := rapid.SampledFrom(append(sluice.Algorithms(), sluice.AlgorithmConcurrency)).Draw(t, name+" algorithm")
	q := rapid.Int64Range(1, 12).Draw(t, name+" quantity")
	w := rapid.SampledFrom([]time.Duration{300 * time.Millisecond, time.Second, 1500 * time.Millisecond, 3 * time.Second,
		time.Minute, 90 * time.Second, time.Hour, 24 * time.Hour}).Draw(t, name+" window")
	l := sluice.NewLimit(alg, q, w).Named(name)
	if alg == sluice.AlgorithmTokenBucket || alg == sluice.AlgorithmGCRA || alg == sluice.AlgorithmLeakyBucket {
		if rapid.Bool().Draw(t, name+" burst?") {
			l = l.WithBurst(rapid.Int64Range(1, 3*q).Draw(t, name+" burst"))
		}
	}
	if alg == sluice.AlgorithmLeakyBucket && rapid.Bool().Draw(t, name+" queue?") {
		// The middleware really waits a queue's delay: keep it short.
		l = l.WithMaxWait(time.Duration(rapid.Int64Range(1, 20).Draw(t, name+" max wait")) * time.Millisecond)
	}
	return l
}

// Over random plans (any algorithm, global limits, costs 0 to 5 within
// what every limit holds) and
// random sequences of requests and waits, every response of the real
// middleware says, as httpsfv reads it: r ≤ q and t ≤ w for every policy;
// draft-6, draft-7 and X-RateLimit-* the figures of one of those policies;
// a 429 a Retry-After (whole seconds, ≥ 1) no earlier than the t of any
// violated policy, and a body whose figures are its headers'; and a client
// that sleeps exactly Retry-After and sends the same request is admitted;
// with a retry jitter or without.
func TestPropertyHeadersHoldTheDraftsMeaning(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		var limits []sluice.Limit
		for i := range rapid.IntRange(1, 3).Draw(rt, "limits") {
			limits = append(limits, drawLimit(rt, fmt.Sprintf("l%d", i)))
		}
		var global []sluice.Limit
		if rapid.Bool().Draw(rt, "global?") {
			global = append(global, drawLimit(rt, "g"))
		}
		capacity := int64(5) // New refuses a cost that no limit can hold
		for _, l := range append(slices.Clone(limits), global...) {
			capacity = min(capacity, l.Burst())
		}
		costs := map[string]int64{
			"GET /a": rapid.Int64Range(0, capacity).Draw(rt, "cost a"),
			"GET /b": rapid.Int64Range(1, capacity).Draw(rt, "cost b"),
		}
		// A retry jitter moves a refused client's figures later, the same
		// for both middlewares (a hash of the client and the moment): every
		// property below holds with it.
		jitter := rapid.SampledFrom([]time.Duration{0, 0, 30 * time.Second, time.Hour}).Draw(rt, "retry jitter")
		start := noon.Add(time.Duration(rapid.Int64Range(0, int64(24*time.Hour)).Draw(rt, "start")))
		clock := clockAt(start.Truncate(time.Duration(rapid.SampledFrom([]int64{1, 1e3, 1e9}).Draw(rt, "start grain"))))
		build := func(modes ...string) http.Handler {
			mw, err := httplimit.New(sluice.NewLimiter(memory.New(memory.WithClock(clock.Now), memory.WithSweepInterval(0))),
				httplimit.Options{
					Plans:       []*httplimit.Plan{{Name: "p", Limits: limits, Costs: costs}},
					Global:      global,
					Headers:     modes,
					Clock:       clock.Now,
					Logger:      quietLogger(),
					RetryJitter: jitter,
				})
			if err != nil {
				rt.Fatal(err)
			}
			return mw.Handler(okHandler())
		}
		// Two middlewares over two stores see the same requests at the same
		// times, so decide the same: one speaks ietf, draft-6 and legacy,
		// the other draft-7 (which shares the RateLimit field with ietf).
		many, draft7 := build(httplimit.ModeIETF, httplimit.ModeDraft6, httplimit.ModeLegacy), build(httplimit.ModeDraft7)
		send := func(path string) (*httptest.ResponseRecorder, *httptest.ResponseRecorder) {
			a, b := do(many, req{path: path}), do(draft7, req{path: path})
			if a.Code != b.Code {
				rt.Fatalf("%s: %d with ietf headers, %d with draft-7", path, a.Code, b.Code)
			}
			checkResponse(rt, clock.Now(), a, b)
			return a, b
		}
		for range rapid.IntRange(1, 40).Draw(rt, "steps") {
			if rapid.IntRange(0, 2).Draw(rt, "wait?") == 0 {
				if rapid.Bool().Draw(rt, "whole wait?") {
					clock.Advance(rapid.SampledFrom([]time.Duration{time.Second, 30 * time.Second, time.Minute, time.Hour, 24 * time.Hour}).Draw(rt, "wait"))
				} else {
					clock.Advance(time.Duration(rapid.Int64Range(0, 2e6).Draw(rt, "wait µs")) * time.Microsecond)
				}
				continue
			}
			path := rapid.SampledFrom([]string{"/a", "/b", "/c"}).Draw(rt, "path")
			a, _ := send(path)
			ra := a.Header().Get("Retry-After")
			if a.Code != http.StatusTooManyRequests || ra == "" || !rapid.Bool().Draw(rt, "sleep Retry-After?") {
				continue
			}
			s, _ := strconv.ParseInt(ra, 10, 64)
			clock.Advance(time.Duration(s) * time.Second)
			if a, _ := send(path); a.Code != http.StatusOK {
				rt.Fatalf("%s refused again after sleeping Retry-After %d s: %d %s", path, s, a.Code, a.Body)
			}
		}
	})
}

// checkResponse asserts what TestPropertyHeadersHoldTheDraftsMeaning says
// of one response in every mode: a from the ietf, draft-6 and legacy
// middleware, b from the draft-7 one, both answered at now.
func checkResponse(t *rapid.T, now time.Time, a, b *httptest.ResponseRecorder) {
	names, pol := readIETF(t, a.Header())
	minR := int64(-1)
	for _, name := range names {
		p := pol[name]
		switch {
		case !p.seenInLimits:
			t.Fatalf("%s: in RateLimit-Policy, not in RateLimit", name)
		case p.r < 0 || p.r > p.q:
			t.Fatalf("%s: r=%d outside [0, q=%d]", name, p.r, p.q)
		case p.hasW != p.hasT || !p.hasW && p.qu != "concurrent-requests":
			t.Fatalf("%s: w %v, t %v, qu %q: a window and a reset go together, and only concurrency has neither", name, p.hasW, p.hasT, p.qu)
		case p.hasW && (p.w < 1 || p.t < 0 || p.t > p.w):
			t.Fatalf("%s: t=%d, w=%d: want 0 ≤ t ≤ w, w ≥ 1", name, p.t, p.w)
		}
		if minR < 0 || p.r < minR {
			minR = p.r
		}
	}

	// draft-6 and legacy: the deciding policy's q, r and t, the same in
	// draft-7.
	limit, remaining, reset := intHeader(t, a, "RateLimit-Limit"), intHeader(t, a, "RateLimit-Remaining"), intHeader(t, a, "RateLimit-Reset")
	// X-RateLimit-Reset is the exact time more is available, rounded up:
	// t is that wait rounded up, so the two round to the same second or
	// the reset to the one before.
	latest := ceilTime(now.Add(time.Duration(reset) * time.Second)).Unix()
	earliest := max(ceilTime(now).Unix(), latest-1)
	if intHeader(t, a, "X-RateLimit-Limit") != limit || intHeader(t, a, "X-RateLimit-Remaining") != remaining ||
		intHeader(t, a, "X-RateLimit-Reset") < earliest || intHeader(t, a, "X-RateLimit-Reset") > latest {
		t.Fatalf("legacy %v, draft-6 %d %d %d at %v", a.Header(), limit, remaining, reset, now)
	}
	d7, err := httpsfv.UnmarshalDictionary(b.Header().Values("RateLimit"))
	if err != nil {
		t.Fatalf("draft-7 RateLimit %q: %v", b.Header().Values("RateLimit"), err)
	}
	for key, want := range map[string]int64{"limit": limit, "remaining": remaining, "reset": reset} {
		if m, ok := d7.Get(key); !ok || m.(httpsfv.Item).Value != want {
			t.Fatalf("draft-7 %s = %v, draft-6 says %d", key, m, want)
		}
	}
	d7Policy, err := httpsfv.UnmarshalList(b.Header().Values("RateLimit-Policy"))
	if err != nil || len(d7Policy) != len(names) {
		t.Fatalf("draft-7 RateLimit-Policy %q: %v", b.Header().Values("RateLimit-Policy"), err)
	}
	for i, m := range d7Policy {
		it, p := m.(httpsfv.Item), pol[names[i]]
		w, hasW := it.Params.Get("w")
		if it.Value != p.q || hasW != p.hasW || hasW && w != p.w {
			t.Fatalf("draft-7 policy %d is %v, ietf's %s q=%d w=%d", i, it, names[i], p.q, p.w)
		}
	}
	deciding := func(name string) bool {
		p := pol[name]
		return p != nil && p.q == limit && p.r == remaining && (p.t == reset || !p.hasT)
	}

	if a.Code == http.StatusOK {
		if remaining != minR || !slices.ContainsFunc(names, deciding) {
			t.Fatalf("admitted: draft-6 says %d %d %d, not the policy with the least r (%d) of %v", limit, remaining, reset, minR, a.Header())
		}
		return
	}
	if a.Code != http.StatusTooManyRequests {
		t.Fatalf("status %d %s", a.Code, a.Body)
	}
	var body httplimit.Problem
	if err := json.Unmarshal(a.Body.Bytes(), &body); err != nil {
		t.Fatalf("429 body: %v\n%s", err, a.Body)
	}
	p := pol[body.Policy]
	if p == nil || !deciding(body.Policy) {
		t.Fatalf("body policy %q is not the one draft-6 speaks of (%d %d %d): %s", body.Policy, limit, remaining, reset, a.Body)
	}
	u := body.CurrentUsage
	window := ""
	if p.hasW {
		window = httplimit.FormatWindow(time.Duration(p.w) * time.Second)
	}
	if body.Limit != p.q || u == nil || u.Limit != p.q || u.Used != p.q-p.r || body.Window != window || u.Window != window ||
		u.ResetsAt != time.Unix(intHeader(t, a, "X-RateLimit-Reset"), 0).UTC().Format(time.RFC3339) {
		t.Fatalf("body %s, headers of %s: q=%d r=%d w=%d t=%d", a.Body, body.Policy, p.q, p.r, p.w, p.t)
	}
	ra := a.Header().Get("Retry-After")
	if body.RetryAfter == nil {
		if ra != "" {
			t.Fatalf("Retry-After %q without the body's retryAfter", ra)
		}
		return // the request costs more than a limit can ever hold
	}
	if ra != strconv.FormatInt(*body.RetryAfter, 10) || *body.RetryAfter < 1 {
		t.Fatalf("Retry-After %q, body retryAfter %d", ra, *body.RetryAfter)
	}
	if len(body.ViolatedPolicies) == 0 {
		t.Fatalf("a 429 names no violated policy: %s", a.Body)
	}
	for _, name := range body.ViolatedPolicies {
		if v := pol[name]; v == nil || v.t > *body.RetryAfter {
			t.Fatalf("Retry-After %d is earlier than the violated %s's t (%+v)", *body.RetryAfter, name, v)
		}
	}
}

func intHeader(t *rapid.T, w *httptest.ResponseRecorder, name string) int64 {
	v, err := strconv.ParseInt(w.Header().Get(name), 10, 64)
	if err != nil {
		t.Fatalf("%s %q: %v", name, w.Header().Get(name), err)
	}
	return v
}

// ceilTime rounds t up to whole seconds.
func ceilTime(t time.Time) time.Time {
	if s := t.Truncate(time.Second); s.Before(t) {
		return s.Add(time.Second)
	}
	return t
}
