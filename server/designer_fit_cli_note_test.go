package server

import (
	"errors"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/sim"
)

// A fitted run's note says whether `sluice simulate`, with its default
// bounds (sim.DefaultMaxArrivals requests and -max-work
// sim.DefaultMaxWork), replays the pattern as asked: "replays it whole"
// only when it does; above its work bound, how to run it anyway (-max-work
// 0); above its requests, that it does not. Steady at 800000/1m is 9.6
// million requests, within the CLI's requests, whose exact log sums up to
// 800,000 entries a decision: above its default work.
func TestFitNoteSaysWhatSluiceSimulateReplays(t *testing.T) {
	limits := designerLimits{}.withDefaults()
	for _, c := range []struct {
		limit string
		want  string
	}{
		{"20000/1m", "sluice simulate replays it whole"},
		{"800000/1m", "above the 1,000,000,000 decisions of work sluice simulate runs by default (use -max-work 0)"},
		{"1000000/1s", "above the 10,000,000 requests sluice simulate replays too"},
	} {
		asked := sim.Request{Pattern: &sim.Pattern{Name: sim.PatternSteady}, Limit: c.limit, Seed: 1,
			MaxArrivals: limits.maxArrivals, MaxWork: limits.maxWork}
		fitted, err := fitToBounds(asked)
		if err != nil {
			t.Fatalf("%s: not fitted: %v", c.limit, err)
		}
		note := fitNote(asked, fitted, limits)
		t.Logf("%s: %s", c.limit, note)
		if !strings.Contains(note, c.want) {
			t.Errorf("%s: note %q, want it to say %q", c.limit, note, c.want)
		}
		// What `sluice simulate -pattern steady -limit …` runs.
		cli := asked
		cli.MaxArrivals, cli.MaxWork = 0, sim.DefaultMaxWork
		var tl *sim.TooLargeError
		if refused := errors.As(cli.Validate(), &tl); refused == strings.Contains(note, "replays it whole") {
			t.Errorf("%s: note %q, but sluice simulate says: %v", c.limit, note, cli.Validate())
		}
	}
}
