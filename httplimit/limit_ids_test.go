package httplimit_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/memory"
)

// TestLimitsCheckedTogetherMayNotShareAnID: a state is kept under its key
// and its limit's ID (Limit.WithID, else the name), and the limits checked
// in one call under one key (a plan's, a key's plan with its own limits
// merged in, two rules' limits, each "<rule>.<limit>") may not spend one
// state twice: sluice.ValidateChecks refuses such a call, and every such
// request would be served undecided, without any limit. Validate refuses
// the later limit of the ID.
func TestLimitsCheckedTogetherMayNotShareAnID(t *testing.T) {
	perMinute := sluice.FixedWindow(1, time.Minute).Named("per-minute")
	free := &httplimit.Plan{Name: "free", Limits: []sluice.Limit{perMinute}}
	for _, c := range []struct {
		name string
		o    httplimit.Options
		want string
	}{
		{"a plan's limits", httplimit.Options{
			Plans: []*httplimit.Plan{{Name: "free", Limits: []sluice.Limit{perMinute,
				sluice.FixedWindow(1000, time.Hour).Named("hourly").WithID("per-minute")}}}},
			`Options.Plans[0].Limits[1]: "hourly" has the ID "per-minute" of limit "per-minute" of this list: the two would share one state`},
		{"a key's own limit and its plan's", httplimit.Options{
			Plans: []*httplimit.Plan{free},
			Keys: []httplimit.Key{{Name: "acme", SHA256: [32]byte{1}, Plan: &httplimit.Plan{Name: "free", Limits: []sluice.Limit{perMinute,
				sluice.FixedWindow(1000, time.Hour).Named("hourly").WithID("per-minute")}}}}},
			`Options.Keys[0].Plan.Limits[1]: "hourly" has the ID "per-minute" of limit "per-minute" of this list`},
		{"the global limits", httplimit.Options{
			Plans: []*httplimit.Plan{free},
			Global: []sluice.Limit{sluice.FixedWindow(100, time.Minute).Named("all"),
				sluice.FixedWindow(1000, time.Hour).Named("all-hourly").WithID("all")}},
			`Options.Global[1]: "all-hourly" has the ID "all" of limit "all" of this list`},
		{"two rules' limits", httplimit.Options{
			Plans: []*httplimit.Plan{free},
			Rules: []httplimit.Rule{
				{Name: "a", Limits: []sluice.Limit{sluice.FixedWindow(1, time.Minute).Named("m").WithID("b.c")}},
				{Name: "a.b", Limits: []sluice.Limit{sluice.FixedWindow(1, time.Minute).Named("c")}}}},
			`Options.Rules[1].Limits[0]: "a.b.c" is already the ID of a limit of rule a, whose state a rule keyed by the client would share`},
	} {
		err := c.o.Validate()
		var fe *httplimit.FieldError
		if err == nil || !errors.As(err, &fe) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
		st := memory.New()
		if _, err := httplimit.New(sluice.NewLimiter(st), c.o); err == nil {
			t.Errorf("%s: New accepted limits of one ID checked together", c.name)
		}
		st.Close()
	}
}

// TestAGlobalLimitMayShareAnIDWithAPlans: the global limits are kept
// under GlobalSubject, a plan's under the client's key, so the two are
// apart whatever their IDs, and each limits as it says.
func TestAGlobalLimitMayShareAnIDWithAPlans(t *testing.T) {
	st := memory.New()
	defer st.Close()
	mw, err := httplimit.New(sluice.NewLimiter(st), httplimit.Options{
		Plans:  []*httplimit.Plan{{Name: "free", Limits: []sluice.Limit{sluice.FixedWindow(1, time.Minute).Named("per-minute")}}},
		Global: []sluice.Limit{sluice.FixedWindow(100, time.Minute).Named("everyone").WithID("per-minute")},
	})
	if err != nil {
		t.Fatal(err)
	}
	h := mw.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	var codes []int
	for range 3 {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("GET", "http://x/", nil))
		codes = append(codes, w.Code)
	}
	if codes[0] != 200 || codes[1] != 429 || codes[2] != 429 {
		t.Errorf("plan 1 a minute beside a global 100 a minute of its ID: %v, want [200 429 429]", codes)
	}
}
