package httplimit_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/sluice-dev/sluice/httplimit"
)

// Keep returns nil for a decision with nothing to settle: settling that
// nil Pending, or a zero one, gives back nothing, returns nil and does not
// panic, and neither encodes a settlement UnmarshalPending would take.
func TestNilPendingSettlesNothing(t *testing.T) {
	ctx := context.Background()
	var m httplimit.Middleware
	for name, p := range map[string]*httplimit.Pending{"nil": nil, "zero": {}} {
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("%s Pending: panicked: %v", name, r)
				}
			}()
			if err := p.Settle(ctx, http.StatusOK, nil); err != nil {
				t.Errorf("%s Pending: Settle: %v, want nil", name, err)
			}
			b, err := p.MarshalBinary()
			if err == nil {
				if _, err := m.UnmarshalPending(b); err == nil {
					t.Errorf("%s Pending: encoded %s, which decodes", name, b)
				}
			}
		}()
	}
}
