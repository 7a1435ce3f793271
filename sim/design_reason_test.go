package sim

import (
	"strings"
	"testing"
)

// When the exact log is passed over, the reason says which bound it
// crosses: its length per key (more entries than the precision keeps in
// one key's log), or the memory of every key's log; never that a log of a
// few KiB for one key "is too large".
func TestDesignSaysWhyTheExactLogIsPassedOver(t *testing.T) {
	for _, tc := range []struct {
		name string
		req  Requirements
		want string
	}{
		{"one key, a long log", Requirements{Rate: "2000/1m", Keys: 1},
			"an exact log would keep 2000 entries per key, more than the 1000 approximate precision keeps in one key's log"},
		{"many keys, a short log", Requirements{Rate: "100000/1h", Keys: 1e6},
			"an exact log would keep 100000 entries per key, more than the 1000 approximate precision keeps in one key's log"},
		{"strict, memory of every key", Requirements{Rate: "100/1m", Precision: "strict", Keys: 1e9, Instances: 2},
			"an exact log of 100 entries per key for 1000000000 keys would take up to"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reasons := strings.Join(design(t, tc.req).Recommendation.Reasons, " ")
			if !strings.Contains(reasons, tc.want) || strings.Contains(reasons, "is too large") {
				t.Errorf("reasons:\n%s\nwant %q and no \"is too large\"", reasons, tc.want)
			}
		})
	}
}
