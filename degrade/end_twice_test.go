package degrade_test

import (
	"testing"

	"github.com/sluice-dev/sluice/degrade"
)

// A request ended twice (a handler's deferred end and an explicit one) is
// one request: it leaves the in-flight count once and is counted once.
func TestEndingARequestTwiceEndsItOnce(t *testing.T) {
	var m degrade.Monitor
	end := m.Begin()
	other := m.Begin()
	end(500)
	end(500)
	if n := m.InFlight(); n != 1 {
		t.Errorf("in flight %d after one of two requests ended twice, want 1", n)
	}
	other(200)
	if s := m.Sample(); s.Answers != 2 || s.ErrorRate != 0.5 {
		t.Errorf("answers %d, error rate %v; want 2 answers, one failed", s.Answers, s.ErrorRate)
	}
}
