package client

import (
	"net/http"
	"testing"
	"time"
)

// A concurrency answer proves the client's own only the slots it says
// are free (and the request's own): a request answered before another was
// sent may have given its slot back before the server decided the other
// (its body's last bytes still on the way), and that slot is counted free
// in the other's answer already. Here other clients hold two slots of
// three; the first's answer says one is free, and so does the second's,
// sent while the first's body is still being read: the first's slot, free
// at the server, is the one counted. Counting the first as holding a
// slot too would let a third go now, and a fourth once the first ends,
// into the server's refusal.
func TestASlotGivenBackBeforeADecisionIsNotCountedTwice(t *testing.T) {
	h := newHostState(true, 0)
	probe := mustGrant(t, h, t0, "probe")
	h.finish(probe, inFlight(t0, 3, 0))
	h.end(probe)
	a := mustGrant(t, h, t0, "first")
	h.finish(a, inFlight(t0, 3, 1))
	b := mustGrant(t, h, t0, "second, the first's body still being read")
	h.finish(b, inFlight(t0, 3, 1))
	mustWait(t, h, t0, t0.Add(defaultReset), "third, the first's body still being read")
	h.end(a)
	mustGrant(t, h, t0, "third, once the first has ended")
	mustWait(t, h, t0, t0.Add(defaultReset), "fourth, two not ended of the two slots free")
}

// A 429 for a concurrency quota (its policy stated with no slot left)
// keeps what the host knows of its own slots: its requests that have not
// ended hold theirs, and nothing goes into them before the refusal's wait
// is over. But the refusal may have counted another client's requests,
// whose ends the host cannot see: after the wait one probe goes, while
// the host's own requests still hold their slots, and the rest wait for
// its answer.
func TestARefusalForASlotSendsOneProbeAfterItsWait(t *testing.T) {
	h := newHostState(true, 0)
	probe := mustGrant(t, h, t0, "probe")
	h.finish(probe, inFlight(t0, 3, 2))
	h.end(probe)
	a, b := mustGrant(t, h, t0, "first"), mustGrant(t, h, t0, "second")
	c := mustGrant(t, h, t0, "third")
	h.finish(a, inFlight(t0, 3, 2))
	h.finish(b, inFlight(t0, 3, 1))
	refusal := inFlight(t0, 3, 0) // another client took the third slot
	refusal.status = http.StatusTooManyRequests
	h.finish(c, refusal)
	h.end(c) // the refusal's body, read: it held no slot
	if _, ok, _ := h.try(1, t0.Add(defaultReset/2)); ok {
		t.Fatal("a request within the refusal's wait, the host's two requests holding their slots: sent; want it held")
	}
	later := t0.Add(10 * time.Second)
	if tk := mustGrant(t, h, later, "a probe after the refusal's wait, the host's two requests holding their slots"); !tk.probe {
		t.Error("the request after the refusal is not a probe")
	}
	if _, ok, _ := h.try(1, later); ok {
		t.Error("a second request while the probe is in flight: sent; want it held for the probe's answer")
	}
}

// A 429 for a concurrency quota whose every slot the host's own requests
// hold (the server cut its limit to two, which its two answered requests
// hold) counted none of another client's: the probe after its wait goes
// only once one of them has ended, not into the server's next refusal
// while bodies still stream.
func TestARefusalWhenTheHostHoldsEverySlotHoldsTheProbeUntilARequestEnds(t *testing.T) {
	h := newHostState(true, 0)
	probe := mustGrant(t, h, t0, "probe")
	h.finish(probe, inFlight(t0, 3, 2))
	h.end(probe)
	a, b := mustGrant(t, h, t0, "first"), mustGrant(t, h, t0, "second")
	c := mustGrant(t, h, t0, "third")
	h.finish(a, inFlight(t0, 3, 2))
	h.finish(b, inFlight(t0, 3, 1))
	refusal := inFlight(t0, 2, 0) // the limit cut to two
	refusal.status = http.StatusTooManyRequests
	h.finish(c, refusal)
	h.end(c) // the refusal's body, read: it held no slot
	later := t0.Add(10 * time.Second)
	if _, ok, _ := h.try(1, later); ok {
		t.Fatal("a probe after the refusal's wait while the host's two requests held both slots: sent; want it held until one ends")
	}
	h.end(a)
	mustGrant(t, h, later, "a request once one of the host's has ended")
}
