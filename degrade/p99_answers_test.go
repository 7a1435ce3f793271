package degrade_test

import (
	"testing"
	"time"

	"github.com/sluice-dev/sluice/degrade"
)

// Of fewer than 100 answers, the nearest-rank p99 (the ⌈0.99·n⌉-th
// smallest) is the slowest: one slow request among a window's 20 to 99
// answers was the window's p99, and entered a level at once, halving every
// client's limits for a dwell. P99 counts from 100 answers (where one slow
// answer is not the p99), or from MinAnswers when that is more; the error
// rate counts from MinAnswers.
func TestP99CountsOnlyWhereOneSlowAnswerIsNotIt(t *testing.T) {
	c := &clock{t: time.Unix(1000, 0)}
	cfg := degrade.Config{MinDwell: 5 * time.Second, Rules: [3]degrade.Rule{{
		Enter: degrade.Thresholds{P99: time.Second, ErrorRate: 0.5},
		Leave: degrade.Thresholds{P99: 500 * time.Millisecond, ErrorRate: 0.1},
	}}}
	ctl := degrade.NewController(cfg, c.now, nil)
	steps := []struct {
		name string
		s    degrade.Signals
		want degrade.Level
	}{
		{"one slow answer of 20", degrade.Signals{P99: 3 * time.Second, Answers: 20}, degrade.Normal},
		{"one slow answer of 99", degrade.Signals{P99: 3 * time.Second, Answers: 99}, degrade.Normal},
		{"half of 20 failed", degrade.Signals{ErrorRate: 0.5, Answers: 20}, degrade.Elevated},
	}
	for _, s := range steps {
		c.advance(time.Second)
		if got := ctl.Update(s.s); got != s.want {
			t.Fatalf("%s: level %v, want %v", s.name, got, s.want)
		}
	}
	// A slow answer among 99 does not hold the level either.
	for range 6 {
		c.advance(time.Second)
		ctl.Update(degrade.Signals{P99: 3 * time.Second, Answers: 99})
	}
	if got := ctl.Level(); got != degrade.Normal {
		t.Fatalf("a dwell of windows of 99 answers, one slow: %v, want Normal", got)
	}
	c.advance(time.Second)
	if got := ctl.Update(degrade.Signals{P99: 3 * time.Second, Answers: 100}); got != degrade.Elevated {
		t.Errorf("a p99 of 100 answers (two slow): %v, want Elevated", got)
	}

	cfg.MinAnswers = 200
	ctl = degrade.NewController(cfg, c.now, nil)
	if got := ctl.Update(degrade.Signals{P99: 3 * time.Second, Answers: 150}); got != degrade.Normal {
		t.Errorf("MinAnswers 200, a p99 of 150 answers: %v, want Normal", got)
	}
	if got := ctl.Update(degrade.Signals{P99: 3 * time.Second, Answers: 200}); got != degrade.Elevated {
		t.Errorf("MinAnswers 200, a p99 of 200 answers: %v, want Elevated", got)
	}
}
