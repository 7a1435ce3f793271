package httplimit

import (
	"context"
	"reflect"
	"testing"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/memory"
)

// A pooled Result keeps its checks between requests and only changes
// their subject when plan and cost are the same: every request's checks
// must still be what Policy.Checks builds.
func TestReusedChecksAreWhatPolicyBuilds(t *testing.T) {
	cfg, err := config.Parse("t.yaml", []byte(`
plans:
  free: {limits: [{name: per-minute, algorithm: fixed-window, quantity: 5, window: 1m}, {name: per-day, algorithm: gcra, quantity: 50, window: 24h}]}
  pro: {limits: [{name: per-minute, algorithm: fixed-window, quantity: 50, window: 1m}]}
global: [{name: everyone, algorithm: token-bucket, quantity: 1000, window: 1s}]
default_plan: free
`))
	if err != nil {
		t.Fatal(err)
	}
	m, err := New(sluice.NewLimiter(memory.New()), cfg)
	if err != nil {
		t.Fatal(err)
	}
	res := &Result{}
	for i, step := range []struct {
		plan, subject string
		cost          int64
	}{
		{"free", "a", 1}, {"free", "b", 1}, {"free", "b", 2}, {"pro", "b", 2}, {"pro", "c", 2}, {"free", "c", 0}, {"free", "a", 0},
	} {
		plan := cfg.Policy.Plan(step.plan)
		res.Identity, res.Cost = Identity{Subject: step.subject, Plan: plan}, step.cost
		if _, err := m.decide(context.Background(), res); err != nil {
			t.Fatal(err)
		}
		if want := cfg.Policy.Checks(nil, plan, step.subject, step.cost); !reflect.DeepEqual(res.Checks, want) {
			t.Fatalf("step %d (%+v): checks %+v, want %+v", i, step, res.Checks, want)
		}
	}
}
