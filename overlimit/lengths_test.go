package overlimit_test

import (
	"context"
	"testing"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/storetest"
	"github.com/sluice-dev/sluice/overlimit"
)

// Statuses, leases or charges not one per check are the caller's error,
// never a panic: for a call the store would decide and for one the cache
// answers itself.
func TestMismatchedLengthsAreInvalidChecks(t *testing.T) {
	r := newCacheRig(t, overlimit.Options{})
	checks := []sluice.Check{{Key: "k", Limit: sluice.FixedWindow(1, 60e9), Cost: 1}, {Key: "k", Limit: sluice.FixedWindow(5, 60e9).Named("b"), Cost: 1}}
	for _, line := range storetest.Mismatched(context.Background(), r.cache, checks) {
		t.Errorf("before a refusal: %s", line)
	}
	r.allow(t, checks...)
	if d, _ := r.allow(t, checks...); d.Allowed {
		t.Fatal("the second call was admitted; the scenario needs it refused")
	}
	if _, asked := r.allow(t, checks...); asked {
		t.Fatal("the cache did not answer the refused key itself")
	}
	for _, line := range storetest.Mismatched(context.Background(), r.cache, checks) {
		t.Errorf("refusal cached: %s", line)
	}
}
