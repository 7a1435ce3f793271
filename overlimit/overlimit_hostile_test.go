package overlimit_test

import (
	"strconv"
	"testing"

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
