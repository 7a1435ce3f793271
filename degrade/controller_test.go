package degrade_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/degrade"
)

type clock struct{ t time.Time }

func (c *clock) now() time.Time          { return c.t }
func (c *clock) advance(d time.Duration) { c.t = c.t.Add(d) }

func rules() degrade.Config {
	return degrade.Config{
		MinDwell: 5 * time.Second,
		Rules: [3]degrade.Rule{
			{Enter: degrade.Thresholds{InFlight: 100}, Leave: degrade.Thresholds{InFlight: 60}},
			{Enter: degrade.Thresholds{InFlight: 200, ErrorRate: 0.2}, Leave: degrade.Thresholds{InFlight: 150, ErrorRate: 0.1}},
			{Enter: degrade.Thresholds{InFlight: 400, StoreDown: true}, Leave: degrade.Thresholds{InFlight: 300}},
		},
	}
}

func TestLevelsRiseAtOnceAndFallOneStepAfterTheDwell(t *testing.T) {
	c := &clock{t: time.Unix(1000, 0)}
	var transitions []string
	ctl := degrade.NewController(rules(), c.now, func(from, to degrade.Level, why string) {
		transitions = append(transitions, from.String()+"→"+to.String())
	})
	steps := []struct {
		name  string
		after time.Duration
		s     degrade.Signals
		want  degrade.Level
	}{
		{"calm", 0, degrade.Signals{InFlight: 10}, degrade.Normal},
		{"enter elevated", time.Second, degrade.Signals{InFlight: 120}, degrade.Elevated},
		{"jump straight to critical", time.Second, degrade.Signals{InFlight: 450}, degrade.Critical},
		{"load drops, dwell not over", time.Second, degrade.Signals{InFlight: 10}, degrade.Critical},
		{"dwell over: one step down", 5 * time.Second, degrade.Signals{InFlight: 10}, degrade.High},
		{"one step per dwell", time.Second, degrade.Signals{InFlight: 10}, degrade.High},
		{"between leave and enter: stays (hysteresis)", 5 * time.Second, degrade.Signals{InFlight: 170}, degrade.High},
		{"below high's leave: calm must last the dwell", time.Second, degrade.Signals{InFlight: 90}, degrade.High},
		{"a burst within the calm restarts it", 4 * time.Second, degrade.Signals{InFlight: 160}, degrade.High},
		{"calm again", time.Second, degrade.Signals{InFlight: 90}, degrade.High},
		{"not yet a dwell of calm", 4 * time.Second, degrade.Signals{InFlight: 90}, degrade.High},
		{"a dwell of calm: one step down", time.Second, degrade.Signals{InFlight: 90}, degrade.Elevated},
		{"between elevated's leave and enter: stays", 6 * time.Second, degrade.Signals{InFlight: 80}, degrade.Elevated},
		{"errors alone raise it", time.Second, degrade.Signals{InFlight: 10, ErrorRate: 0.25, Answers: 40}, degrade.High},
		{"a down store is critical", time.Second, degrade.Signals{StoreDown: true}, degrade.Critical},
	}
	for _, s := range steps {
		c.advance(s.after)
		if got := ctl.Update(s.s); got != s.want {
			t.Fatalf("%s: level %v, want %v", s.name, got, s.want)
		}
	}
	want := "[normal→elevated elevated→critical critical→high high→elevated elevated→high high→critical]"
	if got := fmtSlice(transitions); got != want {
		t.Errorf("transitions %s\nwant %s", got, want)
	}
}

// A quiet window's p99 and error rate are one or two requests' own: they
// neither enter a level nor hold one until the window has MinAnswers
// answers (20 by default); in-flight counts in every window.
func TestQuietWindowsJudgeNoLatencyNorErrors(t *testing.T) {
	c := &clock{t: time.Unix(1000, 0)}
	cfg := degrade.Config{Rules: [3]degrade.Rule{{
		Enter: degrade.Thresholds{InFlight: 100, P99: time.Second, ErrorRate: 0.5},
		Leave: degrade.Thresholds{InFlight: 50, P99: 500 * time.Millisecond, ErrorRate: 0.1},
	}}}
	ctl := degrade.NewController(cfg, c.now, nil)
	steps := []struct {
		name string
		s    degrade.Signals
		want degrade.Level
	}{
		{"one failed answer of one", degrade.Signals{ErrorRate: 1, Answers: 1}, degrade.Normal},
		{"one slow answer of 19", degrade.Signals{P99: 3 * time.Second, Answers: 19}, degrade.Normal},
		{"half of 20 failed", degrade.Signals{ErrorRate: 0.5, Answers: 20}, degrade.Elevated},
		{"a quiet window of failures holds nothing", degrade.Signals{ErrorRate: 1, P99: 3 * time.Second, Answers: 3}, degrade.Elevated},
	}
	for _, s := range steps {
		c.advance(time.Second)
		if got := ctl.Update(s.s); got != s.want {
			t.Fatalf("%s: level %v, want %v", s.name, got, s.want)
		}
	}
	c.advance(5 * time.Second) // calm since the quiet window: a dwell
	if got := ctl.Update(degrade.Signals{ErrorRate: 1, Answers: 2}); got != degrade.Normal {
		t.Errorf("after a dwell of quiet windows: %v, want normal", got)
	}
	cfg.MinAnswers = 1
	ctl.SetConfig(cfg)
	if got := ctl.Update(degrade.Signals{ErrorRate: 1, Answers: 1}); got != degrade.Elevated {
		t.Errorf("MinAnswers 1, one failed answer: %v, want elevated", got)
	}
	if got := ctl.Update(degrade.Signals{InFlight: 200}); got != degrade.Elevated {
		t.Errorf("in flight without answers: %v, want elevated", got)
	}
}

func TestPinnedLevelHolds(t *testing.T) {
	c := &clock{t: time.Unix(1000, 0)}
	ctl := degrade.NewController(rules(), c.now, nil)
	ctl.Pin(degrade.High)
	c.advance(time.Minute)
	if got := ctl.Update(degrade.Signals{InFlight: 1000}); got != degrade.High {
		t.Fatalf("pinned level moved to %v", got)
	}
	if st := ctl.State(); !st.Pinned || st.Name != "high" {
		t.Errorf("state %+v", st)
	}
	ctl.Unpin()
	if got := ctl.Update(degrade.Signals{InFlight: 1000}); got != degrade.Critical {
		t.Errorf("unpinned: %v", got)
	}
}

func TestMonitorMeasures(t *testing.T) {
	c := &clock{t: time.Unix(1000, 0)}
	m := degrade.NewMonitorWith(degrade.MonitorConfig{StoreDown: func() bool { return true }, Clock: c.now})
	ends := []func(int){}
	for range 3 {
		ends = append(ends, m.Begin())
	}
	if m.InFlight() != 3 {
		t.Fatalf("in flight %d", m.InFlight())
	}
	c.advance(2 * time.Millisecond)
	ends[0](200)
	ends[1](503)
	s := m.Sample()
	if s.InFlight != 1 || s.ErrorRate != 0.5 || s.Answers != 2 || s.P99 != 2*time.Millisecond || !s.StoreDown {
		t.Errorf("signals %+v", s)
	}
	ends[2](200)
	if s := m.Sample(); s.InFlight != 0 || s.ErrorRate != 0 {
		t.Errorf("next window %+v", s)
	}
}

func fmtSlice(s []string) string {
	out := "["
	for i, x := range s {
		if i > 0 {
			out += " "
		}
		out += x
	}
	return out + "]"
}

func TestMonitorLeavesOutResponsesNotTheUpstreams(t *testing.T) {
	m := degrade.NewMonitor(nil)
	for range 9 {
		m.Begin()(0) // a refusal the server made itself
	}
	m.Begin()(http.StatusBadGateway)
	m.Begin()(http.StatusOK)
	if s := m.Sample(); s.ErrorRate != 0.5 || s.InFlight != 0 {
		t.Errorf("signals %+v, want an error rate of 1/2 over the upstream's 2 answers and nothing in flight", s)
	}
}

// TestMonitorFailedTurnsAnAnswerIntoAFailure: an answer counted as a
// success when it started and marked Failed when its outcome arrived (a
// gRPC status) counts as one failure of the window, not as a second
// request.
func TestMonitorFailedTurnsAnAnswerIntoAFailure(t *testing.T) {
	m := degrade.NewMonitor(nil)
	for range 4 {
		m.Begin()(200)
	}
	m.Failed()
	if s := m.Sample(); s.ErrorRate != 0.25 {
		t.Errorf("error rate %v after 4 answers, one failed later, want 0.25", s.ErrorRate)
	}
}
