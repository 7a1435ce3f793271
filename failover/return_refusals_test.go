package failover_test

import (
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/failover"
)

// One failure while the primary is up costs a return period, in which the
// calls beyond this instance's share are refused and counted as fallbacks:
// Stats tells them apart from those of an outage (ReturnRefusals), as
// OnFallback does by their reason, so that an operator can see why
// fallbacks go on while the store answers.
func TestRefusalsOfTheReturnPeriodAreCountedApart(t *testing.T) {
	r, _, _ := outage(t) // two instances: a share of 5 of 10
	check := sluice.Check{Key: "k", Limit: sluice.FixedWindow(10, time.Hour), Cost: 1}
	r.allow(t, check) // the one failure
	r.primary.Fail(nil)
	for range 9 {
		r.allow(t, check)
	}
	r.mu.Lock()
	returning := 0
	for _, err := range r.fallbacks {
		if err == failover.ErrReturning {
			returning++
		}
	}
	all := len(r.fallbacks)
	r.mu.Unlock()
	st := r.failover.Stats()
	t.Logf("%d fallbacks, %d of them ErrReturning; ReturnRefusals %d", all, returning, st.ReturnRefusals)
	if returning == 0 || st.ReturnRefusals != int64(returning) {
		t.Errorf("ReturnRefusals %d, want the %d fallbacks reported as ErrReturning (of %d)", st.ReturnRefusals, returning, all)
	}
	if st.FallbackDecisions != int64(all) {
		t.Errorf("FallbackDecisions %d, want all %d", st.FallbackDecisions, all)
	}
}
