package httplimit_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
)

// A header any client may set (HeaderFromAny) sent twice, its own value
// first and a decoy that changes with every request last: Go's
// Header.Get, and so a Go upstream, reads the first, the rule the last.
// Neither reading may give each request a count of its own: every such
// request of the rule is counted together. One value sent twice is that
// value.
func TestRuleKeyedByAnyHeaderGivenTwice(t *testing.T) {
	for _, fallback := range []string{httplimit.FallbackIP, httplimit.FallbackSkip} {
		mw, _ := rulesMiddleware(t, httplimit.Rule{Name: "tenants", Key: []string{"header:X-Tenant"}, HeaderFrom: httplimit.HeaderFromAny,
			Fallback: fallback, Limits: []sluice.Limit{sluice.FixedWindow(3, time.Minute)}})
		var rs []req
		for i := range 5 {
			rs = append(rs, req{remote: fmt.Sprintf("192.0.2.%d:1", i+1), multi: map[string][]string{"X-Tenant": {"mine", fmt.Sprintf("decoy%d", i)}}})
		}
		if got, want := statuses(mw, rs...), []int{200, 200, 200, 429, 429}; !slices.Equal(got, want) {
			t.Errorf("fallback %s: %v, want %v", fallback, got, want)
		}
	}
	mw, _ := rulesMiddleware(t, httplimit.Rule{Name: "tenants", Key: []string{"header:X-Tenant"}, HeaderFrom: httplimit.HeaderFromAny,
		Fallback: httplimit.FallbackSkip, Limits: []sluice.Limit{sluice.FixedWindow(1, time.Minute)}})
	twice := req{remote: "192.0.2.1:1", multi: map[string][]string{"X-Tenant": {"mine", "mine"}}}
	other := req{remote: "192.0.2.1:1", header: map[string]string{"X-Tenant": "other"}}
	if got, want := statuses(mw, twice, twice, other), []int{200, 429, 200}; !slices.Equal(got, want) {
		t.Errorf("one value twice, again, another: %v, want %v", got, want)
	}
}
