package client

import (
	"context"
	"errors"
	"math"
	"net/http"
	"testing"
	"time"

	"pgregory.net/rapid"
)

var t0 = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func ok200(at time.Time, r int64, reset time.Duration) response {
	return response{arrived: true, at: at, status: 200, rl: RateLimit{Format: FormatIETF, Remaining: r, Reset: reset}, hasRL: true}
}

func mustGrant(t *testing.T, h *hostState, now time.Time, what string) ticket {
	t.Helper()
	tk, ok, wake := h.try(1, now)
	if !ok {
		t.Fatalf("%s: not granted (wake %v)", what, wake)
	}
	return tk
}

func mustWait(t *testing.T, h *hostState, now time.Time, wantWake time.Time, what string) {
	t.Helper()
	if _, ok, wake := h.try(1, now); ok || !wake.Equal(wantWake) {
		t.Fatalf("%s: granted %v, wake %v; want a wait until %v", what, ok, wake, wantWake)
	}
}

func TestFreshHostSendsOneProbeFirst(t *testing.T) {
	h := newHostState(true, 0)
	probe := mustGrant(t, h, t0, "first request")
	if !probe.probe {
		t.Error("the first request is not a probe")
	}
	mustWait(t, h, t0, time.Time{}, "second request while the probe is out")
	h.finish(probe, ok200(t0.Add(time.Millisecond), 2, time.Second))
	// ceiling = 0 + 2 + 1: two more fit, the third waits for the reset.
	a, b := mustGrant(t, h, t0, "second"), mustGrant(t, h, t0, "third")
	mustWait(t, h, t0, t0.Add(time.Millisecond+time.Second), "fourth")
	_, _ = a, b
}

func TestHostWithoutHeadersIsNotLimited(t *testing.T) {
	h := newHostState(true, 0)
	probe := mustGrant(t, h, t0, "probe")
	h.finish(probe, response{arrived: true, at: t0, status: 200})
	for i := range 100 {
		mustGrant(t, h, t0, "request "+string(rune('0'+i%10)))
	}
}

func TestConcurrentResponsesBoundWhatMaySend(t *testing.T) {
	h := newHostState(true, 0)
	h.finish(mustGrant(t, h, t0, "probe"), ok200(t0, 10, time.Second)) // ceiling 11, sent 1
	var out []ticket
	for range 8 {
		out = append(out, mustGrant(t, h, t0, "burst")) // sent 9, all with done 1
	}
	// The first of the eight comes back with r=9: the other seven may not
	// have been counted yet, so only 1 + 9 + 1 = 11 may be sent in all.
	h.finish(out[0], ok200(t0, 9, time.Second))
	if h.ceiling(t0) != 11 {
		t.Fatalf("ceiling %d, want 11", h.ceiling(t0))
	}
	mustGrant(t, h, t0, "10th")
	mustGrant(t, h, t0, "11th")
	mustWait(t, h, t0, t0.Add(time.Second), "12th")
	// A late answer from before (r=9 again, same done) proves nothing new;
	// one that shows the window was reset raises the bound.
	h.finish(out[1], ok200(t0, 9, time.Second))
	if h.ceiling(t0) != 11 {
		t.Fatalf("a stale answer moved the ceiling to %d", h.ceiling(t0))
	}
	h.finish(out[2], ok200(t0.Add(time.Second), 99, time.Second))
	if h.ceiling(t0) != 1+99+1 {
		t.Fatalf("ceiling %d after a reset, want 101", h.ceiling(t0))
	}
}

func TestTooManyRequestsDistrustsTheBoundUntilTheServerSaysSo(t *testing.T) {
	h := newHostState(true, 0)
	h.finish(mustGrant(t, h, t0, "probe"), ok200(t0, 100, 60*time.Second))
	old := mustGrant(t, h, t0, "before the 429")
	refused := mustGrant(t, h, t0, "refused")
	at := t0.Add(10 * time.Millisecond)
	h.finish(refused, response{arrived: true, at: at, status: 429, ra: 2 * time.Second, hasRA: true,
		rl: RateLimit{Remaining: 0, Reset: 3 * time.Second}, hasRL: true})
	mustWait(t, h, at, at.Add(2*time.Second), "during Retry-After")
	// An answer to a request sent before the 429 does not restore trust.
	h.finish(old, ok200(at, 98, time.Second))
	mustWait(t, h, at.Add(time.Second), at.Add(2*time.Second), "after a stale success")
	// Retry-After takes precedence over the reset (3 s): the probe goes
	// when it has passed.
	probe := mustGrant(t, h, at.Add(2*time.Second), "probe after Retry-After")
	if !probe.probe {
		t.Error("the first request after a 429's wait is not a probe")
	}
	mustWait(t, h, at.Add(2*time.Second), time.Time{}, "while the probe is out")
	h.finish(probe, ok200(at.Add(2*time.Second), 5, time.Second))
	mustGrant(t, h, at.Add(2*time.Second), "after the probe's answer")
}

func TestRetryAfterHoldsEvenWithoutLearning(t *testing.T) {
	h := newHostState(false, 0)
	tk := mustGrant(t, h, t0, "first")
	if tk.probe {
		t.Error("a non-learning host probes")
	}
	h.finish(tk, response{arrived: true, at: t0, status: 503, ra: 5 * time.Second, hasRA: true})
	mustWait(t, h, t0.Add(time.Second), t0.Add(5*time.Second), "during a 503's Retry-After")
	h.finish(mustGrant(t, h, t0.Add(5*time.Second), "after it"), ok200(t0.Add(5*time.Second), 0, time.Hour))
	mustGrant(t, h, t0.Add(5*time.Second), "a spent quota does not hold a non-learning host")
}

func TestFailedAttemptsStayCountedAsSent(t *testing.T) {
	h := newHostState(true, 0)
	h.finish(mustGrant(t, h, t0, "probe"), ok200(t0, 2, time.Second)) // ceiling 3
	lost := mustGrant(t, h, t0, "lost")
	h.finish(lost, response{}) // connection reset: the server may have counted it
	mustGrant(t, h, t0, "third")
	mustWait(t, h, t0, t0.Add(time.Second), "fourth")
}

// Failed attempts hold back the window they may have been counted in, not
// every later one: once the quota has reset, the probe settles them and the
// host sends its full quota again.
func TestFailedAttemptsAreSettledByTheNextProbe(t *testing.T) {
	srv := &simServer{q: 5, w: time.Second}
	h := newHostState(true, 0)
	now, failed, refused := t0, 0, 0
	perWindow := map[int64]int64{}
	for now.Before(t0.Add(10 * time.Second)) {
		tk, ok, wake := h.try(1, now)
		if !ok {
			if wake.IsZero() {
				t.Fatalf("nothing in flight and no wake at %v", now)
			}
			now = wake
			continue
		}
		if now.After(t0) && failed < 5 {
			failed++ // the connection broke before the server saw it
			h.finish(tk, response{at: now})
			continue
		}
		status, rl, ra := srv.decide(now)
		h.finish(tk, response{arrived: true, at: now, status: status, rl: rl, hasRL: true, ra: ra, hasRA: ra > 0})
		if status == http.StatusOK {
			perWindow[int64(now.Sub(t0)/time.Second)]++
		} else {
			refused++
		}
		now = now.Add(time.Millisecond)
	}
	if refused > 1 { // a window's one, met when a reset is taken for a refill
		t.Errorf("%d requests refused, want at most 1", refused)
	}
	for w := int64(3); w < 10; w++ {
		if perWindow[w] != srv.q {
			t.Errorf("window %d: %d requests sent, want the quota, %d (every window: %v)", w, perWindow[w], srv.q, perWindow)
		}
	}
}

// simServer is a model of a rate-limited server: a fixed window or GCRA
// that answers with ietf-like values (whole seconds rounded up).
type simServer struct {
	gcra   bool
	q      int64         // quota per window, or GCRA burst
	w      time.Duration // window, or GCRA emission interval × q
	count  int64
	window int64
	tat    time.Time
}

func ceilSec(d time.Duration) time.Duration {
	return time.Duration(math.Ceil(d.Seconds())) * time.Second
}

func (s *simServer) decide(now time.Time) (status int, rl RateLimit, ra time.Duration) {
	if !s.gcra {
		k := int64(now.Sub(t0) / s.w)
		if k != s.window {
			s.window, s.count = k, 0
		}
		end := t0.Add(time.Duration(k+1) * s.w)
		if s.count+1 > s.q {
			return 429, RateLimit{Remaining: 0, Reset: ceilSec(end.Sub(now))}, ceilSec(end.Sub(now))
		}
		s.count++
		return 200, RateLimit{Remaining: s.q - s.count, Reset: ceilSec(end.Sub(now))}, 0
	}
	T := s.w / time.Duration(s.q)
	tat := later(s.tat, now).Add(T)
	if tat.Sub(now) > time.Duration(s.q)*T {
		wait := tat.Sub(now) - time.Duration(s.q)*T
		return 429, RateLimit{Remaining: 0, Reset: ceilSec(s.tat.Sub(now))}, max(time.Second, ceilSec(wait))
	}
	s.tat = tat
	rem := int64((time.Duration(s.q)*T - tat.Sub(now)) / T)
	return 200, RateLimit{Remaining: rem, Reset: ceilSec(tat.Sub(now))}, 0
}

// A host that is the only user of its quota never meets a 429, whatever
// the concurrency, latencies, algorithm and phase; one that starts with a
// spent quota meets one (its probe's) at most; a window meets one more
// (the first request sent on the strength of a rate it does not have); a
// lost answer may cost one more (the next probe's).
func TestLearnedBoundNeverMeetsTooManyRequests(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		srv := &simServer{
			gcra: rapid.Bool().Draw(rt, "gcra"),
			q:    rapid.Int64Range(1, 20).Draw(rt, "quota"),
			w:    time.Duration(rapid.IntRange(1, 3).Draw(rt, "window s")) * time.Second,
		}
		start := t0.Add(time.Duration(rapid.Int64Range(0, int64(time.Second)).Draw(rt, "phase")))
		// rates: the answers state the rate (q/w) at which the quota comes
		// back, which a bucket honours and a window does not.
		rates := rapid.Bool().Draw(rt, "rates stated")
		// A stated rate may understate the true one (whole-second windows
		// do): the host must learn the rest from the answers.
		understated := float64(rapid.SampledFrom([]int{1, 2, 4}).Draw(rt, "rate understated by"))
		spent := rapid.Bool().Draw(rt, "quota spent at start")
		if spent {
			for srv.decideOK(start) {
			}
		}
		workers := rapid.IntRange(1, 8).Draw(rt, "workers")
		maxLatency := time.Duration(rapid.IntRange(0, 200).Draw(rt, "max latency ms")) * time.Millisecond
		// lossEvery: every so many admitted requests, the answer is lost
		// after the server decided (the client sees a failed attempt); the
		// probes settle those.
		lossEvery := 0
		if rapid.Bool().Draw(rt, "answers lost") {
			lossEvery = rapid.IntRange(3, 20).Draw(rt, "one answer lost in")
		}
		admitted, lost := 0, 0
		const total = 60

		h := newHostState(true, 0)
		type req struct {
			tk                 ticket
			decideAt, arriveAt time.Time
			decided            bool
			resp               response
		}
		var pending []*req
		now, started, refused := start, 0, 0
		for started < total || len(pending) > 0 {
			var wake time.Time
			for idle := workers - len(pending); idle > 0 && started < total; idle-- {
				tk, ok, w := h.try(1, now)
				if !ok {
					wake = w
					break
				}
				d1 := time.Duration(rapid.Int64Range(0, int64(maxLatency)).Draw(rt, "to server"))
				d2 := time.Duration(rapid.Int64Range(0, int64(maxLatency)).Draw(rt, "back"))
				pending = append(pending, &req{tk: tk, decideAt: now.Add(d1), arriveAt: now.Add(d1 + d2)})
				started++
			}
			// Next event: a decision, an arrival, or the wake of a waiter.
			next, idx := time.Time{}, -1
			for i, p := range pending {
				at := p.arriveAt
				if !p.decided {
					at = p.decideAt
				}
				if idx < 0 || at.Before(next) {
					next, idx = at, i
				}
			}
			if !wake.IsZero() && (idx < 0 || wake.Before(next)) {
				now = wake
				continue
			}
			if idx < 0 {
				rt.Fatalf("deadlock: nothing in flight and no wake at %v (started %d)", now, started)
			}
			now = next
			p := pending[idx]
			if !p.decided {
				p.decided = true
				status, rl, ra := srv.decide(now)
				if status == 429 {
					refused++
				}
				p.resp = response{arrived: true, status: status, rl: rl, hasRL: true, ra: ra, hasRA: ra > 0}
				if rates {
					p.resp.quotas = []quota{{RateLimit: rl, rate: float64(srv.q) / srv.w.Seconds() / understated}}
				}
				continue
			}
			p.resp.at = now
			if p.resp.status == http.StatusOK {
				admitted++
				if lossEvery > 0 && admitted%lossEvery == 0 {
					p.resp = response{at: now}
					lost++
				}
			}
			h.finish(p.tk, p.resp)
			pending = append(pending[:idx], pending[idx+1:]...)
		}
		// A lost answer may have spent what was left: the next probe may
		// meet a 429 for it.
		want := map[bool]int{false: 0, true: 1}[spent] + lost
		if !srv.gcra {
			// The one request sent on the strength of a rate a window does
			// not have: stated, or inferred from a reset.
			want++
		}
		if refused > want {
			rt.Fatalf("%d requests refused, want at most %d", refused, want)
		}
	})
}

func (s *simServer) decideOK(now time.Time) bool {
	status, _, _ := s.decide(now)
	return status == http.StatusOK
}

// A policy that states a rate too slow to matter (q=1 per 10^10 s) holds
// the host until the quota's reset: the time its refill would take does
// not overflow into "now", which would spin the waiters until the reset.
func TestAnImperceptibleRateWaitsForTheReset(t *testing.T) {
	h := newHostState(true, 0)
	r := ok200(t0, 0, time.Second)
	r.quotas = []quota{{RateLimit: r.rl, rate: 1e-10}}
	h.finish(mustGrant(t, h, t0, "probe"), r)
	now := t0.Add(time.Millisecond)
	mustWait(t, h, now, t0.Add(time.Second), "a request on a spent quota")
	b := bound{base: 1, at: t0, n: 1}
	b.rate[0] = 1e-10
	if at := b.reaches(2, now, 1, 0); !at.IsZero() && !at.After(now) {
		t.Errorf("a refill of 10^10 s is reached at %v, now %v", at, now)
	}
}

// A cost beyond any quota (a Cost function's or a Pacer caller's mistake)
// goes alone, as any cost above the quota does, and does not overflow the
// host's counts into letting every later call through.
func TestAHugeCostDoesNotOverflowTheCounts(t *testing.T) {
	p := NewPacer("api", time.Minute)
	ctx := context.Background()
	s, err := p.Wait(ctx, math.MaxInt64)
	if err != nil {
		t.Fatal(err)
	}
	s.Done(Answer{Header: http.Header{"Ratelimit": {`"a";r=0;t=30`}}})
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	if _, err := p.Wait(ctx, 1); !errors.Is(err, ErrWaitTooLong) {
		t.Errorf("a call on a spent quota (30 s to its reset, 1 s to the deadline): %v, want ErrWaitTooLong", err)
	}
}

// A call whose context has already ended is not granted: it spends none of
// the learned quota (nor the probe of a fresh host).
func TestAnEndedContextIsNotGranted(t *testing.T) {
	p := NewPacer("api", time.Minute)
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := p.Wait(ended, 1); !errors.Is(err, context.Canceled) {
		t.Fatalf("Wait with an ended context: %v, want context.Canceled", err)
	}
	if p.h.sent != 0 || p.h.probing {
		t.Errorf("an ended context's call counted: sent %d, probing %v", p.h.sent, p.h.probing)
	}
}
