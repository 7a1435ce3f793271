package quota

import (
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
)

// A bucket's w is B·W/Q rounded up to whole seconds (see Quota), never a
// rate above the limit's: a token bucket of 3 per 3,000,001 µs with burst
// 1 refills in 1,000,000⅓ µs, so w is 2, not 1.
func TestBucketWindowRoundsUpFractionalMicroseconds(t *testing.T) {
	l := sluice.TokenBucket(3, 3_000_001*time.Microsecond).WithBurst(1)
	if err := l.Err(); err != nil {
		t.Fatal(err)
	}
	if got := Of(l); got.Q != 1 || got.W != 2 {
		t.Fatalf("Of(%v) = q %d w %d, want q 1 w 2", l, got.Q, got.W)
	}
}
