package httplimit_test

import (
	"slices"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
)

// The one count a FallbackShared rule keeps for the requests without a
// key value is no value's: a client sending the value "-" (a tenant
// header, a query parameter) has a count of its own, and neither spends
// the other's.
func TestRuleSharedFallbackIsNoValuesCount(t *testing.T) {
	limits := []sluice.Limit{sluice.FixedWindow(1, time.Minute)}
	cases := []struct {
		key        string
		dash, none req
	}{
		{"header:X-Tenant",
			req{remote: "10.0.0.1:1", header: map[string]string{"X-Tenant": "-"}},
			req{remote: "10.0.0.1:1"}},
		{"query:tenant",
			req{remote: "192.0.2.1:1", path: "/api/search?tenant=-"},
			req{remote: "192.0.2.1:1", path: "/api/search"}},
	}
	for _, c := range cases {
		mw, _ := rulesMiddleware(t, httplimit.Rule{Name: "tenants", Key: []string{c.key}, Fallback: httplimit.FallbackShared, Limits: limits})
		if got, want := statuses(mw, c.none, c.dash, c.dash, c.none), []int{200, 200, 429, 429}; !slices.Equal(got, want) {
			t.Errorf("key %s: without a value, with \"-\", again each: %v, want %v", c.key, got, want)
		}
	}
}
