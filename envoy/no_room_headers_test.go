package envoy_test

import (
	"context"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/envoy"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/memory"
)

// A descriptor the store refused for want of room (sluice.Status.NoRoom)
// counted nothing, and its Remaining (0) and ResetAfter are no measure of
// the client's use: its headers state the limit alone, as for a limit no
// store decided (TestAStoreDownAnswerTellsNoMadeUpRemaining) — RateLimit
// has no item for it, draft-6 no RateLimit-Remaining and RateLimit-Reset
// — and Retry-After is when room may be found (30 s), not the end of the
// Unix minute its fixed window is counted in (60 s).
func TestARefusalForWantOfRoomTellsNoRemaining(t *testing.T) {
	for _, tc := range []struct{ mode, want string }{
		{httplimit.ModeIETF, "RateLimit-Policy: \"per-client\";q=5;w=60\nRetry-After: 30\n"},
		{httplimit.ModeDraft6, "RateLimit-Limit: 5\nRateLimit-Policy: 5;w=60\nRetry-After: 30\n"},
	} {
		rules, err := envoy.LoadRules("rules.yaml", []byte(apiRules))
		if err != nil {
			t.Fatal(err)
		}
		now := func() time.Time { return start }
		store := &roomless{Store: memory.New(memory.WithClock(now), memory.WithSweepInterval(0))}
		defer store.Close()
		store.full.Store(true)
		svc, err := envoy.NewService(sluice.NewLimiter(store), rules, envoy.Options{Headers: tc.mode, Clock: now})
		if err != nil {
			t.Fatal(err)
		}
		resp, err := svc.ShouldRateLimit(context.Background(), request("api", 0, desc("client", "new")))
		if err != nil {
			t.Fatal(err)
		}
		if resp.OverallCode != over {
			t.Fatalf("%s: %v, want OVER_LIMIT for want of room", tc.mode, resp.OverallCode)
		}
		if got := headerText(resp.ResponseHeadersToAdd); got != tc.want {
			t.Errorf("%s headers:\n%swant\n%s", tc.mode, got, tc.want)
		}
	}
}
