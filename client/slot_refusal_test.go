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
// keeps what the host knows of the slots: its own requests that have not
// ended hold theirs, whatever the wait the refusal asks for. The probe
// after that wait goes only once one of them has ended, not into the
// server's next refusal while bodies still stream.
func TestARefusalForASlotHoldsTheProbeUntilARequestEnds(t *testing.T) {
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
	later := t0.Add(10 * time.Second)
	if _, ok, _ := h.try(1, later); ok {
		t.Fatal("a probe after the refusal's wait while the host's two requests held their slots: sent; want it held until one ends")
	}
	h.end(a)
	if tk := mustGrant(t, h, later, "a probe once a request has ended"); !tk.probe {
		t.Error("the request after the refusal is not a probe")
	}
}
