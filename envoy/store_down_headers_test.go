package envoy_test

import (
	"context"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/envoy"
	"github.com/sluice-dev/sluice/failover"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/memory"
)

type unreachableStore struct{}

func (unreachableStore) Apply(context.Context, []sluice.Check, []sluice.Status) error {
	return sluice.ErrStoreUnavailable
}

// With the store unreachable under on_store_error: allow or deny, no store
// decided the limit and nothing was counted: what the client has left is
// not known (docs/headers.md, "While the store is down"). The answer keeps
// the policy's code (OK, OVER_LIMIT with Retry-After) and states the limit,
// but no made-up remaining: not the whole quota under allow, whatever the
// client spent before the outage, nor none left under deny, though nothing
// was spent. RateLimit has no item for the limit (and no field), draft-6
// sends RateLimit-Limit alone, and the status has no limit_remaining and,
// but for a fixed window counted in its Unix window, no
// duration_until_reset — as httplimit answers
// (TestStoreDownAdmissionTellsNoMadeUpRemaining).
func TestAStoreDownAnswerTellsNoMadeUpRemaining(t *testing.T) {
	const rules = `domain: d
descriptors:
  - key: k
    rate_limit: {name: per-minute, unit: minute, requests_per_unit: 10}
  - key: b
    rate_limit: {name: bucket, unit: minute, requests_per_unit: 10, algorithm: token-bucket}
`
	for _, tc := range []struct {
		onError failover.OnError
		code    string
		ietf    string
		draft6  string
	}{
		{failover.Allow, "OK", "RateLimit-Policy: \"per-minute\";q=10;w=60, \"bucket\";q=10;w=60\n",
			"RateLimit-Limit: 10\nRateLimit-Policy: 10;w=60\n"},
		{failover.Deny, "OVER_LIMIT", "RateLimit-Policy: \"per-minute\";q=10;w=60, \"bucket\";q=10;w=60\nRetry-After: 1\n",
			"RateLimit-Limit: 10\nRateLimit-Policy: 10;w=60\nRetry-After: 1\n"},
	} {
		for _, mode := range []string{httplimit.ModeIETF, httplimit.ModeDraft6} {
			local := memory.New(memory.WithSweepInterval(0))
			defer local.Close()
			f, err := failover.New(unreachableStore{}, local, failover.Options{OnError: tc.onError, Timeout: time.Second})
			if err != nil {
				t.Fatal(err)
			}
			loaded, err := envoy.LoadRules("rules.yaml", []byte(rules))
			if err != nil {
				t.Fatal(err)
			}
			clock := func() time.Time { return start.Add(30 * time.Second) }
			svc, err := envoy.NewService(sluice.NewLimiter(f), loaded, envoy.Options{Headers: mode, Clock: clock})
			if err != nil {
				t.Fatal(err)
			}
			resp, err := dial(t, svc).ShouldRateLimit(context.Background(), request("d", 0, desc("k", "v"), desc("b", "v")))
			if err != nil {
				t.Fatalf("%v: %v", tc.onError, err)
			}
			if resp.OverallCode.String() != tc.code {
				t.Errorf("on_store_error %v: %v, want %s", tc.onError, resp.OverallCode, tc.code)
			}
			want := tc.ietf
			if mode == httplimit.ModeDraft6 {
				want = tc.draft6
			}
			if got := headerText(resp.ResponseHeadersToAdd); got != want {
				t.Errorf("on_store_error %v, %s headers:\n%swant\n%s", tc.onError, mode, got, want)
			}
			for i, want := range []status{
				{resp.Statuses[0].Code, "per-minute:10/MINUTE", 0, 30 * time.Second}, // the Unix minute's end: the clock's
				{resp.Statuses[1].Code, "bucket:10/MINUTE", 0, 0},
			} {
				if got := statusOf(resp.Statuses[i]); got != want || resp.Statuses[i].Code.String() != tc.code {
					t.Errorf("on_store_error %v: status %d %+v, want %+v, %s", tc.onError, i, got, want, tc.code)
				}
			}
		}
	}
}
