package sim

import (
	"fmt"
	"time"

	"github.com/sluice-dev/sluice"
)

// An Arrival is one request of a Trace.
type Arrival struct {
	// At is when the request arrives, in µs since sluice.Epoch.
	At int64
	// Key indexes Trace.Keys: who the request is counted against.
	Key int32
	// Cost is the units the request spends, ≥ 0 (0 is a peek).
	Cost int64
}

// A Trace is the traffic a simulation replays: arrivals in time order, each
// counted against one of Keys. Build one with Generate or ReadCSV.
type Trace struct {
	// Source describes where the trace came from, e.g. "pattern steady" or
	// "trace requests.csv"; it labels reports and charts.
	Source string
	// Start is the trace's origin in µs since sluice.Epoch: the 0 of chart
	// axes and of reported offsets. It is ≤ the first arrival.
	Start int64
	// End is the end of the simulated span in µs since sluice.Epoch,
	// exclusive: > the last arrival. Retries due at or after End are not sent.
	End int64
	// Keys names the keys; an Arrival's Key is an index into it.
	Keys []string
	// Arrivals is the traffic, sorted by At (ties keep their order).
	Arrivals []Arrival
}

// Duration returns the span the trace covers, End - Start.
func (t *Trace) Duration() time.Duration {
	return time.Duration(t.End-t.Start) * time.Microsecond
}

// Units returns the total cost of all arrivals.
func (t *Trace) Units() int64 {
	var n int64
	for i := range t.Arrivals {
		n += t.Arrivals[i].Cost
	}
	return n
}

// validate reports a trace that Run cannot replay.
func (t *Trace) validate() error {
	if len(t.Arrivals) == 0 {
		return fmt.Errorf("trace has no requests")
	}
	if len(t.Keys) == 0 {
		return fmt.Errorf("trace has no keys")
	}
	if t.End <= t.Start {
		return fmt.Errorf("trace ends (%d µs) before it starts (%d µs)", t.End, t.Start)
	}
	prev := t.Start
	for i := range t.Arrivals {
		a := &t.Arrivals[i]
		switch {
		case a.At < prev:
			return fmt.Errorf("arrival %d at %d µs is out of order (sort arrivals by time)", i, a.At)
		case a.At >= t.End:
			return fmt.Errorf("arrival %d at %d µs is not before the trace end %d µs", i, a.At, t.End)
		case a.Key < 0 || int(a.Key) >= len(t.Keys):
			return fmt.Errorf("arrival %d: key index %d out of range [0, %d)", i, a.Key, len(t.Keys))
		case a.Cost < 0 || a.Cost > sluice.MaxQuantity:
			return fmt.Errorf("arrival %d: cost %d must be in [0, %d]", i, a.Cost, int64(sluice.MaxQuantity))
		}
		prev = a.At
	}
	return nil
}
