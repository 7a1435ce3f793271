package sim

import (
	"context"
	"errors"
	"testing"
	"time"
)

// A simulation canceled while its traffic is drawn stops drawing: Ctrl-C
// on `sluice simulate`, or the designer's deadline, ends it within
// moments, not after the millions of requests it was drawing.
func TestGenerationStopsWhenItsContextIsDone(t *testing.T) {
	for _, p := range []Pattern{
		{Name: PatternSteady, Rate: 10, Keys: 1000, Duration: Duration(800 * time.Second)},
		{Name: PatternDiurnal, Rate: 10, Keys: 1000, Duration: Duration(800 * time.Second)},
		// Drawn piece by piece: a spike far above its share of the time.
		{Name: PatternSpike, Rate: 0.01, Keys: 1000, Duration: Duration(800 * time.Second), SpikeFactor: 1e4},
	} {
		name := p.Name
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(20*time.Millisecond, cancel)
		start := time.Now()
		_, err := generateFor(ctx, p, rate{q: 100, w: time.Minute}, 0)
		took := time.Since(start)
		cancel()
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s: drawing millions of requests, canceled after 20 ms gave %v after %v, want context.Canceled", name, err, took)
		}
		if took > 2*time.Second {
			t.Errorf("%s: canceled after 20 ms, the drawing went on for %v", name, took)
		}
	}
}

// Simulate looks at its context between its phases: drawing the traffic,
// estimating its work, and replaying it.
func TestSimulateOfADoneContextEndsBeforeReplaying(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Simulate(ctx, Request{Pattern: &Pattern{Name: PatternSteady, Rate: 10, Keys: 10, Duration: Duration(time.Minute)}, Limit: "100/1m", MaxWork: 1 << 40})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Simulate with a canceled context: %v, want context.Canceled", err)
	}
}
