package envoy_test

import (
	"testing"
	"time"

	"github.com/sluice-dev/sluice/envoy"
)

// envoyproxy/ratelimit decodes a descriptor into a Go struct with
// gopkg.in/yaml.v2, whose rate_limit is a pointer to a struct. A merge key
// (<<: *base) first decodes the merged descriptor into it, and a
// rate_limit written after the merge key is then decoded into the same,
// already allocated struct: yaml.v2 sets only the fields it finds there,
// so the merged rate_limit's other fields (name, replaces, unit,
// requests_per_unit) stay. (Checked with gopkg.in/yaml.v2 v2.4.0, the
// version envoyproxy/ratelimit uses: api_key decodes to
// {1000 hour name:per_ip}, tenant to {7 minute name:per_ip}.)
const mergedRateLimitRules = `
domain: d
descriptors:
  - &base
    key: remote_address
    rate_limit: {unit: minute, requests_per_unit: 100, name: per_ip}
  - <<: *base
    key: api_key
    rate_limit: {unit: hour, requests_per_unit: 1000}
`

// A descriptor that merges another and writes its own complete rate_limit
// keeps the merged rate_limit's name, as in envoyproxy/ratelimit: its
// current_limit is "per_ip: 1000 per HOUR".
func TestMergeKeyKeepsTheMergedRateLimitName(t *testing.T) {
	h := serve(t, mergedRateLimitRules)
	h.expect(h.ask(request("d", 0, desc("api_key", "k1"))), ok,
		status{ok, "per_ip:1000/HOUR", 999, time.Hour})
}

// The merged name is the rule's: a rule that replaces per_ip removes the
// limit of a descriptor that merged it.
func TestReplacesReachesTheNameARateLimitMerged(t *testing.T) {
	h := serve(t, mergedRateLimitRules+`  - key: trusted
    rate_limit: {unlimited: true, name: trusted, replaces: [{name: per_ip}]}
`)
	h.expect(h.ask(request("d", 0, desc("api_key", "k1"), desc("trusted", "t"))), ok,
		status{code: ok}, status{ok, "", 4294967295, 0})
}

// With <<: [*a, *b], yaml.v2 decodes b and then a into the same
// rate_limit struct: b's replaces stays beside a's unit, quantity and
// name (both decodes to {100 minute name:per_ip replaces:[zz]}), so the
// rule replaces zz, as in envoyproxy/ratelimit.
func TestMergeListKeepsTheLaterMappingsRateLimitFields(t *testing.T) {
	h := serve(t, `
domain: d
descriptors:
  - &base
    key: remote_address
    rate_limit: {unit: minute, requests_per_unit: 100, name: per_ip}
  - &other
    key: o
    rate_limit: {unit: hour, requests_per_unit: 3, name: oname, replaces: [{name: zz}]}
  - <<: [*base, *other]
    key: both
  - key: user
    rate_limit: {unit: minute, requests_per_unit: 1, name: zz}
`)
	// zz is replaced by the rule of "both": the user descriptor has no
	// limit, however often it is sent.
	for i := 0; i < 3; i++ {
		h.expect(h.ask(request("d", 0, desc("both", "x"), desc("user", "u1"))), ok,
			status{ok, "per_ip:100/MINUTE", uint32(99 - i), time.Minute},
			status{code: ok})
	}
}

// A rate_limit written after a merge key that sets only some of its
// fields takes the others from the merged one: the rules load, and tenant
// is limited to 7 per minute, named per_ip, as in envoyproxy/ratelimit.
func TestRateLimitAfterAMergeKeySetsOnlyTheFieldsItNames(t *testing.T) {
	rules := mergedRateLimitRules + `  - <<: *base
    key: tenant
    rate_limit: {requests_per_unit: 7}
`
	if _, err := envoy.LoadRules("rules.yaml", []byte(rules)); err != nil {
		t.Fatalf("LoadRules refused rules that envoyproxy/ratelimit loads: %v", err)
	}
	h := serve(t, rules)
	h.expect(h.ask(request("d", 0, desc("tenant", "t1"))), ok, status{ok, "per_ip:7/MINUTE", 6, time.Minute})
}

// A null rate_limit after a merge key sets yaml.v2's pointer to nil: the
// descriptor has no limit of its own.
func TestNullRateLimitAfterAMergeKeyRemovesIt(t *testing.T) {
	h := serve(t, mergedRateLimitRules+`  - <<: *base
    key: free
    rate_limit: ~
`)
	for range 3 {
		h.expect(h.ask(request("d", 0, desc("free", "f1"))), ok, status{code: ok})
	}
}
