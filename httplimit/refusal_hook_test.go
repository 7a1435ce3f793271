package httplimit_test

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
)

// TestOnRefusalIsToldEveryRefusalWritten: a limit's refusal and the penalty
// box's each reach OnRefusal once, with the request, the decision and the
// status written; admitted requests do not.
func TestOnRefusalIsToldEveryRefusalWritten(t *testing.T) {
	var told []string
	mw, _ := clockedMiddleware(t, httplimit.Options{
		Plans:   []*httplimit.Plan{{Name: "free", Limits: []sluice.Limit{sluice.FixedWindow(1, time.Minute).Named("per-minute")}}},
		Penalty: httplimit.Penalty{Refusals: 2, Within: time.Minute, For: 10 * time.Minute},
		OnRefusal: func(r *http.Request, res *httplimit.Result, status int) {
			told = append(told, fmt.Sprintf("%s %s %d %s penalized=%v %s", r.Method, r.URL.Path, status,
				res.Identity.Subject, res.Penalized, strings.Join(res.Decision.Violated, ",")))
		},
	})
	a := req{method: "POST", path: "/api/a", remote: "192.0.2.1:1"}
	if got := statuses(mw, a, a, a, a); !slices.Equal(got, []int{200, 429, 429, 429}) {
		t.Fatalf("statuses %v", got)
	}
	want := []string{
		"POST /api/a 429 ip:192.0.2.1 penalized=false per-minute",
		"POST /api/a 429 ip:192.0.2.1 penalized=false per-minute",
		"POST /api/a 429 ip:192.0.2.1 penalized=true penalty",
	}
	if !slices.Equal(told, want) {
		t.Errorf("OnRefusal was told\n%s\nwant\n%s", strings.Join(told, "\n"), strings.Join(want, "\n"))
	}
}
