package httplimit_test

import (
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/memory"
)

// TestARouteKeepsItsCountWhenTheRuleGainsAPattern: a rule keyed by
// "route" counts each of its patterns apart, by the pattern. Adding a
// pattern to the rule (a reload of the configuration, the Middleware
// rebuilt in the same scope) leaves the count of every other pattern as
// it was, wherever the new one is listed: a route spent for the hour stays
// spent, instead of starting afresh because its place in the list moved.
func TestARouteKeepsItsCountWhenTheRuleGainsAPattern(t *testing.T) {
	clock := clockAt(time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC))
	store := memory.New(memory.WithClock(clock.Now), memory.WithSweepInterval(0))
	t.Cleanup(func() { store.Close() })
	limiter := sluice.NewLimiter(store)
	build := func(paths ...string) *httplimit.Middleware {
		mw, err := httplimit.New(limiter, httplimit.Options{
			Scope:  "serve",
			Plans:  []*httplimit.Plan{{Name: "free", Limits: []sluice.Limit{sluice.FixedWindow(100, time.Hour)}}},
			Rules:  []httplimit.Rule{{Name: "exports", Paths: paths, Key: []string{"route"}, Limits: []sluice.Limit{sluice.FixedWindow(2, time.Hour)}}},
			Clock:  clock.Now,
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		})
		if err != nil {
			t.Fatal(err)
		}
		return mw
	}
	exports := req{method: "POST", path: "/v1/exports", remote: "192.0.2.1:1"}
	if got := statuses(build("/v1/exports"), exports, exports, exports); got[2] != 429 {
		t.Fatalf("before the reload: %v, want the third refused", got)
	}
	if got := statuses(build("/v1/imports", "/v1/exports"), exports); got[0] != 429 {
		t.Errorf("after a pattern is added before it: %v, want the route's count kept (429)", got)
	}
}
