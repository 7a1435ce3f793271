package httplimit_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
)

// A rule keyed by a query parameter ("query:tenant") gives no fresh count
// to a client spelling the parameter in a pair Go's url.ParseQuery refuses
// but another upstream reads: Rack 2 splits a query on ";" as well as
// "&", so "?tenant=acme;v=1" and "?v=1;tenant=acme" are tenant acme there.
// Such a request is counted with those whose parameter upstreams read
// differently, whatever the rule's fallback, as a form: key counts it:
// falling back, it would be counted per address (a client of many
// addresses unbounded), or, under fallback: skip, not at all.
func TestAQueryKeyCountsAPairGoRefusesWithTheAmbiguousOnes(t *testing.T) {
	for _, fallback := range []string{httplimit.FallbackIP, httplimit.FallbackSkip} {
		mw, _ := rulesMiddleware(t, httplimit.Rule{Name: "tenants", Key: []string{"query:tenant"}, Fallback: fallback,
			Limits: []sluice.Limit{sluice.FixedWindow(1, time.Minute)}})
		var rs []req
		for i, q := range []string{"tenant=acme;v=1", "tenant=acme;v=2", "v=3;tenant=acme", "tenant=%zz&tenant=acme"} {
			rs = append(rs, req{remote: fmt.Sprintf("192.0.2.%d:1", i+1), path: "/api/search?" + q})
		}
		acme := req{remote: "192.0.2.9:1", path: "/api/search?tenant=acme&v=1"}
		// One count for the four, another for tenant acme as Go reads it.
		if got, want := statuses(mw, append(rs, acme, acme)...), []int{200, 429, 429, 429, 200, 429}; !slices.Equal(got, want) {
			t.Errorf("fallback %s: ?tenant=acme;… from three addresses, an undecodable tenant beside acme, then acme twice: %v, want %v",
				fallback, got, want)
		}
	}
}
