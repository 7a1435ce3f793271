package httplimit_test

import (
	"slices"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
)

// Methods are case-sensitive (RFC 9110 §9.1), and a ServeMux pattern's
// method matches the request's exactly: "purge /cache" (a method of the
// application's own, in lower case) is the route of a request sent as
// purge /cache, which pays its cost of 10, as do its respellings (a
// trailing slash, the path in another case). A method is read in upper
// case too, so post /bulk pays "POST /bulk"'s cost.
func TestAMethodAsSentPaysItsCost(t *testing.T) {
	plans := []*httplimit.Plan{{Name: "free", Limits: []sluice.Limit{sluice.FixedWindow(10, time.Minute)},
		Costs: map[string]int64{"purge /cache": 10, "POST /bulk": 10}}}
	for _, c := range []struct{ method, path string }{
		{"purge", "/cache"}, {"purge", "/cache/"}, {"purge", "/Cache"}, {"post", "/bulk"}, {"POST", "/bulk"},
	} {
		mw, _ := clockedMiddleware(t, httplimit.Options{Plans: plans})
		rs := []req{{method: c.method, path: c.path, remote: "192.0.2.1:1"}, {method: "GET", path: "/other", remote: "192.0.2.1:1"}}
		if got, want := statuses(mw, rs...), []int{200, 429}; !slices.Equal(got, want) {
			t.Errorf("%s %s (cost 10 of 10), then GET /other: %v, want %v", c.method, c.path, got, want)
		}
	}
}
