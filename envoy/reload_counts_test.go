package envoy_test

import (
	"context"
	"testing"
	"time"

	ratelimitv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	typev3 "github.com/envoyproxy/go-control-plane/envoy/type/v3"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/envoy"
)

// reload loads rulesYAML and hands it to the harness's service.
func (h *harness) reload(rulesYAML string) {
	h.t.Helper()
	rules, err := envoy.LoadRules("v2.yaml", []byte(rulesYAML))
	if err != nil {
		h.t.Fatal(err)
	}
	h.svc.SetRules(rules)
}

// A fixed window that a request went over is marked over (a one-unit
// "<key>:over" record), and a peek (hits_addend 0) reads that mark as
// envoyproxy/ratelimit's counter being past the limit only while the
// window has nothing left: after a reload that raises the limit,
// envoyproxy/ratelimit, whose counter holds the 3 hits of this window (2
// before the reload, 1 after), answers a peek under the new limit of 100
// OK, and so does sluice.
func TestRaisedLimitAdmitsPeeksAtAWindowThatWentOver(t *testing.T) {
	h := serve(t, `
domain: d
descriptors:
  - key: client
    rate_limit: {unit: hour, requests_per_unit: 1, name: per-client}
`)
	h.expect(h.ask(request("d", 0, desc("client", "c1"))), ok, status{ok, "per-client:1/HOUR", 0, time.Hour})
	h.expect(h.ask(request("d", 0, desc("client", "c1"))), over, status{over, "per-client:1/HOUR", 0, time.Hour})
	h.reload(`
domain: d
descriptors:
  - key: client
    rate_limit: {unit: hour, requests_per_unit: 100, name: per-client}
`)
	h.clock.Advance(time.Minute)
	h.expect(h.ask(request("d", 0, desc("client", "c1"))), ok, status{ok, "per-client:100/HOUR", 98, 59 * time.Minute})
	h.expect(h.ask(request("d", 0, withHits(desc("client", "c1"), 0))), ok, status{ok, "per-client:100/HOUR", 98, 59 * time.Minute})
	// Spent to the raised limit, the window is over again to a peek: its
	// mark says envoyproxy/ratelimit counted more than sluice did.
	h.expect(h.ask(request("d", 98, desc("client", "c1"))), ok, status{ok, "per-client:100/HOUR", 0, 59 * time.Minute})
	h.expect(h.ask(request("d", 0, withHits(desc("client", "c1"), 0))), over, status{over, "per-client:100/HOUR", 0, 59 * time.Minute})
}

// The same for a block list lifted by a reload: a requests_per_unit 0
// rule records a hit in "<key>:over", the record a fixed window of its
// unit reads as "went over". envoyproxy/ratelimit's counter holds the one
// refused hit, so once the rule allows 100 per hour a peek is OK.
func TestLiftedBlockAdmitsPeeks(t *testing.T) {
	h := serve(t, `
domain: d
descriptors:
  - key: client
    rate_limit: {unit: hour, requests_per_unit: 0, name: per-client}
`)
	h.expect(h.ask(request("d", 0, desc("client", "c1"))), over, status{over, "per-client:0/HOUR", 0, time.Hour})
	h.reload(`
domain: d
descriptors:
  - key: client
    rate_limit: {unit: hour, requests_per_unit: 100, name: per-client}
`)
	h.clock.Advance(time.Minute)
	h.expect(h.ask(request("d", 0, withHits(desc("client", "c1"), 0))), ok, status{ok, "per-client:100/HOUR", 100, 59 * time.Minute})
}

// envoyproxy/ratelimit's counter of a window is named by the domain, the
// descriptor's entries and the window (cache_key.go), not by the rule:
// giving a rule a name (to make it replaceable), renaming it, or a change
// of the name derived from its place, keeps every client's count.
func TestNamingARuleKeepsItsCountsAcrossReload(t *testing.T) {
	h := serve(t, `
domain: d
descriptors:
  - key: client
    rate_limit: {unit: month, requests_per_unit: 3}
`)
	h.ask(request("d", 0, desc("client", "c1")))
	h.reload(`
domain: d
descriptors:
  - key: client
    rate_limit: {unit: month, requests_per_unit: 3, name: per-client}
`)
	h.ask(request("d", 0, desc("client", "c1")))
	h.reload(`
domain: d
descriptors:
  - key: client
    rate_limit: {unit: month, requests_per_unit: 3, name: renamed}
`)
	h.ask(request("d", 0, desc("client", "c1")))
	resp := h.ask(request("d", 0, desc("client", "c1")))
	if resp.OverallCode != over {
		t.Errorf("fourth request of the month, the rule named and renamed between them: %v %+v, want OVER_LIMIT (3 of 3 counted)",
			resp.OverallCode, statusOf(resp.Statuses[0]))
	}
}

// A rule whose unit changes counts in other windows, as
// envoyproxy/ratelimit's counter, named by the window, does: it starts
// afresh. So does a rule of another algorithm (a sluice extension).
func TestARuleOfAnotherUnitOrAlgorithmStartsAfresh(t *testing.T) {
	h := serve(t, `
domain: d
descriptors:
  - key: client
    rate_limit: {unit: hour, requests_per_unit: 1, name: per-client}
`)
	h.expect(h.ask(request("d", 0, desc("client", "c1"))), ok, status{ok, "per-client:1/HOUR", 0, time.Hour})
	h.reload(`
domain: d
descriptors:
  - key: client
    rate_limit: {unit: day, requests_per_unit: 1, name: per-client}
`)
	h.expect(h.ask(request("d", 0, desc("client", "c1"))), ok, status{ok, "per-client:1/DAY", 0, 24 * time.Hour})
	h.reload(`
domain: d
descriptors:
  - key: client
    rate_limit: {unit: day, requests_per_unit: 1, name: per-client, algorithm: sliding-window-log}
`)
	if resp := h.ask(request("d", 0, desc("client", "c1"))); resp.OverallCode != ok {
		t.Errorf("a rule's first request under another algorithm: %v %+v, want OK", resp.OverallCode, statusOf(resp.Statuses[0]))
	}
}

// A limit override counts apart from the rule of its unit, as its own
// limit, even when the rule is named as the override's limit is: the
// state of a rule is named by its unit and algorithm, never by its name.
func TestALimitOverrideCountsApartFromTheRuleOfItsUnit(t *testing.T) {
	h := serve(t, `
domain: d
descriptors:
  - key: client
    rate_limit: {unit: minute, requests_per_unit: 2, name: override-per-minute}
`)
	h.ask(request("d", 0, desc("client", "c1")))
	h.expect(h.ask(request("d", 0, desc("client", "c1"))), ok, status{ok, "override-per-minute:2/MINUTE", 0, time.Minute})
	o := desc("client", "c1")
	o.Limit = &ratelimitv3.RateLimitDescriptor_RateLimitOverride{RequestsPerUnit: 2, Unit: typev3.RateLimitUnit_MINUTE}
	h.expect(h.ask(request("d", 0, o)), ok, status{ok, ":2/MINUTE", 1, time.Minute})
}

// The mirror of a raised limit: a reload that lowers a limit below what a
// window has counted. envoyproxy/ratelimit's counter (5) is then over the
// new limit of 2, and a peek (hits_addend 0) is OVER_LIMIT; so is
// sluice's, which reads the count whole, past the limit, so that a
// request gated by a peek (a cost charged after the response,
// apply_on_stream_done) is refused.
func TestLoweredLimitPeekIsOverAfterReload(t *testing.T) {
	h := serve(t, `
domain: d
descriptors:
  - key: client
    rate_limit: {unit: hour, requests_per_unit: 10, name: per-client}
  - key: other
    rate_limit: {unit: hour, requests_per_unit: 2, name: per-other}
`)
	for range 5 {
		h.ask(request("d", 0, desc("client", "c1")))
	}
	h.ask(request("d", 2, desc("other", "full")))
	h.reload(`
domain: d
descriptors:
  - key: client
    rate_limit: {unit: hour, requests_per_unit: 2, name: per-client}
  - key: other
    rate_limit: {unit: hour, requests_per_unit: 2, name: per-other}
`)
	h.expect(h.ask(request("d", 0, withHits(desc("client", "c1"), 0))), over, status{over, "per-client:2/HOUR", 0, time.Hour})
	// A window merely full, that no reload lowered, is OK to a peek.
	h.expect(h.ask(request("d", 0, withHits(desc("other", "full"), 0))), ok, status{ok, "per-other:2/HOUR", 0, time.Hour})
}

// The documented difference that remains: a window that counted requests
// without going over, under a rule that a reload makes requests_per_unit
// 0, is OK to a peek until a request hits it (envoyproxy/ratelimit's
// counter, 1, is above 0: OVER_LIMIT), as sluice's peek at a block list
// reads only its record of hits; the hit is refused in both.
func TestBlockingAWindowThatCountedLeavesPeeksOKUntilAHit(t *testing.T) {
	h := serve(t, `
domain: d
descriptors:
  - key: client
    rate_limit: {unit: hour, requests_per_unit: 10, name: per-client}
`)
	h.ask(request("d", 0, desc("client", "c1")))
	h.reload(`
domain: d
descriptors:
  - key: client
    rate_limit: {unit: hour, requests_per_unit: 0, name: per-client}
`)
	h.expect(h.ask(request("d", 0, withHits(desc("client", "c1"), 0))), ok, status{ok, "per-client:0/HOUR", 0, time.Hour})
	h.expect(h.ask(request("d", 0, desc("client", "c1"))), over, status{over, "per-client:0/HOUR", 0, time.Hour})
	h.expect(h.ask(request("d", 0, withHits(desc("client", "c1"), 0))), over, status{over, "per-client:0/HOUR", 0, time.Hour})
}

// instanceShare decides every check on its store with one instance's
// share of its limit, as a failover deciding alone does.
type instanceShare struct {
	sluice.Store
	n int64
}

func (s instanceShare) Apply(ctx context.Context, checks []sluice.Check, out []sluice.Status) error {
	shared := make([]sluice.Check, len(checks))
	for i, c := range checks {
		c.Limit = c.Limit.Scale(1, s.n)
		shared[i] = c
	}
	return s.Store.Apply(ctx, shared, out)
}

// A window full at an instance's share of its limit (a failover deciding
// alone) is merely full, not past its limit, to a peek: the share of the
// largest quantity that reads a count past a lowered limit tells nothing
// then.
func TestAPeekAtAWindowFullAtAnInstancesShareIsOK(t *testing.T) {
	h := serve(t, `
domain: d
descriptors:
  - key: client
    rate_limit: {unit: hour, requests_per_unit: 8, name: per-client}
`)
	h.store.Store = instanceShare{h.store.Store, 4}
	h.expect(h.ask(request("d", 2, desc("client", "c1"))), ok, status{ok, "per-client:8/HOUR", 0, time.Hour})
	h.expect(h.ask(request("d", 0, withHits(desc("client", "c1"), 0))), ok, status{ok, "per-client:8/HOUR", 0, time.Hour})
}
