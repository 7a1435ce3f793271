package sim

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
)

func generate(t *testing.T, p Pattern) *Trace {
	t.Helper()
	tr, err := Generate(p, 100, time.Minute, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.validate(); err != nil {
		t.Fatalf("%s: invalid trace: %v", p.Name, err)
	}
	return tr
}

// count returns the arrivals in [from, to) seconds.
func count(tr *Trace, from, to float64) int {
	n := 0
	for _, a := range tr.Arrivals {
		if s := float64(a.At-tr.Start) / 1e6; s >= from && s < to {
			n++
		}
	}
	return n
}

func TestEveryPatternIsDeterministicAndWellFormed(t *testing.T) {
	for _, name := range Patterns() {
		a, b := generate(t, Pattern{Name: name, Seed: 9}), generate(t, Pattern{Name: name, Seed: 9})
		if !slices.Equal(a.Arrivals, b.Arrivals) {
			t.Errorf("%s: same seed, different traffic", name)
		}
		if a.Start != 0 || a.End != int64(10*time.Minute/time.Microsecond) {
			t.Errorf("%s: span [%d, %d), want ten windows from 0", name, a.Start, a.End)
		}
	}
}

func TestSteadyRateIsTwentyPercentOverTheLimit(t *testing.T) {
	tr := generate(t, Pattern{Name: PatternSteady})
	// 1.2 × 100 per minute for 10 minutes: 1200, Poisson noise ±~35.
	if n := len(tr.Arrivals); n < 1100 || n > 1300 {
		t.Fatalf("%d arrivals, want about 1200", n)
	}
}

func TestBoundaryBurstStraddlesOddBoundaries(t *testing.T) {
	tr := generate(t, Pattern{Name: PatternBoundaryBurst})
	if len(tr.Arrivals) != 5*200 {
		t.Fatalf("%d arrivals, want 5 boundaries × 200", len(tr.Arrivals))
	}
	// Spread is W/100 = 0.6s: 100 in [59.4, 60), 100 in [60, 60.6).
	if b, a := count(tr, 59.4, 60), count(tr, 60, 60.6); b != 100 || a != 100 {
		t.Fatalf("around the first boundary: %d before, %d after; want 100 and 100", b, a)
	}
	if n := count(tr, 61, 179); n != 0 {
		t.Fatalf("%d arrivals between bursts", n)
	}
}

func TestSpikeMultipliesTheRateForItsLength(t *testing.T) {
	tr := generate(t, Pattern{Name: PatternSpike, SpikeAt: Duration(4 * time.Minute), SpikeLength: Duration(time.Minute)})
	in, before := count(tr, 240, 300), count(tr, 180, 240)
	if in < 8*before || in > 12*before {
		t.Fatalf("%d in the spike minute, %d in the minute before: want about ten times", in, before)
	}
}

func TestDiurnalPeaksHalfwayThroughThePeriod(t *testing.T) {
	tr := generate(t, Pattern{Name: PatternDiurnal})
	low, high := count(tr, 0, 60), count(tr, 270, 330)
	if high < 4*low {
		t.Fatalf("first minute %d, middle minute %d: want a 0.2 to 1.8 swing", low, high)
	}
}

func TestManyKeysIsSkewed(t *testing.T) {
	tr := generate(t, Pattern{Name: PatternManyKeys})
	if len(tr.Keys) != 1000 {
		t.Fatalf("%d keys, want the default 1000", len(tr.Keys))
	}
	per := make([]int, len(tr.Keys))
	for _, a := range tr.Arrivals {
		per[a.Key]++
	}
	if per[0] < 50*per[500] || per[0] < 1000 {
		t.Fatalf("hottest key %d, median key %d: want Zipf skew", per[0], per[500])
	}
	uniform := generate(t, Pattern{Name: PatternSteady, Keys: 10})
	per = make([]int, 10)
	for _, a := range uniform.Arrivals {
		per[a.Key]++
	}
	if slices.Min(per) < slices.Max(per)/2 {
		t.Fatalf("uniform keys got %v", per)
	}
}

// A spike that starts when the traffic has ended is not a spike pattern:
// it is refused rather than replayed as steady traffic under its name.
func TestSpikeOutsideTheTrafficIsRefused(t *testing.T) {
	for _, name := range []string{PatternSpike, PatternRetryStorm} {
		for _, at := range []time.Duration{10 * time.Minute, 20 * time.Minute} {
			if _, err := Generate(Pattern{Name: name, SpikeAt: Duration(at)}, 100, time.Minute, 0); err == nil {
				t.Errorf("%s at %v of 10m: generated", name, at)
			}
		}
		// The last minute still holds it.
		tr := generate(t, Pattern{Name: name, SpikeAt: Duration(9 * time.Minute)})
		if in, before := count(tr, 540, 600), count(tr, 480, 540); in < 5*before {
			t.Errorf("%s at 9m: %d in the spike minute, %d before", name, in, before)
		}
	}
}

// A pattern of millions of keys and a handful of requests is a small
// simulation: the trace holds only the keys that sent traffic, since every
// replay keeps a state per key of the trace (a web request of 10,000,000
// keys at 1e-6 requests a second took 3.4 GB and 5 s to replay 100).
func TestManyKeysFewRequestsHoldsOnlyTheKeysThatSent(t *testing.T) {
	p := Pattern{Name: PatternSteady, Keys: 10_000_000, Rate: 1e-6, Duration: Duration(10 * time.Second), Seed: 3}
	tr := generate(t, p)
	if len(tr.Arrivals) == 0 || len(tr.Keys) > len(tr.Arrivals) {
		t.Fatalf("%d keys for %d arrivals", len(tr.Keys), len(tr.Arrivals))
	}
	seen := map[string]bool{}
	for _, a := range tr.Arrivals {
		name := tr.Keys[a.Key]
		var n int
		if _, err := fmt.Sscanf(name, "key-%d", &n); err != nil || n < 0 || n >= p.Keys {
			t.Fatalf("arrival of key %q", name)
		}
		seen[name] = true
	}
	if len(seen) != len(tr.Keys) {
		t.Errorf("%d keys named, %d sent traffic", len(tr.Keys), len(seen))
	}
	res := simulate(t, Request{Pattern: &p, Limit: "10/1s", MaxArrivals: 200_000, MaxWork: 10_000_000})
	if res.Keys != len(seen) || res.Requests != len(tr.Arrivals) {
		t.Errorf("simulated %d keys, %d requests; the trace has %d, %d", res.Keys, res.Requests, len(seen), len(tr.Arrivals))
	}
}

// A spike far above its share of the time costs its requests, not its
// factor: thinning at the peak rate drew a candidate per 1e-9 s for all
// 100 s (1e11 draws, past any deadline, for 1100 requests).
func TestAHugeShortSpikeIsDrawnInItsRequestsTime(t *testing.T) {
	p := Pattern{Name: PatternSpike, Rate: 1, SpikeFactor: 1e9, SpikeAt: Duration(50 * time.Second), SpikeLength: Duration(time.Microsecond),
		Duration: Duration(100 * time.Second)}
	done := make(chan *Trace, 1)
	go func() {
		tr, err := Generate(p, 10, time.Second, 200_000)
		if err != nil {
			t.Error(err)
		}
		done <- tr
	}()
	var tr *Trace
	select {
	case tr = <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("still generating after 20 s")
	}
	if tr == nil {
		return
	}
	in := 0
	for _, a := range tr.Arrivals {
		if a.At == 50_000_000 {
			in++
		}
	}
	// 1000 expected in the spike, 100 around it.
	if in < 850 || in > 1150 || len(tr.Arrivals)-in < 60 || len(tr.Arrivals)-in > 140 {
		t.Errorf("%d arrivals in the spike, %d outside", in, len(tr.Arrivals)-in)
	}
}

// Drawn piece by piece (its thinning would pass the bound), a spike keeps
// its rates: ten times the rate within it.
func TestASpikeDrawnInPiecesKeepsItsRates(t *testing.T) {
	p := Pattern{Name: PatternSpike, SpikeAt: Duration(4 * time.Minute), SpikeLength: Duration(time.Minute)}
	tr, err := Generate(p, 100, time.Minute, 3000) // 12,000 candidates, 2,280 requests expected
	if err != nil {
		t.Fatal(err)
	}
	in, before, after := count(tr, 240, 300), count(tr, 0, 240)/4, count(tr, 300, 600)/5
	if in < 8*before || in > 12*before || after < before*8/10 || after > before*12/10 {
		t.Fatalf("%d in the spike minute, %d a minute before it, %d after", in, before, after)
	}
}

// A spike longer than anything a Duration holds past its start lasts to
// the end of the traffic: its end is not SpikeAt + SpikeLength overflowed
// to a negative time, which dropped the spike (drawn by thinning) or
// generated arrivals before 0 (drawn piece by piece).
func TestSpikeLongerThanTheLargestDurationLastsToTheEnd(t *testing.T) {
	const longest = Duration(1<<63 - 1)
	// Thinning: 1 request a second, 10 times that from 60 s to the end.
	tr, err := Generate(Pattern{Name: PatternSpike, Rate: 1, Duration: Duration(10 * time.Minute),
		SpikeAt: Duration(time.Minute), SpikeLength: longest, Seed: 3}, 100, time.Minute, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.validate(); err != nil {
		t.Fatal(err)
	}
	// 540 s at 10 a second: about 5400, Poisson noise ±~75.
	if n := count(tr, 60, 600); n < 5000 || n > 5800 {
		t.Errorf("%d arrivals in the spike, want about 5400", n)
	}
	// Piece by piece (a factor too large to thin): every arrival inside the traffic.
	// 1.6e-5 a second over the last 365 days: about 500.
	tr, err = Generate(Pattern{Name: PatternSpike, Rate: 1e-9, SpikeFactor: 16000, Duration: Duration(3650 * 24 * time.Hour),
		SpikeAt: Duration(3285 * 24 * time.Hour), SpikeLength: longest, Seed: 3}, 100, time.Minute, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.validate(); err != nil {
		t.Fatal(err)
	}
	if n := count(tr, 3285*86400, 3650*86400); n < 400 || n > 600 {
		t.Errorf("%d arrivals in the spike, want about 500", n)
	}
}

// A pattern's cost above what a request may spend is refused as the
// pattern's, by Validate, before any request is drawn: it was refused
// after generating, as "arrival 0: cost …", naming no parameter.
func TestPatternCostAboveMaxQuantityIsRefused(t *testing.T) {
	req := Request{Limit: "10/1s", Pattern: &Pattern{Name: PatternSteady, Cost: sluice.MaxQuantity + 1}}
	if err := req.Validate(); err == nil || !strings.HasPrefix(err.Error(), "pattern steady: cost ") {
		t.Errorf("Validate: %v, want the pattern's cost refused", err)
	}
}
