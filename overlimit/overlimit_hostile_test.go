package overlimit_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/overlimit"
)

// A flood of clients that are each refused (an abusive botnet, every
// address knocking twice) fills the over-limit cache: it never remembers
// more denials than MaxEntries, whatever MaxEntries is.
func TestOverLimitCacheFloodStaysWithinMaxEntries(t *testing.T) {
	for _, bound := range []int{1, 17, 1000, 5000} {
		t.Run(strconv.Itoa(bound), func(t *testing.T) {
			r := newCacheRig(t, overlimit.Options{MaxEntries: bound})
			most := 0
			for i := range 3 * bound {
				check := sluice.Check{Key: "bot-" + strconv.Itoa(i), Limit: sluice.PerHour(1), Cost: 1}
				r.allow(t, check)
				if d, _ := r.allow(t, check); d.Allowed {
					t.Fatal("a second call within the hour was admitted")
				}
				most = max(most, r.cache.Stats().Entries)
			}
			if most > bound {
				t.Errorf("the cache held %d denials, MaxEntries is %d", most, bound)
			}
		})
	}
}

// Once a flood of refused clients has passed, the denials it left expire
// and the calls that follow sweep them, whatever keys those calls are for:
// the memory the flood took is given back without waiting for another.
func TestOverLimitCacheSweepsAFloodThatHasPassed(t *testing.T) {
	r := newCacheRig(t, overlimit.Options{MaxEntries: 1000})
	for i := range 1000 {
		check := sluice.Check{Key: "bot-" + strconv.Itoa(i), Limit: sluice.PerSecond(1), Cost: 1}
		r.allow(t, check)
		r.allow(t, check)
	}
	if n := r.cache.Stats().Entries; n < 900 {
		t.Fatalf("the flood left %d denials, want about 1000", n)
	}
	r.clk.Advance(2 * time.Second) // every denial has expired
	for i := range 5000 {
		r.allow(t, sluice.Check{Key: "user-" + strconv.Itoa(i%10), Limit: sluice.PerMinute(1 << 20), Cost: 1})
	}
	if n := r.cache.Stats().Entries; n != 0 {
		t.Errorf("%d expired denials still held after 5,000 calls", n)
	}
}
