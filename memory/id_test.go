package memory_test

import (
	"context"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
)

// A limit renamed with its ID kept finds the state of the old name; one
// that keeps its name under another ID starts afresh.
func TestStateFollowsTheLimitsID(t *testing.T) {
	_, lim, _ := newStore(t)
	ctx := context.Background()
	old := sluice.FixedWindow(3, time.Hour).Named("per-hour")
	renamed := sluice.FixedWindow(3, time.Hour).Named("hourly").WithID("per-hour")
	moved := sluice.FixedWindow(3, time.Hour).Named("per-hour").WithID("per-hour-v2")
	if old.ID() != "per-hour" || renamed.ID() != "per-hour" || moved.ID() != "per-hour-v2" {
		t.Fatalf("IDs: %q %q %q", old.ID(), renamed.ID(), moved.ID())
	}
	if d, err := allow(lim, ctx, sluice.Check{Key: "k", Limit: old, Cost: 2}); err != nil || !d.Allowed {
		t.Fatalf("old: %+v %v", d, err)
	}
	if d, _ := allow(lim, ctx, sluice.Check{Key: "k", Limit: renamed, Cost: 0}); d.Remaining != 1 {
		t.Errorf("renamed with the old ID: %d remaining, want the old state's 1", d.Remaining)
	}
	if d, _ := allow(lim, ctx, sluice.Check{Key: "k", Limit: moved, Cost: 0}); d.Remaining != 3 {
		t.Errorf("same name under a new ID: %d remaining, want a fresh 3", d.Remaining)
	}
	both := []sluice.Check{{Key: "k", Limit: old, Cost: 1}, {Key: "k", Limit: renamed, Cost: 1}}
	if _, err := allow(lim, ctx, both...); err == nil {
		t.Error("two checks of one key and one ID in a call were accepted")
	}
	if err := sluice.FixedWindow(1, time.Hour).WithID("bad id").Err(); err == nil {
		t.Error("an ID with a space was accepted")
	}
}
