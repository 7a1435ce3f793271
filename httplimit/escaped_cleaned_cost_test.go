package httplimit_test

import (
	"slices"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
)

// docs/rules.md: a plan's costs charge the largest cost of the readings;
// reading 2 is ServeMux's reading of the escaped path (which cleans it
// first: /x%2Fy/../bulk/ is /bulk/), reading 3 each of 1 and 2 without a
// trailing slash, reading 7 the escaped reading in lower case where it puts
// the segments otherwise. /bulk/ and /BULK pay "POST /bulk"'s 10, and so
// do /x%2Fy/../bulk/, /x%2Fy/../BULK and /X%2FY/../Bulk/ (ServeMux: /bulk/,
// /BULK, /Bulk/) through the middleware. (The server refuses such paths
// with a 400, judgedPath; the library middleware weighs them.)
func TestAnEscapedPathCleanedOfItsEscapedSlashPaysItsCost(t *testing.T) {
	plans := []*httplimit.Plan{{Name: "free", Limits: []sluice.Limit{sluice.FixedWindow(10, time.Minute)},
		Costs: map[string]int64{"POST /bulk": 10}}}
	for _, path := range []string{"/bulk", "/bulk/", "/x%2Fy/../bulk", "/x%2Fy/../bulk/", "/x%2Fy/../BULK", "/X%2FY/../Bulk/"} {
		mw, _ := clockedMiddleware(t, httplimit.Options{Plans: plans})
		got := statuses(mw, req{method: "POST", path: path, remote: "192.0.2.1:1"},
			req{method: "GET", path: "/other", remote: "192.0.2.1:1"})
		if want := []int{200, 429}; !slices.Equal(got, want) {
			t.Errorf("POST %s, then GET /other: %v, want %v", path, got, want)
		}
	}
}
