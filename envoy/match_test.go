package envoy_test

import (
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
)

const edgeRules = `
domain: edge
descriptors:
  - key: remote_address
    rate_limit: {name: per-ip, unit: minute, requests_per_unit: 10}
    descriptors:
      - key: path
        value: /login
        rate_limit: {name: login, unit: minute, requests_per_unit: 2}
  - key: remote_address
    value: 10.0.0.1
    rate_limit: {name: trusted-ip, unit: minute, requests_per_unit: 1000}
  - key: remote_address
    value: "10.1.*"
    rate_limit: {name: office, unit: hour, requests_per_unit: 50}
  - key: generic_key
    value: checkout
    detailed_metric: true
    descriptors:
      - key: user
        rate_limit: {unit: second, requests_per_unit: 3}
`

func TestNestedDescriptorsLimitAtTheDepthTheyReach(t *testing.T) {
	h := serve(t, edgeRules)
	ip, login := desc("remote_address", "1.2.3.4"), desc("remote_address", "1.2.3.4", "path", "/login")

	h.expect(h.ask(request("edge", 0, ip, login)), ok,
		status{ok, "per-ip:10/MINUTE", 9, time.Minute},
		status{ok, "login:2/MINUTE", 1, time.Minute})
	h.expect(h.ask(request("edge", 0, ip, login)), ok,
		status{ok, "per-ip:10/MINUTE", 8, time.Minute},
		status{ok, "login:2/MINUTE", 0, time.Minute})
	// The third login is refused, and the per-ip limit, which would have
	// admitted it, is not charged for it.
	h.expect(h.ask(request("edge", 0, ip, login)), over,
		status{ok, "per-ip:10/MINUTE", 8, time.Minute},
		status{over, "login:2/MINUTE", 0, time.Minute})

	for name, d := range map[string][]string{
		"a value the level does not list":            {"remote_address", "1.2.3.4", "path", "/other"},
		"a descriptor deeper than the rules":         {"remote_address", "1.2.3.4", "path", "/login", "method", "GET"},
		"a second-level entry alone":                 {"path", "/login"},
		"a level without rate_limit":                 {"generic_key", "checkout"},
		"a key the domain does not know":             {"user_agent", "curl"},
		"an exact value shadows the wildcard's kids": {"remote_address", "10.0.0.1", "path", "/login"},
	} {
		resp := h.ask(request("edge", 0, desc(d...)))
		if got := statusOf(resp.Statuses[0]); resp.OverallCode != ok || got != (status{code: ok}) {
			t.Errorf("%s: %v %+v, want OK without a limit", name, resp.OverallCode, got)
		}
	}
}

func TestExactValueThenPrefixThenWildcard(t *testing.T) {
	h := serve(t, edgeRules)
	cases := []struct {
		ip   string
		want status
	}{
		{"10.0.0.1", status{ok, "trusted-ip:1000/MINUTE", 999, time.Minute}},
		{"10.1.2.3", status{ok, "office:50/HOUR", 49, time.Hour}},
		{"10.1.", status{ok, "office:50/HOUR", 49, time.Hour}},
		{"10.10.0.1", status{ok, "per-ip:10/MINUTE", 9, time.Minute}},
		{"", status{ok, "per-ip:10/MINUTE", 9, time.Minute}},
	}
	for _, c := range cases {
		h.expect(h.ask(request("edge", 0, desc("remote_address", c.ip))), ok, c.want)
	}
}

func TestDerivedNamesFollowTheDescriptorPath(t *testing.T) {
	h := serve(t, edgeRules)
	resp := h.ask(request("edge", 0, desc("generic_key", "checkout", "user", "u1")))
	// No rate_limit.name: the name comes from the path; current_limit.name
	// stays empty, as envoyproxy/ratelimit leaves it.
	h.expect(resp, ok, status{ok, ":3/SECOND", 2, time.Second})
	if got := h.store.checks[0][0].Limit.Name(); got != "generic_key_checkout.user" {
		t.Errorf("limit name %q", got)
	}
}

func TestStoreKeysNameDomainAndEntriesUnambiguously(t *testing.T) {
	h := serve(t, edgeRules)
	h.ask(request("edge", 0, desc("remote_address", "1.2.3.4", "path", "/login")))
	h.ask(request("edge", 0, desc("remote_address", "a|b=c:{d}%")))
	long := strings.Repeat("x", 2*sluice.MaxKeyLen)
	h.ask(request("edge", 0, desc("remote_address", long)))
	h.ask(request("edge", 0, desc("remote_address", long+"y")))
	want := []string{
		"envoy:edge:remote_address=1.2.3.4|path=/login",
		"envoy:edge:remote_address=a%7Cb%3Dc%3A%7Bd%7D%25",
	}
	for i, w := range want {
		if got := h.store.checks[i][0].Key; got != w {
			t.Errorf("key %d: %q, want %q", i, got, w)
		}
	}
	k1, k2 := h.store.checks[2][0].Key, h.store.checks[3][0].Key
	if !strings.HasPrefix(k1, "envoy:sha256:") || len(k1) != len("envoy:sha256:")+64 || k1 == k2 {
		t.Errorf("long descriptors: keys %q and %q, want distinct envoy:sha256:<hex>", k1, k2)
	}
}

// A descriptor whose key is just short of sluice.MaxKeyLen is decided as
// any other, peeks included: a peek at a fixed window also reads the key
// of the window's over-limit record, which is longer, so a key is hashed
// before that record's key would pass the bound.
func TestPeekAtDescriptorsNearTheKeyBound(t *testing.T) {
	h := serve(t, `
domain: d
descriptors:
  - key: k
    rate_limit: {unit: minute, requests_per_unit: 1}
  - key: w
    rate_limit: {unit: week, requests_per_unit: 1}
`)
	prefix := len("envoy:d:k=")
	for n := sluice.MaxKeyLen - prefix - 8; n <= sluice.MaxKeyLen-prefix+1; n++ {
		for _, k := range []string{"k", "w"} {
			d := desc(k, strings.Repeat("v", n))
			unit, left := "MINUTE", time.Minute
			if k == "w" {
				unit, left = "WEEK", 24*time.Hour // start is the last day of a Unix week
			}
			limit := ":1/" + unit
			h.expect(h.ask(request("d", 0, withHits(d, 0))), ok, status{ok, limit, 1, left})
			h.expect(h.ask(request("d", 0, desc(k, strings.Repeat("v", n)))), ok, status{ok, limit, 0, left})
			h.expect(h.ask(request("d", 0, desc(k, strings.Repeat("v", n)))), over, status{over, limit, 0, left})
			h.expect(h.ask(request("d", 0, withHits(desc(k, strings.Repeat("v", n)), 0))), over, status{over, limit, 0, left})
		}
	}
}
