package client

import (
	"net/http"
	"testing"
	"time"
)

// answerOf is an admitted answer stating each of policies.
func answerOf(at time.Time, policies ...quota) response {
	r := response{arrived: true, at: at, status: 200}
	for _, q := range policies {
		q.Format, q.Unit = FormatIETF, UnitRequests
		r.rl, r.hasRL = binding(r.rl, r.hasRL, q.RateLimit), true
		r.quotas = append(r.quotas, q)
	}
	return r
}

func policyLeft(name string, r int64, reset time.Duration) quota {
	return quota{RateLimit: RateLimit{Policy: name, Remaining: r, Reset: reset}}
}

func TestAProbeWaitsUntilEveryPolicyCanTakeItsCost(t *testing.T) {
	h := newHostState(true, 0)
	probe := mustGrant(t, h, t0, "probe")
	// The per-second quota is spent, the per-minute one has 1 left: a
	// request of cost 2 fits neither before the per-minute reset.
	h.finish(probe, answerOf(t0, policyLeft("per-second", 0, time.Second), policyLeft("per-minute", 1, time.Minute)))
	if _, ok, _ := h.try(2, t0.Add(2*time.Second)); ok {
		t.Fatal("a request of cost 2 went after the per-second reset, though the per-minute policy had 1 left")
	}
	if _, ok, wake := h.try(1, t0.Add(2*time.Second)); !ok {
		t.Fatalf("a request of cost 1 waits until %v, though every policy can take it after the per-second reset", wake)
	}
	h = newHostState(true, 0)
	h.finish(mustGrant(t, h, t0, "probe"), answerOf(t0, policyLeft("per-second", 0, time.Second), policyLeft("per-minute", 1, time.Minute)))
	if _, ok, wake := h.try(2, t0.Add(2*time.Second)); ok || !wake.Equal(t0.Add(time.Minute)) {
		t.Fatalf("granted %v, wake %v; want a wait until the per-minute reset, %v", ok, wake, t0.Add(time.Minute))
	}
	if _, ok, wake := h.try(2, t0.Add(time.Minute)); !ok {
		t.Fatalf("not granted at the per-minute reset (wake %v)", wake)
	}
}

func TestARefusalsProbeWaitsUntilEveryPolicyCanTakeItsCost(t *testing.T) {
	h := newHostState(true, 0)
	h.finish(mustGrant(t, h, t0, "probe"), answerOf(t0, policyLeft("per-second", 5, time.Second), policyLeft("per-minute", 5, time.Minute)))
	tk, ok, _ := h.try(2, t0)
	if !ok {
		t.Fatal("a request of cost 2 within both policies was not granted")
	}
	refusal := answerOf(t0, policyLeft("per-second", 0, time.Second), policyLeft("per-minute", 1, time.Minute))
	refusal.status = 429
	h.finish(tk, refusal)
	if _, ok, wake := h.try(2, t0.Add(2*time.Second)); ok || !wake.Equal(t0.Add(time.Minute)) {
		t.Fatalf("after the refusal: granted %v, wake %v; want a wait until the per-minute reset", ok, wake)
	}
}

func TestAPolicyAnAnswerOmitsStillCountsWhatWasSentUntilItsReset(t *testing.T) {
	h := newHostState(true, 0)
	h.finish(mustGrant(t, h, t0, "probe"), answerOf(t0, policyLeft("per-second", 9, time.Second), policyLeft("per-minute", 2, time.Minute)))
	first := mustGrant(t, h, t0, "first of the per-minute's 2")
	mustGrant(t, h, t0, "second of the per-minute's 2")
	// The next answer states the per-second policy alone.
	h.finish(first, answerOf(t0, policyLeft("per-second", 8, time.Second)))
	mustWait(t, h, t0, t0.Add(time.Minute), "a third, past the per-minute quota the answer omitted")
	mustGrant(t, h, t0.Add(time.Minute), "a third at the per-minute reset")
}

func TestAnAnswerThatOmitsAPolicyRaisesNoBoundOfIt(t *testing.T) {
	h := newHostState(true, 0)
	h.finish(mustGrant(t, h, t0, "probe"), answerOf(t0, policyLeft("per-second", 100, time.Second), policyLeft("per-minute", 2, time.Minute)))
	first := mustGrant(t, h, t0, "first of the per-minute's 2")
	second := mustGrant(t, h, t0, "second of the per-minute's 2")
	// The first's answer omits the per-minute policy: its bound, 1 + 1 +
	// 99, is the highest kept. The second's states it spent.
	h.finish(first, answerOf(t0, policyLeft("per-second", 99, time.Second)))
	h.finish(second, answerOf(t0, policyLeft("per-second", 98, time.Second), policyLeft("per-minute", 0, time.Minute)))
	mustWait(t, h, t0, t0.Add(time.Minute), "a third, past the per-minute quota")
}

// answerNaming is an admitted answer whose RateLimit-Policy states policy
// (q per w, a sliding window) and another, "per-second", 10 a second,
// and whose RateLimit names the one of them in named.
func answerNaming(at time.Time, policy, named string) response {
	hdr := http.Header{}
	hdr.Set("RateLimit-Policy", policy+`, "per-second";q=10;w=1`)
	hdr.Set("RateLimit", named)
	r := readResponse(hdr, at)
	r.status = http.StatusOK
	return r
}

// The reset of a policy (t) is when more of its quota is made available,
// not necessarily all of it: a sliding window gives back one unit at a
// time, w after each was counted. A policy that answers omit after its
// reset is then known only by what was sent under it, so the client keeps
// to q units in any span of w of its own sends, which a sliding window
// of q per w admits whatever it did with the units before.
func TestAPolicyOmittedAfterItsResetIsKeptToQPerWOfWhatWasSent(t *testing.T) {
	const tenS = `"per-10s";q=3;w=10`
	h := newHostState(true, 0)
	h.finish(mustGrant(t, h, t0, "probe"), answerNaming(t0, tenS, `"per-10s";r=2;t=10`))
	h.finish(mustGrant(t, h, t0.Add(time.Second), "second"), answerNaming(t0.Add(time.Second), tenS, `"per-10s";r=1;t=9`))
	at2 := t0.Add(2 * time.Second)
	h.finish(mustGrant(t, h, at2, "third"), answerNaming(at2, tenS, `"per-10s";r=0;t=8`))
	// At 10 s the unit counted at 0 s leaves the window: one is back.
	at10 := t0.Add(10 * time.Second)
	if _, ok, _ := h.try(1, at2); ok {
		t.Fatal("a fourth went with the quota spent")
	}
	h.finish(mustGrant(t, h, at10, "a probe at the reset"), answerNaming(at10, tenS, `"per-second";r=9;t=1`))
	if _, ok, wake := h.try(1, at10); ok || wake.Before(t0.Add(11*time.Second)) {
		t.Fatalf("after an answer that omits the policy: granted %v, wake %v; want a wait until the unit sent at 1 s has left the window, at 11 s", ok, wake)
	}
}

// A bucket of q per w is whole again within w: a reset beyond w (a server
// that keeps a refused client out for a while) says that the quota does
// not come back at q/w, and nothing goes before it.
func TestAResetBeyondThePolicysWindowHoldsUntilIt(t *testing.T) {
	h := newHostState(true, 0)
	hdr := http.Header{}
	hdr.Set("RateLimit-Policy", `"per-second";q=10;w=1`)
	hdr.Set("RateLimit", `"per-second";r=0;t=30`)
	h.finish(mustGrant(t, h, t0, "probe"), readResponse(hdr, t0))
	mustWait(t, h, t0.Add(500*time.Millisecond), t0.Add(30*time.Second), "a request half a second later")

	// Nor does what the client sent in the policy's window admit a request
	// before such a reset, when later answers omit the policy.
	h = newHostState(true, 0)
	two := func(at time.Time, named string) response {
		hdr := http.Header{}
		hdr.Set("RateLimit-Policy", `"per-second";q=10;w=1, "per-hour";q=1000;w=3600`)
		hdr.Set("RateLimit", named)
		r := readResponse(hdr, at)
		r.status = http.StatusOK
		return r
	}
	h.finish(mustGrant(t, h, t0, "probe"), two(t0, `"per-hour";r=999;t=3600`))
	at2 := t0.Add(2 * time.Second)
	a, b := mustGrant(t, h, at2, "a"), mustGrant(t, h, at2, "b")
	mustGrant(t, h, at2, "c")
	h.finish(a, two(at2, `"per-second";r=0;t=30`))
	h.finish(b, two(at2, `"per-hour";r=997;t=3600`))
	mustWait(t, h, t0.Add(4*time.Second), at2.Add(30*time.Second), "a request after the policy's window, before its reset")
}
