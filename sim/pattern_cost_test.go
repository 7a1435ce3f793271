package sim

import (
	"context"
	"testing"
	"time"
)

// A pattern's default rate is 20% over the limit in the units the limit
// counts (many-keys: half of it), whatever the cost of its requests:
// 1.2·Q/(W·Cost) requests a second, as BurstSize's default, ⌈Q/Cost⌉, is a
// full window's worth in units. At 100/1m with cost 10 an exact log then
// refuses about 1/6 of the requests, not the 11/12 that 1.2·Q/W requests of
// cost 10 would make it refuse.
func TestDefaultRateIsTwentyPercentOverTheLimitWhateverTheCost(t *testing.T) {
	const q = 100
	w := time.Minute
	for _, c := range []struct {
		pattern string
		cost    int64
		share   float64 // of the limit, in units
	}{
		{PatternSteady, 0, 1.2}, {PatternSteady, 1, 1.2}, {PatternSteady, 10, 1.2}, {PatternSpike, 7, 1.2},
		{PatternManyKeys, 10, 0.5},
	} {
		p := Pattern{Name: c.pattern, Cost: c.cost}.WithDefaults(q, w)
		units := p.Rate * w.Seconds() * float64(p.Cost) // per key and window
		if units < 0.999*c.share*q || units > 1.001*c.share*q {
			t.Errorf("%s at %d/%v with cost %d: the default rate %.3g/s offers %.4g units a window, want %.4g",
				c.pattern, q, w, c.cost, p.Rate, units, c.share*q)
		}
	}
	resp, err := Simulate(context.Background(), Request{Pattern: &Pattern{Name: PatternSteady, Cost: 10},
		Limit: "100/1m", Algorithms: []string{"sliding-window-log"}, Seed: 1, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	r := resp.Result.Algorithms[0]
	if share := float64(r.Rejected) / float64(r.Decisions); share > 0.3 {
		t.Errorf("the exact log refused %d of %d requests (%.0f%%) of traffic 20%% over the limit", r.Rejected, r.Decisions, 100*share)
	}
}
