package httplimit

import (
	"testing"
	"time"
)

// wallClock gives time.Now's time from one monotonic read, and reads the
// wall clock again once its anchor is reanchorEvery old, so that a wall
// clock step shows within that time.
func TestWallClockFollowsTimeNow(t *testing.T) {
	var c wallClock
	c.anchor.Store(&anchor{wall: time.Now()})
	for range 1000 {
		before := time.Now()
		got := c.now()
		after := time.Now()
		if got.Before(before) || got.After(after) {
			t.Fatalf("now() = %v, not between %v and %v", got, before, after)
		}
	}
	// An anchor older than reanchorEvery is replaced by a new time.Now
	// reading; a younger one is kept.
	young := &anchor{wall: time.Now()}
	c.anchor.Store(young)
	c.now()
	if c.anchor.Load() != young {
		t.Error("a fresh anchor was replaced")
	}
	old := &anchor{wall: time.Now().Add(-reanchorEvery)}
	c.anchor.Store(old)
	before := time.Now()
	got := c.now()
	if a := c.anchor.Load(); a == old || a.wall.Before(before) || !got.Equal(a.wall) {
		t.Errorf("an old anchor was kept: now() = %v, anchor %v", got, a.wall)
	}
}
