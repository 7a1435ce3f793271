package sim

import (
	"strings"
	"testing"
)

// The exact log is recommended while it stays small (256 MB of logs at
// approximate precision), judged at what a log costs a memory store: 16
// bytes an entry in an array of up to twice its entries, and a state of
// its own. 100,000 keys of 100 a minute hold 10 million entries: 160 MB
// counted as bare entries, about 340 MB as the store keeps them, so
// they get a bucket; 50,000 keys fit.
func TestDesignSizesALogAsTheMemoryStoreKeepsIt(t *testing.T) {
	for _, tc := range []struct {
		keys int64
		log  bool
	}{
		{50_000, true},
		{100_000, false},
	} {
		a := design(t, Requirements{Rate: "100/1m", Keys: tc.keys})
		if got := a.Recommendation.Algorithm == "sliding-window-log"; got != tc.log {
			t.Errorf("%d keys of 100/1m: %s recommended, want a sliding log %v", tc.keys, a.Recommendation.Algorithm, tc.log)
		}
		if tc.log && !strings.Contains(a.Markdown, "fits in memory (at most 162") {
			t.Errorf("%d keys of 100/1m: the analysis does not state the log's 162 MiB:\n%s", tc.keys, a.Markdown)
		}
	}
}
