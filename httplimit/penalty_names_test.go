package httplimit_test

import (
	"crypto/sha256"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
)

// The penalty box keeps its state under the client's key, named "penalty"
// and "penalty-refusals": a limit of that name in a listed key's own plan
// would share the box's state, as one of a configured plan would, and is
// refused the same way.
func TestPenaltyNamesAreRefusedInAKeysOwnPlan(t *testing.T) {
	for _, name := range []string{"penalty", "penalty-refusals"} {
		own := &httplimit.Plan{Name: "partner", Limits: []sluice.Limit{sluice.FixedWindow(5, time.Minute).Named(name)}}
		o := httplimit.Options{
			Plans:   []*httplimit.Plan{{Name: "free", Limits: []sluice.Limit{sluice.FixedWindow(5, time.Minute)}}},
			Keys:    []httplimit.Key{{Name: "partner", SHA256: sha256.Sum256([]byte("k")), Plan: own}},
			Penalty: httplimit.Penalty{Refusals: 3, Within: time.Minute, For: time.Hour},
		}
		var fe *httplimit.FieldError
		if err := o.Validate(); !errors.As(err, &fe) || !strings.Contains(err.Error(), `a limit is named "`+name+`"`) {
			t.Errorf("a key's own plan with a limit named %s: Validate = %v, want it refused", name, err)
		}
	}
}
