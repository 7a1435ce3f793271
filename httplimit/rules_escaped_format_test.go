package httplimit_test

import (
	"slices"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
)

// Rails, whose every route takes an optional (.:format) (docs/rules.md,
// reading 5), routes by the escaped path: it serves POST
// /projects/group%2Fproj/export.json as "POST /projects/{id}/export" with
// id group/proj and format json, as a plan's cost of that route charges it
// (TestAFormatSuffixOnTheEscapedReadingPaysTheRoutesCost). A rule of the
// route reads the escaped path without its format suffix alike: each
// spelling below is limited by the rule's 1 a minute, the escaped .json
// and .xml ones as /projects/7/export.json and
// /projects/group%2Fproj/export are.
func TestARuleAppliesToTheEscapedReadingWithoutItsFormatSuffix(t *testing.T) {
	opts := httplimit.Options{
		Plans: []*httplimit.Plan{{Name: "free", Limits: []sluice.Limit{sluice.FixedWindow(1000, time.Minute)}}},
		Rules: []httplimit.Rule{{Name: "exports", Methods: []string{"POST"}, Paths: []string{"/projects/{id}/export"},
			Key: []string{httplimit.KeyClient}, Limits: []sluice.Limit{sluice.FixedWindow(1, time.Minute).Named("per-minute")}}},
	}
	for _, path := range []string{
		"/projects/7/export.json", "/projects/group%2Fproj/export",
		"/projects/group%2Fproj/export.json", "/projects/group%2Fproj/export.xml",
		"/projects/group%2Fproj/export.json/", "/projects/Group%2FProj/EXPORT.json",
	} {
		mw, _ := clockedMiddleware(t, opts)
		r := req{method: "POST", path: path, remote: "192.0.2.1:1"}
		if got, want := statuses(mw, r, r), []int{200, 429}; !slices.Equal(got, want) {
			t.Errorf("POST %s twice under the rule's 1 a minute: %v, want %v", path, got, want)
		}
	}
}

// A rule's except_paths read the escaped path without its format suffix
// as its paths do: beside paths "/projects/{id}/{action}", except_paths
// "/projects/{id}/export" leaves out /projects/group%2Fproj/export.json
// (Rails' export of the project group/proj), whose decoded reading, one
// segment longer, the rule's paths do not match, as it leaves out
// /projects/7/export.json; /projects/group%2Fproj/import.json stays the
// rule's.
func TestARulesExceptPathsLeaveOutTheEscapedReadingWithoutItsFormatSuffix(t *testing.T) {
	opts := httplimit.Options{
		Plans: []*httplimit.Plan{{Name: "free", Limits: []sluice.Limit{sluice.FixedWindow(1000, time.Minute)}}},
		Rules: []httplimit.Rule{{Name: "actions", Paths: []string{"/projects/{id}/{action}"},
			ExceptPaths: []string{"/projects/{id}/export"},
			Key:         []string{httplimit.KeyClient}, Limits: []sluice.Limit{sluice.FixedWindow(1, time.Minute).Named("per-minute")}}},
	}
	for _, c := range []struct {
		path    string
		limited bool
	}{
		{"/projects/7/export.json", false},
		{"/projects/group%2Fproj/export.json", false},
		{"/projects/group%2Fproj/export.json/", false},
		{"/projects/group%2Fproj/import.json", true},
		{"/projects/7/import.json", true},
	} {
		mw, _ := clockedMiddleware(t, opts)
		r := req{method: "POST", path: c.path, remote: "192.0.2.1:1"}
		want := []int{200, 200}
		if c.limited {
			want = []int{200, 429}
		}
		if got := statuses(mw, r, r); !slices.Equal(got, want) {
			t.Errorf("POST %s twice under the rule's 1 a minute: %v, want %v", c.path, got, want)
		}
	}
}
