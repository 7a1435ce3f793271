package httplimit

import (
	"sync/atomic"
	"time"
)

// reanchorEvery is how long wallClock trusts the monotonic clock alone
// before it reads the wall clock again.
const reanchorEvery = time.Second

// wallClock is time.Now for the middleware's default clock, reading one
// clock where time.Now reads two: it reads the monotonic clock and adds
// the time since an anchor (a time.Now reading, wall and monotonic) that
// it renews every reanchorEvery. A wall clock step (settimeofday, an NTP step) shows
// within a second; slewing affects both clocks alike. The times it returns
// carry a monotonic reading, as time.Now's do. It is safe for concurrent
// use once its anchor is set.
type wallClock struct {
	anchor atomic.Pointer[anchor]
}

// anchor is a time.Now reading (wall and monotonic).
type anchor struct{ wall time.Time }

// now returns the current time.
func (c *wallClock) now() time.Time {
	a := c.anchor.Load()
	if d := time.Since(a.wall); d < reanchorEvery {
		return a.wall.Add(d)
	}
	t := time.Now()
	c.anchor.Store(&anchor{wall: t})
	return t
}
