package httplimit

import (
	"context"
	"reflect"
	"testing"

	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/memory"
)

// A pooled Result keeps its checks between requests and only changes
// their store key when plan and cost are the same: every request's checks
// must still be what Policy.Checks builds, under the middleware's scope.
func TestReusedChecksAreWhatPolicyBuilds(t *testing.T) {
	m, err := New(sluice.NewLimiter(memory.New()), Options{
		Plans: []*Plan{
			{Name: "free", Limits: []sluice.Limit{sluice.FixedWindow(5, time.Minute), sluice.GCRA(50, 24*time.Hour)}},
			{Name: "pro", Limits: []sluice.Limit{sluice.FixedWindow(50, time.Minute)}},
		},
		Global: []sluice.Limit{sluice.TokenBucket(1000, time.Second).Named("everyone")},
		Scope:  "api",
	})
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
		plan := m.policy.Plan(step.plan)
		res.Identity, res.Cost = Identity{Subject: step.subject, key: "api/" + step.subject, Plan: plan}, step.cost
		if _, err := m.decide(context.Background(), res); err != nil {
			t.Fatal(err)
		}
		want := m.policy.Checks(nil, plan, "api/"+step.subject, step.cost)
		want[len(want)-1].Key = "api/" + GlobalSubject
		if !reflect.DeepEqual(res.Checks, want) {
			t.Fatalf("step %d (%+v): checks %+v, want %+v", i, step, res.Checks, want)
		}
	}
}
