package sim

import (
	"context"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
)

// millionTrace is 1,000,000 requests over 10,000 keys in ten minutes, key
// popularity Zipf-skewed (a few keys far over 100/1m, most well under it).
func millionTrace(b *testing.B) *Trace {
	b.Helper()
	p := Pattern{Name: PatternManyKeys, Keys: 10_000, Rate: 1_000_000.0 / 10_000 / 600, Duration: Duration(10 * time.Minute), Seed: 1}
	tr, err := Generate(p, 100, time.Minute, 0)
	if err != nil {
		b.Fatal(err)
	}
	return tr
}

// BenchmarkSimulateMillion replays 1,000,000 requests over 10,000 keys
// through all six algorithms (and compares each with the reference): one
// op is the whole simulation. The trace is generated once, outside the timer.
func BenchmarkSimulateMillion(b *testing.B) {
	tr := millionTrace(b)
	cs, err := Contenders(sluice.Algorithms(), 100, time.Minute, 0, 6*time.Second)
	if err != nil {
		b.Fatal(err)
	}
	cfg := Config{Quantity: 100, Window: time.Minute, Contenders: cs}
	b.ReportAllocs()
	cpu0 := cpuTime(b)
	b.ResetTimer()
	for b.Loop() {
		res, err := Run(context.Background(), tr, cfg)
		if err != nil {
			b.Fatal(err)
		}
		if res.Requests < 990_000 || res.Keys < 9_000 {
			b.Fatalf("trace of %d requests over %d keys", res.Requests, res.Keys)
		}
	}
	b.ReportMetric(float64(len(tr.Arrivals)), "requests/op")
	// The process's CPU time per op: on a machine shared with other work
	// the wall time (ns/op) can be many times the work done.
	b.ReportMetric((cpuTime(b)-cpu0).Seconds()/float64(b.N), "cpu-s/op")
}
