package client

import (
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
