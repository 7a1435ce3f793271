package envoy_test

import (
	"context"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/envoy"
	"github.com/sluice-dev/sluice/memory"
)

// denyingStore refuses every check as a failover's deny does while its
// store cannot be reached: Unavailable, Remaining 0.
type denyingStore struct{}

func (denyingStore) Apply(_ context.Context, checks []sluice.Check, out []sluice.Status) error {
	for i := range checks {
		out[i] = sluice.Status{RetryAfter: time.Second, ResetAfter: time.Second, Unavailable: true}
	}
	return nil
}

// An Outcome carries its status's Unavailable: an observer can tell a
// descriptor no store decided, whose Remaining tells no state and whose
// refusal is the service's capacity, from one its limit decided.
func TestOutcomesTellAStatusNoStoreDecided(t *testing.T) {
	rules, err := envoy.LoadRules("rules.yaml", []byte(apiRules))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name        string
		store       sluice.Store
		unavailable bool
	}{
		{"the store could not be reached", denyingStore{}, true},
		{"the store decided", memory.New(memory.WithSweepInterval(0)), false},
	} {
		if c, ok := tc.store.(interface{ Close() error }); ok {
			defer c.Close()
		}
		var got []envoy.Outcome
		svc, err := envoy.NewService(sluice.NewLimiter(tc.store), rules, envoy.Options{Observer: func(res *envoy.Result, _ time.Duration, _ error) {
			got = append(got[:0], res.Descriptors...)
		}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := svc.ShouldRateLimit(context.Background(), request("api", 0, desc("client", "c"))); err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || got[0].Limit == "" || got[0].Unavailable != tc.unavailable {
			t.Errorf("%s: observed %+v, want one outcome of per-client with Unavailable %v", tc.name, got, tc.unavailable)
		}
	}
}
