package envoy_test

import (
	"math"
	"testing"
	"time"

	ratelimitv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	typev3 "github.com/envoyproxy/go-control-plane/envoy/type/v3"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

const apiRules = `
domain: api
descriptors:
  - key: client
    rate_limit: {name: per-client, unit: minute, requests_per_unit: 5}
`

func TestStatusFieldsAreExact(t *testing.T) {
	h := serve(t, apiRules)
	c := desc("client", "c1")
	h.clock.Advance(20 * time.Second) // 40s left in the minute
	steps := []struct {
		name    string
		hits    uint32
		advance time.Duration
		overall rlsv3.RateLimitResponse_Code
		want    status
	}{
		{"two units", 2, 0, ok, status{ok, "per-client:5/MINUTE", 3, 40 * time.Second}},
		{"three more fill the window", 3, 5 * time.Second, ok, status{ok, "per-client:5/MINUTE", 0, 35 * time.Second}},
		{"one more is refused", 1, time.Second, over, status{over, "per-client:5/MINUTE", 0, 34 * time.Second}},
		// duration_until_reset is envoyproxy/ratelimit's: whole seconds to
		// the window's end, counted from the current Unix second.
		{"more than the limit ever holds is refused", 6, 34*time.Second - time.Microsecond, over,
			status{over, "per-client:5/MINUTE", 0, time.Second}},
		{"the next window starts full", 1, time.Microsecond, ok, status{ok, "per-client:5/MINUTE", 4, time.Minute}},
		// A refused request spends what is left of its window, as
		// envoyproxy/ratelimit counts every hit: a smaller one that would
		// fit is refused too, until the window ends.
		{"a request larger than what is left is refused", 5, 500 * time.Millisecond, over,
			status{over, "per-client:5/MINUTE", 0, time.Minute}},
		{"and spent the rest of the window", 1, time.Second, over, status{over, "per-client:5/MINUTE", 0, 59 * time.Second}},
		{"more than the limit ever holds spends a fresh window", 9, 59 * time.Second, over,
			status{over, "per-client:5/MINUTE", 0, time.Minute}},
		{"so that one unit is refused after it", 1, 0, over, status{over, "per-client:5/MINUTE", 0, time.Minute}},
	}
	for _, s := range steps {
		h.clock.Advance(s.advance)
		resp := h.ask(request("api", s.hits, c))
		if got := statusOf(resp.Statuses[0]); got != s.want || resp.OverallCode != s.overall {
			t.Errorf("%s: %v %+v, want %v %+v", s.name, resp.OverallCode, got, s.overall, s.want)
		}
	}
}

func TestHitsAddendIsTheCost(t *testing.T) {
	cases := []struct {
		name      string
		hits      uint32
		d         *ratelimitv3.RateLimitDescriptor
		remaining uint32
	}{
		{"unset or 0 costs 1", 0, desc("client", "c"), 4},
		{"the request's hits_addend", 3, desc("client", "c"), 2},
		{"the descriptor's hits_addend wins", 3, withHits(desc("client", "c"), 4), 1},
		{"a descriptor's explicit 0 is a peek", 3, withHits(desc("client", "c"), 0), 5},
	}
	for _, c := range cases {
		h := serve(t, apiRules)
		resp := h.ask(request("api", c.hits, c.d))
		if got := resp.Statuses[0].LimitRemaining; got != c.remaining || resp.OverallCode != ok {
			t.Errorf("%s: remaining %d (%v), want %d", c.name, got, resp.OverallCode, c.remaining)
		}
	}
}

func TestOneAllowCallPerRequestAllOrNothing(t *testing.T) {
	h := serve(t, edgeRules)
	ip, login := desc("remote_address", "1.2.3.4"), desc("remote_address", "1.2.3.4", "path", "/login")
	for range 2 {
		h.ask(request("edge", 0, ip, login))
	}
	if h.store.Calls() != 2 || len(h.store.checks[0]) != 2 {
		t.Fatalf("%d store calls, first with %d checks; want 2 calls of 2", h.store.Calls(), len(h.store.checks[0]))
	}
	// login is exhausted: the whole request is refused and per-ip is not
	// charged, unlike envoyproxy/ratelimit, which counts every descriptor.
	for range 3 {
		h.expect(h.ask(request("edge", 0, ip, login)), over,
			status{ok, "per-ip:10/MINUTE", 8, time.Minute}, status{over, "login:2/MINUTE", 0, time.Minute})
	}
	h.expect(h.ask(request("edge", 0, ip)), ok, status{ok, "per-ip:10/MINUTE", 7, time.Minute})
	// The first refused request then records, in one more call of one
	// check, that its fixed window went over (see settle.go); the service
	// remembers it, and the refusals after it cost no more calls.
	if h.store.Calls() != 7 {
		t.Errorf("%d store calls for 6 requests, 3 of them refused; want 7", h.store.Calls())
	}
	if c := h.store.checks[3]; len(c) != 1 || c[0].Key != h.store.checks[2][1].Key+":over" || c[0].Cost != 1 {
		t.Errorf("call 3: %+v, want login's over-limit record", c)
	}
}

// Identical descriptors are one check of their costs added; an admitted
// request reports each as envoyproxy/ratelimit counts them, one after the
// other: what remained after it and the ones before it (a peek, what
// remained before the ones after it).
func TestIdenticalDescriptorsShareOneCheck(t *testing.T) {
	h := serve(t, apiRules)
	c := desc("client", "c")
	h.expect(h.ask(request("api", 2, c, c)), ok,
		status{ok, "per-client:5/MINUTE", 3, time.Minute}, status{ok, "per-client:5/MINUTE", 1, time.Minute})
	if n := len(h.store.checks[0]); n != 1 || h.store.checks[0][0].Cost != 4 {
		t.Errorf("checks %+v, want one of cost 4", h.store.checks[0])
	}
	p := desc("client", "p")
	h.expect(h.ask(request("api", 3, withHits(desc("client", "p"), 0), p)), ok,
		status{ok, "per-client:5/MINUTE", 5, time.Minute}, status{ok, "per-client:5/MINUTE", 2, time.Minute})
}

func TestShadowModeCountsButNeverRefuses(t *testing.T) {
	h := serve(t, `
domain: api
descriptors:
  - key: tenant
    shadow_mode: true
    rate_limit: {name: per-tenant, unit: second, requests_per_unit: 1}
`)
	t1 := desc("tenant", "t1")
	h.expect(h.ask(request("api", 0, t1)), ok, status{ok, "per-tenant:1/SECOND", 0, time.Second})
	// Over the limit: OK, as envoyproxy/ratelimit answers in shadow mode,
	// but the status shows there is nothing left.
	h.expect(h.ask(request("api", 0, t1)), ok, status{ok, "per-tenant:1/SECOND", 0, time.Second})
}

func TestUnlimitedIsAlwaysOK(t *testing.T) {
	h := serve(t, `
domain: api
descriptors:
  - key: client
    value: internal
    rate_limit: {unlimited: true}
`)
	for range 3 {
		h.expect(h.ask(request("api", 1000, desc("client", "internal"))), ok, status{ok, "", math.MaxUint32, 0})
	}
	if h.store.Calls() != 0 {
		t.Errorf("%d store calls for unlimited descriptors", h.store.Calls())
	}
}

func TestReplacesSkipsTheNamedLimit(t *testing.T) {
	h := serve(t, `
domain: api
descriptors:
  - key: key
    rate_limit: {name: generic, unit: minute, requests_per_unit: 1}
    descriptors:
      - key: plan
        value: gold
        rate_limit:
          name: gold
          unit: minute
          requests_per_unit: 3
          replaces: [{name: generic}]
`)
	generic, gold := desc("key", "k"), desc("key", "k", "plan", "gold")
	for i := range 3 {
		h.expect(h.ask(request("api", 0, generic, gold)), ok,
			status{code: ok}, status{ok, "gold:3/MINUTE", uint32(2 - i), time.Minute})
	}
	// Without the gold descriptor, generic applies again (and was never charged).
	h.expect(h.ask(request("api", 0, generic)), ok, status{ok, "generic:1/MINUTE", 0, time.Minute})
	h.expect(h.ask(request("api", 0, generic)), over, status{over, "generic:1/MINUTE", 0, time.Minute})
}

// envoyproxy/ratelimit replaces limits: a matched unlimited rule is
// answered as unlimited (limit_remaining 4294967295) even when another rule
// of the request replaces its name.
func TestReplacesLeavesUnlimitedRulesUnlimited(t *testing.T) {
	h := serve(t, `
domain: api
descriptors:
  - key: client
    value: internal
    rate_limit: {name: internal, unlimited: true}
  - key: client
    rate_limit:
      name: per-client
      unit: minute
      requests_per_unit: 5
      replaces: [{name: internal}]
`)
	h.expect(h.ask(request("api", 0, desc("client", "internal"), desc("client", "other"))), ok,
		status{ok, "", math.MaxUint32, 0}, status{ok, "per-client:5/MINUTE", 4, time.Minute})
}

func TestZeroRequestsPerUnitBlocksWithoutCharging(t *testing.T) {
	h := serve(t, edgeRules+`
  - key: remote_address
    value: 198.51.100.66
    rate_limit: {unit: second, requests_per_unit: 0}
  - key: user
    rate_limit: {name: per-user, unit: minute, requests_per_unit: 5}
`)
	// A blocked descriptor has envoyproxy/ratelimit's duration_until_reset:
	// the rest of its unit, never 0.
	for range 2 {
		h.expect(h.ask(request("edge", 0, desc("user", "u"), desc("remote_address", "198.51.100.66"))), over,
			status{ok, "per-user:5/MINUTE", 5, time.Minute}, status{over, ":0/SECOND", 0, time.Second})
	}
}

func TestLimitOverrideFromEnvoy(t *testing.T) {
	h := serve(t, apiRules)
	d := desc("client", "c")
	d.Limit = &ratelimitv3.RateLimitDescriptor_RateLimitOverride{RequestsPerUnit: 2, Unit: typev3.RateLimitUnit_MINUTE}
	h.expect(h.ask(request("api", 0, d)), ok, status{ok, ":2/MINUTE", 1, time.Minute})
	d.Limit.UnitMultiplier = wrapperspb.UInt32(10)
	h.clock.Advance(time.Minute)
	h.expect(h.ask(request("api", 0, d)), ok, status{ok, ":2/MINUTEx10", 1, 9 * time.Minute})
	// Unknown domains ignore overrides, as envoyproxy/ratelimit does.
	h.expect(h.ask(request("nowhere", 0, d)), ok, status{code: ok})
}

// A request that a requests_per_unit 0 rule refuses reports its other
// descriptors as envoyproxy/ratelimit with STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT
// does: one whose cost fits what is left of its fixed window is OK and
// spends nothing; one whose cost does not fit is OVER_LIMIT, and its window
// is over from then on, as a window any request went over is.
func TestABlockedRequestRefusesTheWindowsItsCostDoesNotFit(t *testing.T) {
	h := serve(t, `
domain: d
descriptors:
  - key: a
    rate_limit: {unit: minute, requests_per_unit: 1}
  - key: blk
    rate_limit: {unit: minute, requests_per_unit: 0}
`)
	blocked := request("d", 0, desc("blk", "x"), desc("a", "x"))
	h.expect(h.ask(blocked), over, status{over, ":0/MINUTE", 0, time.Minute}, status{ok, ":1/MINUTE", 1, time.Minute})
	h.expect(h.ask(request("d", 0, desc("a", "x"))), ok, status{ok, ":1/MINUTE", 0, time.Minute})
	h.expect(h.ask(blocked), over, status{over, ":0/MINUTE", 0, time.Minute}, status{over, ":1/MINUTE", 0, time.Minute})
	h.expect(h.ask(request("d", 0, withHits(desc("a", "x"), 0))), over, status{over, ":1/MINUTE", 0, time.Minute})
}

// Identical descriptors that a fixed window cannot hold all of are counted
// one after the other, as envoyproxy/ratelimit counts them: those that fit
// what was left before the request are OK, each with what remained after
// it, the rest OVER_LIMIT (quota_mode: OK without duration_until_reset;
// shadow_mode: OK); the window is over from then on.
func TestIdenticalDescriptorsOverTheirLimitAreCountedInTurn(t *testing.T) {
	h := serve(t, `
domain: d
descriptors:
  - key: hits
    rate_limit: {unit: minute, requests_per_unit: 3}
  - key: shady
    shadow_mode: true
    rate_limit: {unit: minute, requests_per_unit: 3}
  - key: quota
    quota_mode: true
    rate_limit: {unit: minute, requests_per_unit: 1}
`)
	k := desc("hits", "k")
	h.expect(h.ask(request("d", 2, k, k)), over, status{ok, ":3/MINUTE", 1, time.Minute}, status{over, ":3/MINUTE", 0, time.Minute})
	h.expect(h.ask(request("d", 0, withHits(desc("hits", "k"), 0))), over, status{over, ":3/MINUTE", 0, time.Minute})
	s := desc("shady", "s")
	h.expect(h.ask(request("d", 1, s, s, s, s)), ok, status{ok, ":3/MINUTE", 2, time.Minute}, status{ok, ":3/MINUTE", 1, time.Minute},
		status{ok, ":3/MINUTE", 0, time.Minute}, status{ok, ":3/MINUTE", 0, time.Minute})
	q := desc("quota", "q")
	h.expect(h.ask(request("d", 1, q, q)), ok, status{ok, ":1/MINUTE", 0, time.Minute}, status{ok, ":1/MINUTE", 0, 0})
}
