package client

import (
	"testing"
	"time"
)

// Pins serverWait's doc comment: without a Retry-After, the server's wait
// is "the reset of a quota spent for a request of cost units (less of it
// left than cost, or none)", and told is false "when it said neither".
func TestServerWaitOfAQuotaTooSmallForTheCostAndOfNoReset(t *testing.T) {
	// 3 left of a quota, a request of cost 5: spent for it, its reset in
	// 10 s is the wait, though some of the quota is left.
	if wait, told := serverWait(0, false, RateLimit{Remaining: 3, Reset: 10 * time.Second}, true, 5); wait != 10*time.Second || !told {
		t.Errorf("3 left, cost 5, reset 10s: %v, %v; want 10s, true", wait, told)
	}
	// Enough left for the cost: the quota is not what refused, no wait told.
	if wait, told := serverWait(0, false, RateLimit{Remaining: 5, Reset: 10 * time.Second}, true, 5); told {
		t.Errorf("5 left, cost 5: %v, told; want not told", wait)
	}
	// None left but no reset (RateLimit.Reset: zero when the headers do not
	// say or it has passed): the headers say no wait, so none is told and
	// the caller backs off, rather than retry at once.
	if wait, told := serverWait(0, false, RateLimit{Remaining: 0}, true, 1); told {
		t.Errorf("none left, no reset: %v, told; want not told", wait)
	}
}
