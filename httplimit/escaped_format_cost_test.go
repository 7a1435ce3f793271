package httplimit_test

import (
	"slices"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
)

// Rails, whose every route takes an optional (.:format) (docs/rules.md,
// reading 5), routes by the escaped path: a dynamic segment takes an
// escaped slash ("group%2Fproj", GitLab's project ids), so Rails serves
// POST /projects/group%2Fproj/export.json as "POST /projects/{id}/export"
// with id group/proj and format json. ServeMux reads the path so too
// (reading 2), and the format suffix is stepped off that escaped reading
// as off the decoded ones: the endpoint's .json spelling, with or without a
// trailing slash, pays its cost of 10, as /projects/group%2Fproj/export
// and /projects/7/export.json do.
func TestAFormatSuffixOnTheEscapedReadingPaysTheRoutesCost(t *testing.T) {
	plans := []*httplimit.Plan{{Name: "free", Limits: []sluice.Limit{sluice.FixedWindow(10, time.Minute)},
		Costs: map[string]int64{"POST /projects/{id}/export": 10}}}
	for _, path := range []string{
		"/projects/group%2Fproj/export", "/projects/7/export.json",
		"/projects/group%2Fproj/export.json", "/projects/group%2Fproj/export.json/", "/projects/Group%2FProj/Export.JSON",
	} {
		mw, _ := clockedMiddleware(t, httplimit.Options{Plans: plans})
		rs := []req{{method: "POST", path: path, remote: "192.0.2.1:1"}, {method: "GET", path: "/other", remote: "192.0.2.1:1"}}
		if got, want := statuses(mw, rs...), []int{200, 429}; !slices.Equal(got, want) {
			t.Errorf("POST %s (cost 10 of 10), then GET /other: %v, want %v", path, got, want)
		}
	}
}
