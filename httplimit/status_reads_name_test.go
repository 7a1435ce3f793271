package httplimit_test

import (
	"crypto/sha256"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
)

// StatusHandler counts a client's reads of its standing under the client's
// key as a limit named "status-reads": a plan's limit of that ID would
// share that state (a client reading its standing would spend it), so
// Validate refuses it, in a configured plan or a key's own.
func TestStatusReadsIsNoLimitsName(t *testing.T) {
	lim := func(l sluice.Limit) []sluice.Limit { return []sluice.Limit{l} }
	cases := map[string]httplimit.Options{
		"a plan's limit": {Plans: []*httplimit.Plan{{Name: "free", Limits: lim(sluice.FixedWindow(5, time.Minute).Named("status-reads"))}}},
		"a plan's limit of that ID": {Plans: []*httplimit.Plan{{Name: "free",
			Limits: lim(sluice.FixedWindow(5, time.Minute).Named("reads").WithID("status-reads"))}}},
		"a key's own plan's limit": {Plans: []*httplimit.Plan{{Name: "free", Limits: lim(sluice.FixedWindow(5, time.Minute))}},
			Keys: []httplimit.Key{{Name: "k", SHA256: sha256.Sum256([]byte("k")),
				Plan: &httplimit.Plan{Name: "own", Limits: lim(sluice.FixedWindow(5, time.Minute).Named("status-reads"))}}}},
	}
	for name, o := range cases {
		if err := o.Validate(); err == nil || !strings.Contains(err.Error(), `"status-reads"`) {
			t.Errorf("%s named status-reads: Validate = %v, want it refused", name, err)
		}
	}
}
