package sluice_test

import (
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
)

// A burst of MaxQuantity is valid and one above it is not, also when the
// bucket could count it exactly (1,000,000 per second is one tick per
// unit, so 2^40+1 units fit in 2^53 ticks).
func TestBurstAboveMaxQuantityIsInvalid(t *testing.T) {
	if err := sluice.TokenBucket(1_000_000, time.Second).WithBurst(sluice.MaxQuantity).Err(); err != nil {
		t.Fatalf("burst MaxQuantity: %v", err)
	}
	for _, l := range []sluice.Limit{
		sluice.TokenBucket(1_000_000, time.Second).WithBurst(sluice.MaxQuantity + 1),
		sluice.GCRA(1_000_000, time.Second).WithBurst(sluice.MaxQuantity + 1),
	} {
		if l.Err() == nil {
			t.Errorf("%v: burst MaxQuantity+1 accepted", l)
		}
	}
}
