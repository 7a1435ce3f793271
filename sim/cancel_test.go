package sim

import (
	"context"
	"errors"
	"testing"
	"time"
)

// A simulation canceled while its traffic is drawn stops drawing: Ctrl-C
// on `sluice simulate`, or the designer's deadline, ends it within
// moments, not after the millions of requests it was drawing. Drawing
// looks at its context at least once every drawsPerCheck arrivals (a few
// milliseconds of work) and stops at the first look that finds it done
// (reading the error once more to return it).
// Counted by a context that is done after a given number of looks, so
// that no clock, and no load on the machine, decides the outcome.
func TestGenerationStopsWhenItsContextIsDone(t *testing.T) {
	patterns := func(d time.Duration) []Pattern {
		return []Pattern{
			{Name: PatternSteady, Rate: 10, Keys: 1000, Duration: Duration(d)},
			{Name: PatternDiurnal, Rate: 10, Keys: 1000, Duration: Duration(d)},
			// Drawn piece by piece: a spike far above its share of the time.
			{Name: PatternSpike, Rate: 0.01, Keys: 1000, Duration: Duration(d), SpikeFactor: 1e4},
		}
	}
	// Millions of requests: done at the fourth look, it must stop there,
	// not draw on to the next.
	for _, p := range patterns(800 * time.Second) {
		ctx := &doneAfter{Context: context.Background(), after: 3}
		_, err := generateFor(ctx, p, rate{q: 100, w: time.Minute}, 0)
		if !errors.Is(err, context.Canceled) || ctx.looks > ctx.after+2 {
			t.Errorf("%s: done at look %d: %v after %d looks, want context.Canceled at that look", p.Name, ctx.after+1, err, ctx.looks)
		}
	}
	// Never done: it looks at least once per drawsPerCheck arrivals drawn.
	for _, p := range patterns(40 * time.Second) {
		ctx := &doneAfter{Context: context.Background(), after: 1 << 62}
		tr, err := generateFor(ctx, p, rate{q: 100, w: time.Minute}, 0)
		if err != nil {
			t.Fatalf("%s: %v", p.Name, err)
		}
		if n := len(tr.Arrivals); n < 4*drawsPerCheck || ctx.looks < n/drawsPerCheck {
			t.Errorf("%s: %d looks at the context while drawing %d arrivals, want at least one per %d", p.Name, ctx.looks, n, drawsPerCheck)
		}
	}
}

// doneAfter is a context whose Err is context.Canceled from its look
// after+1 on, counting the looks.
type doneAfter struct {
	context.Context
	looks, after int
}

func (c *doneAfter) Err() error {
	c.looks++
	if c.looks > c.after {
		return context.Canceled
	}
	return nil
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
