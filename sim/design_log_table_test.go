package sim

import (
	"context"
	"os"
	"strings"
	"testing"
)

// docs/designer.md's decision table states when a requirement without a
// burst cap gets the sliding window log: Q ≤ 10,000 and keys × (32·Q + 200)
// B ≤ 1 GiB at strict precision, Q ≤ 1,000 and keys × (32·Q + 200) B ≤
// 256 MiB at approximate precision (the logs as a store keeps them, see
// stateEstimate); otherwise a bucket. Design follows that criterion on
// either side of each bound.
func TestDesignChoosesTheLogAsTheDecisionTableStates(t *testing.T) {
	doc, err := os.ReadFile("../docs/designer.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range []string{
		"| no | strict | sliding window log, if Q ≤ 10,000 and keys × (32·Q + 200) B ≤ 1 GiB;",
		"| no | approximate | sliding window log, if Q ≤ 1,000 and keys × (32·Q + 200) B ≤ 256 MiB;",
	} {
		if !strings.Contains(string(doc), row) {
			t.Errorf("docs/designer.md's decision table has no row %q", row)
		}
	}
	table := func(req Requirements) bool {
		q, _, _ := ParseRate(req.Rate)
		maxQ, maxBytes := int64(1_000), int64(256<<20)
		if req.Precision == PrecisionStrict {
			maxQ, maxBytes = 10_000, 1<<30
		}
		return q <= maxQ && req.Keys*(32*q+200) <= maxBytes
	}
	for _, req := range []Requirements{
		// 10,000 × 32,200 B = 322 MB > 256 MiB, though 10,000 × 1000 × 16 B = 160 MB.
		{Rate: "1000/1m", Precision: PrecisionApproximate, Keys: 10_000},
		{Rate: "1000/1m", Precision: PrecisionApproximate, Keys: 8_300},
		// 40,000 × 32,200 B = 1.29 GB > 1 GiB, though 40,000 × 1000 × 16 B = 640 MB.
		{Rate: "1000/1m", Precision: PrecisionStrict, Keys: 40_000},
		{Rate: "1000/1m", Precision: PrecisionStrict, Keys: 33_300},
		{Rate: "1000/1m", Precision: PrecisionApproximate, Keys: 1},
		{Rate: "1001/1m", Precision: PrecisionApproximate, Keys: 1},
		{Rate: "10000/1m", Precision: PrecisionStrict, Keys: 1},
		{Rate: "10001/1m", Precision: PrecisionStrict, Keys: 1},
	} {
		req.Store, req.MaxArrivals = "redis", 3000
		a, err := Design(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		rec := a.Recommendation
		if log, want := rec.Algorithm == "sliding-window-log", table(req); log != want {
			t.Errorf("%s %s, %d keys: recommended %s %d burst %d; the table says a sliding window log: %v; reason: %s",
				req.Rate, req.Precision, req.Keys, rec.Algorithm, rec.Quantity, rec.Burst, want, rec.Reasons[0])
		}
	}
}
