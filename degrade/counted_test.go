package degrade_test

import (
	"testing"
	"time"

	"github.com/sluice-dev/sluice/degrade"
)

// Counted is a window's signals as the controller reads them: its P99 0
// under max(MinAnswers, 100) answers, its ErrorRate 0 under MinAnswers
// outcomes (the larger of its answers and its failures), every other
// signal as it is.
func TestCountedZeroesWhatTooFewAnswersCannotTell(t *testing.T) {
	c := degrade.NewController(degrade.Config{MinAnswers: 20}, nil, nil)
	for _, tc := range []struct {
		name      string
		in        degrade.Signals
		p99       time.Duration
		errorRate float64
	}{
		{"one failed answer", degrade.Signals{P99: time.Second, ErrorRate: 1, Answers: 1, Failures: 1, InFlight: 3, Memory: 0.5}, 0, 0},
		{"20 answers: an error rate, no p99", degrade.Signals{P99: time.Second, ErrorRate: 0.5, Answers: 20, Failures: 10}, 0, 0.5},
		{"late failures count as outcomes", degrade.Signals{ErrorRate: 1, Answers: 2, Failures: 25}, 0, 1},
		{"100 answers: both", degrade.Signals{P99: time.Second, ErrorRate: 0.1, Answers: 100, Failures: 10}, time.Second, 0.1},
	} {
		got := c.Counted(tc.in)
		if got.P99 != tc.p99 || got.ErrorRate != tc.errorRate {
			t.Errorf("%s: p99 %v, error rate %v; want %v, %v", tc.name, got.P99, got.ErrorRate, tc.p99, tc.errorRate)
		}
		if got.InFlight != tc.in.InFlight || got.Memory != tc.in.Memory || got.Answers != tc.in.Answers {
			t.Errorf("%s: the other signals changed: %+v, from %+v", tc.name, got, tc.in)
		}
	}
}
