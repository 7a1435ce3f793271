package sim

import (
	"fmt"
	"strings"
	"time"

	"github.com/sluice-dev/sluice"
)

// A Contender is one limit a simulation replays the traffic through: one
// row of the result and one line of the chart.
type Contender struct {
	// Label names the row and the chart line; empty means the algorithm's
	// name (e.g. "gcra"). Labels must be unique within a Config.
	Label string
	// Limit is the limit under test. Its quantity and window may differ
	// from the Config's (the designer tries a GCRA of Q−B+1 per W with burst
	// B against a requirement of Q per W).
	Limit sluice.Limit
}

func (c Contender) label() string {
	if c.Label != "" {
		return c.Label
	}
	return c.Limit.Algorithm().String()
}

// Contenders returns one contender per algorithm, all of quantity per
// window: burst (0: quantity) for the bucket algorithms, and maxWait for the
// leaky bucket, which is a queue when maxWait > 0 and otherwise a meter that
// decides exactly as the token bucket does.
func Contenders(algs []sluice.Algorithm, quantity int64, window time.Duration, burst int64, maxWait time.Duration) ([]Contender, error) {
	out := make([]Contender, 0, len(algs))
	for _, a := range algs {
		l, err := LimitFor(a, quantity, window, burst, maxWait)
		if err != nil {
			return nil, err
		}
		out = append(out, Contender{Limit: l})
	}
	return out, nil
}

// LimitFor returns the sluice.Limit of algorithm alg for quantity per
// window, giving burst only to the bucket algorithms and maxWait only to the
// leaky bucket (each 0 for the default), so that one set of parameters
// builds a valid limit for every algorithm.
func LimitFor(alg sluice.Algorithm, quantity int64, window time.Duration, burst int64, maxWait time.Duration) (sluice.Limit, error) {
	l := sluice.NewLimit(alg, quantity, window)
	switch alg {
	case sluice.AlgorithmLeakyBucket:
		l = l.WithBurst(burst).WithMaxWait(maxWait)
	case sluice.AlgorithmTokenBucket, sluice.AlgorithmGCRA:
		l = l.WithBurst(burst)
	}
	return l, l.Err()
}

// ParseAlgorithms parses a comma-separated list of algorithm names (as
// sluice.ParseAlgorithm reads them); "" or "all" means every algorithm.
func ParseAlgorithms(s string) ([]sluice.Algorithm, error) {
	if allAlgorithms([]string{s}) {
		return sluice.Algorithms(), nil
	}
	var out []sluice.Algorithm
	for _, name := range strings.Split(s, ",") {
		a, err := sluice.ParseAlgorithm(strings.TrimSpace(name))
		if err != nil {
			return nil, err
		}
		for _, b := range out {
			if a == b {
				return nil, fmt.Errorf("algorithm %s listed twice", a)
			}
		}
		out = append(out, a)
	}
	return out, nil
}

// allAlgorithms reports whether names, joined, is what ParseAlgorithms
// reads as every algorithm.
func allAlgorithms(names []string) bool {
	s := strings.TrimSpace(strings.Join(names, ","))
	return s == "" || s == "all"
}

// stateBytes returns an algorithm's documented state size per key, in
// bytes; a sliding log's or a concurrency limit's depends on its entries
// (16 bytes each) and is measured instead.
func stateBytes(a sluice.Algorithm) int64 {
	if a == sluice.AlgorithmSlidingCounter {
		return 24
	}
	return 16
}
