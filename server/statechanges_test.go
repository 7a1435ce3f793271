package server

import (
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
)

// The reload log says which limits keep their clients' state and which
// start afresh.
func TestStateChangesOfAReload(t *testing.T) {
	plan := func(ls ...sluice.Limit) *httplimit.Policy {
		return &httplimit.Policy{Plans: []*httplimit.Plan{{Name: "free", Limits: ls}}}
	}
	minute := sluice.FixedWindow(3, time.Minute).Named("per-minute")
	for _, c := range []struct {
		name string
		cur  *httplimit.Policy
		want string // a part of the only line; "" for none
	}{
		{"quantity", plan(sluice.FixedWindow(5, time.Minute).Named("per-minute")), ""},
		{"algorithm", plan(sluice.GCRA(3, time.Minute).Named("per-minute")), "changes algorithm from fixed-window to gcra: every client's state of it starts afresh"},
		{"renamed with its id", plan(sluice.FixedWindow(3, time.Minute).Named("minutely").WithID("per-minute")), `"per-minute" is renamed "minutely" and keeps its state`},
		{"renamed without an id", plan(sluice.FixedWindow(3, time.Minute).Named("minutely")), `"minutely" is new and starts afresh`},
	} {
		got := stateChanges(plan(minute), c.cur)
		switch {
		case c.want == "" && len(got) != 0:
			t.Errorf("%s: %q, want nothing", c.name, got)
		case c.want != "" && (len(got) != 1 || !strings.Contains(got[0], c.want)):
			t.Errorf("%s: %q, want one line with %q", c.name, got, c.want)
		}
	}
}
