package client

import (
	"net/http"
	"testing"
	"time"
)

// A server need not send the RateLimit fields on every response, nor ever
// again (the draft: a client MUST NOT assume that future responses carry
// them; a server may send them only when a quota is close to exhaustion).
// Once the quota the fields last stated has reset, the probe's answer
// without them says that no quota binds: the host is open again, as one
// that never sent them. Before, every later request went as a probe, one
// at a time, for good.
func TestAHostThatStopsSendingTheFieldsIsOpenAfterTheReset(t *testing.T) {
	h := newHostState(true, 0)
	h.finish(mustGrant(t, h, t0, "probe"), ok200(t0, 1, time.Second)) // ceiling 2
	silent := func(at time.Time) response { return response{arrived: true, at: at, status: http.StatusOK} }
	h.finish(mustGrant(t, h, t0, "second"), silent(t0))
	mustWait(t, h, t0, t0.Add(time.Second), "third, the quota stated spent")
	at := t0.Add(time.Second)
	probe := mustGrant(t, h, at, "the probe after the reset")
	if !probe.probe {
		t.Fatal("the first request after the reset is not a probe")
	}
	h.finish(probe, silent(at))
	for i := range 5 {
		if _, ok, wake := h.try(1, at); !ok {
			t.Fatalf("request %d after the probe's answer without the fields: held (wake %v); want the host open", i+1, wake)
		}
	}
	// When the fields come back, they bound the host again.
	tk := mustGrant(t, h, at, "an answer with the fields")
	h.finish(tk, ok200(at, 0, time.Minute))
	mustWait(t, h, at, at.Add(time.Minute), "once the fields state the quota spent again")
}
