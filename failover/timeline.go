package failover

import (
	"sync"
	"time"
)

// epoch is the origin of the readings of a timeline without a clock.
var epoch = time.Now()

// A timeline measures elapsed time for the breaker's open period and a
// node's return period, on a clock that may be set back. Its reading is
// the time elapsed since an origin of its own and never goes back.
// Without a clock it reads the monotonic clock (time.Since), which a
// change of the system clock does not move. With one (BreakerOptions.Clock),
// each reading adds how far the clock moved forward since the previous
// reading; a clock set back adds nothing, and elapsed time resumes from
// its new reading. The zero timeline is ready for use; it is safe for
// concurrent use and must not be copied after first use.
type timeline struct {
	mu   sync.Mutex
	last time.Time     // the clock's previous reading; zero before the first
	at   time.Duration // the elapsed time as of last
}

// read returns the elapsed time now, on clock (nil: the monotonic clock).
func (tl *timeline) read(clock func() time.Time) time.Duration {
	if clock == nil {
		return time.Since(epoch)
	}
	tl.mu.Lock()
	defer tl.mu.Unlock()
	now := clock() // under the lock: readings are taken in order
	if !tl.last.IsZero() {
		if d := now.Sub(tl.last); d > 0 {
			tl.at += d
		}
	}
	tl.last = now
	return tl.at
}

// elapsed reads the Store's timeline, in ns: the clock of its return
// periods.
func (f *Store) elapsed() int64 { return int64(f.tl.read(f.clock)) }
