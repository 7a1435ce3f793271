package failover_test

import (
	"context"
	"errors"
	"testing"

	"github.com/sluice-dev/sluice"
)

// A Settle whose charge the primary fails is a call the primary was asked
// and failed: a store error, in Stats and against its node, as a failed
// decision, refund or release is, and its error says the store was
// unavailable.
func TestAFailedSettleIsAStoreError(t *testing.T) {
	r, check, _ := outage(t)
	r.allow(t, check)
	before := r.failover.Stats()
	err := r.failover.Settle(context.Background())
	if err == nil {
		t.Fatal("Settle with the primary down succeeded")
	}
	st := r.failover.Stats()
	if got := st.StoreErrors - before.StoreErrors; got != 1 {
		t.Errorf("Settle's failed charge counted %d store errors, want 1", got)
	}
	if got := st.Nodes[""].StoreErrors - before.Nodes[""].StoreErrors; got != 1 {
		t.Errorf("Settle's failed charge counted %d store errors against its node, want 1", got)
	}
	if !errors.Is(err, sluice.ErrStoreUnavailable) {
		t.Errorf("Settle's error %v does not wrap sluice.ErrStoreUnavailable", err)
	}
}
