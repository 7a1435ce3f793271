package server_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/sim"
)

// A pattern sized by default that the designer fits to fewer windows keeps
// the timing the request set itself, shortened with the duration (see
// TestShortenScalesTheTimingAPatternSets): the run is the 200 the designer
// promises for such a pattern, never a 400 about a duration the caller did
// not set, and its note says how the timing differs from the pattern as
// asked.
func TestDesignerFittedPatternKeepsTheTimingItSets(t *testing.T) {
	// A fitted run is near the designer's work bound, which -race on a
	// loaded machine did not finish within the default 10 s (a 503).
	f := newFixture(t, testConfig+"designer:\n  timeout: 2m\n")
	for _, c := range []struct {
		body string
		want []string // in the note
	}{
		{`{"pattern":{"name":"spike","spike_at":"8m"},"limit":"10000/1m","algorithms":["fixed-window"]}`,
			[]string{"windows (not 10)", "with its spike at", "(not 8m)"}},
		{`{"pattern":{"name":"retry-storm","spike_at":"9m","spike_length":"50s"},"limit":"10000/1m","algorithms":["fixed-window"]}`,
			[]string{"windows (not 10)", "with its spike at", "(not 9m)", "with its spike lasting", "(not 50s)"}},
		{`{"pattern":{"name":"diurnal","period":"5m"},"limit":"20000/1m","algorithms":["fixed-window"]}`,
			[]string{"windows (not 10)", "with its period", "(not 5m)"}},
	} {
		r := f.do(t, "POST", "/designer/run", c.body, nil)
		body := readAll(t, r)
		if r.StatusCode != 200 {
			t.Errorf("%s: %d %s; want it fitted and run", c.body, r.StatusCode, strings.TrimSpace(body))
			continue
		}
		var got struct {
			Result struct {
				Duration sim.Duration `json:"duration"`
			} `json:"result"`
			Note string `json:"note"`
		}
		if err := json.Unmarshal([]byte(body), &got); err != nil {
			t.Fatal(err)
		}
		if got.Result.Duration.D() >= 10*time.Minute {
			t.Errorf("%s: replayed over %v: not fitted", c.body, got.Result.Duration)
		}
		for _, w := range c.want {
			if !strings.Contains(got.Note, w) {
				t.Errorf("%s: note %q, want it to say %q", c.body, got.Note, w)
			}
		}
	}
}
