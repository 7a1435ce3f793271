package httplimit_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
)

// TestARuleLimitMayNotTakeTheNameOfAnotherLimit: a rule's limit is named
// "<rule>.<limit>", and a plan's, a global or another rule's limit may be
// named so too. Under one name two limits would share a RateLimit item and a
// violated policy; a rule keyed by the client and a plan limit of its name
// would even be one state, which the store refuses to charge twice in one
// call, so that every request of the plan went undecided (and, by default,
// unlimited). Validate refuses the name.
func TestARuleLimitMayNotTakeTheNameOfAnotherLimit(t *testing.T) {
	uploads := httplimit.Rule{Name: "uploads", Limits: []sluice.Limit{sluice.FixedWindow(3, time.Minute)}}
	for _, c := range []struct {
		name string
		o    httplimit.Options
		want string
	}{
		{"a plan's limit", httplimit.Options{
			Plans: []*httplimit.Plan{{Name: "free", Limits: []sluice.Limit{sluice.FixedWindow(10, time.Minute).Named("uploads.per-minute")}}},
			Rules: []httplimit.Rule{uploads}},
			`Options.Rules[0].Limits[0]: "uploads.per-minute" is already the name of a limit of plan free`},
		{"a listed key's own plan's limit", httplimit.Options{
			Plans: []*httplimit.Plan{{Name: "free", Limits: []sluice.Limit{sluice.PerMinute(10)}}},
			Keys: []httplimit.Key{{Name: "k", SHA256: [32]byte{1}, Plan: &httplimit.Plan{Name: "own",
				Limits: []sluice.Limit{sluice.FixedWindow(10, time.Minute).Named("uploads.per-minute")}}}},
			Rules: []httplimit.Rule{uploads}},
			`"uploads.per-minute" is already the name of a limit of plan own`},
		{"a global limit", httplimit.Options{
			Plans:  []*httplimit.Plan{{Name: "free", Limits: []sluice.Limit{sluice.PerMinute(10)}}},
			Global: []sluice.Limit{sluice.FixedWindow(100, time.Minute).Named("uploads.per-minute")},
			Rules:  []httplimit.Rule{uploads}},
			`"uploads.per-minute" is already the name of a global limit`},
		{"another rule's limit", httplimit.Options{
			Plans: []*httplimit.Plan{{Name: "free", Limits: []sluice.Limit{sluice.PerMinute(10)}}},
			Rules: []httplimit.Rule{
				{Name: "a", Limits: []sluice.Limit{sluice.FixedWindow(3, time.Minute).Named("b.c")}},
				{Name: "a.b", Limits: []sluice.Limit{sluice.FixedWindow(5, time.Minute).Named("c")}}}},
			`Options.Rules[1].Limits[0]: "a.b.c" is already the name of a limit of rule a`},
		{"a plan's limit by its ID", httplimit.Options{
			Plans: []*httplimit.Plan{{Name: "free", Limits: []sluice.Limit{sluice.FixedWindow(10, time.Minute).WithID("uploads.per-minute")}}},
			Rules: []httplimit.Rule{uploads}},
			`"uploads.per-minute" is already the ID of a limit of plan free`},
	} {
		err := c.o.Validate()
		var fe *httplimit.FieldError
		if err == nil || !errors.As(err, &fe) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}
