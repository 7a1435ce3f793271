package memory_test

import (
	"context"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/memory"
)

func TestResetGivesTheKeyItsFullQuotaAtOnce(t *testing.T) {
	s := memory.New(memory.WithSweepInterval(0))
	defer s.Close()
	lim := sluice.NewLimiter(s)
	a, b := sluice.FixedWindow(2, time.Hour).Named("a"), sluice.SlidingLog(1, time.Hour).Named("b")
	checks := func(key string) []sluice.Check {
		return []sluice.Check{{Key: key, Limit: a, Cost: 1}, {Key: key, Limit: b, Cost: 1}}
	}
	var d sluice.Decision
	ctx := context.Background()
	for _, key := range []string{"k", "other"} {
		if err := lim.Allow(ctx, checks(key), &d); err != nil || !d.Allowed {
			t.Fatalf("%s: first: %v %v", key, d.Allowed, err)
		}
	}
	if lim.Allow(ctx, checks("k"), &d); d.Allowed {
		t.Fatal("second within the hour admitted")
	}
	if n := s.Reset("k", []sluice.Limit{a, b, sluice.PerSecond(1).Named("never-seen")}); n != 2 {
		t.Errorf("Reset forgot %d states, want 2", n)
	}
	if err := lim.Allow(ctx, checks("k"), &d); err != nil || !d.Allowed || d.Statuses[0].Remaining != 1 {
		t.Errorf("after reset: allowed %v, remaining %d, %v; want admitted with 1 of a left", d.Allowed, d.Statuses[0].Remaining, err)
	}
	if lim.Allow(ctx, checks("other"), &d); d.Allowed {
		t.Error("another key was reset too")
	}
	if n := s.Reset("k", nil); n != 0 {
		t.Errorf("Reset of no limits forgot %d", n)
	}
}
