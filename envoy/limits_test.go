package envoy_test

import (
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/envoy"
)

// Rules.Limits lists every enforced limit under its label, nested and
// prefixed ones included, and none for unlimited and blocked rules.
func TestRulesListTheirLimits(t *testing.T) {
	rules, err := envoy.LoadRules("rules.yaml", []byte(edgeRules+`
  - key: plan
    value: free
    rate_limit: {name: free-month, unit: month, requests_per_unit: 1000}
  - key: internal
    rate_limit: {unlimited: true}
  - key: banned
    rate_limit: {unit: second, requests_per_unit: 0}
`))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, l := range rules.Limits() {
		names = append(names, l.Name())
		if l.Name() == "free-month" && (l.Algorithm() != sluice.AlgorithmFixedWindow || l.Quantity() != 1000) {
			t.Errorf("free-month: %v", l)
		}
	}
	slices.Sort(names)
	if got, want := strings.Join(names, ","), "free-month,generic_key_checkout.user,login,office,per-ip,trusted-ip"; got != want {
		t.Errorf("limits %s, want %s", got, want)
	}
	if (*envoy.Rules)(nil).Limits() != nil {
		t.Error("nil rules have limits")
	}
}

// monthRule serves one month's rule of domain api keyed by api_key, and
// returns the outcomes its observer has seen, called after the requests.
func monthRule(t *testing.T) (*harness, func() []envoy.Outcome) {
	var (
		mu  sync.Mutex
		got []envoy.Outcome
	)
	h := serve(t, `
domain: api
descriptors:
  - key: api_key
    rate_limit: {name: per-month, unit: month, requests_per_unit: 1000}
`, envoy.Options{Observer: func(res *envoy.Result, _ time.Duration, err error) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, res.Descriptors...)
	}})
	return h, func() []envoy.Outcome {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(got)
	}
}

// A month's rule counts each Unix month under a key of its own; its
// observers' Subject is the descriptor without that window, the same from
// one month to the next, and its ResetAfter the time to the month's end.
func TestOutcomeSubjectOfAMonthsRule(t *testing.T) {
	h, outcomes := monthRule(t)
	h.ask(request("api", 0, desc("api_key", "k1")))
	got := outcomes()
	if len(got) != 1 {
		t.Fatalf("%d outcomes", len(got))
	}
	o := got[0]
	if o.Subject != "envoy:api:api_key=k1" || !o.Fixed || o.Window != 30*24*time.Hour || o.Remaining != 999 || o.Capacity != 1000 {
		t.Errorf("outcome %+v", o)
	}
	if o.ResetAfter <= 0 || o.ResetAfter > o.Window {
		t.Errorf("reset after %v of a 30-day window", o.ResetAfter)
	}
}

// A descriptor too long to be a key keeps one Subject, its hash, from one
// month to the next; its key is that hash and the month.
func TestLongDescriptorKeepsItsSubjectAcrossMonths(t *testing.T) {
	h, outcomes := monthRule(t)
	long := strings.Repeat("k", 2*sluice.MaxKeyLen)
	h.ask(request("api", 0, desc("api_key", long)))
	h.clock.Advance(31 * 24 * time.Hour)
	h.ask(request("api", 0, desc("api_key", long)))
	got := outcomes()
	if len(got) != 2 {
		t.Fatalf("%d outcomes", len(got))
	}
	s := got[0].Subject
	if !strings.HasPrefix(s, "envoy:sha256:") || len(s) != len("envoy:sha256:")+64 || got[1].Subject != s {
		t.Errorf("subjects %q and %q, want one envoy:sha256:<hex>", s, got[1].Subject)
	}
	k1, k2 := h.store.checks[0][0].Key, h.store.checks[1][0].Key
	if k1 == k2 || !strings.HasPrefix(k1, s+":w") || !strings.HasPrefix(k2, s+":w") {
		t.Errorf("keys %q and %q, want %q and two months", k1, k2, s)
	}
}
