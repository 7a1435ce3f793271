package config_test

import (
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/config"
)

// A degradation level's leave threshold above its enter threshold would
// leave the level while the signal still enters it: refused at the leave
// threshold. Equal, lower and left-out ones load.
func TestDegradationLeaveAboveEnterIsRefused(t *testing.T) {
	const plans = "plans:\n  free: {limits: [{name: m, algorithm: gcra, quantity: 10, window: 1m}]}\n"
	for _, c := range []struct{ levels, want string }{
		{"{high: {enter: {in_flight: 500}, leave: {in_flight: 5000}}}",
			`d.yaml:3:75: degradation.levels.high.leave.in_flight: 5000 is above enter's 500`},
		{"{elevated: {enter: {p99: 2s, cpu: 0.9}, leave: {p99: 1s, cpu: 0.95}}}",
			`d.yaml:3:85: degradation.levels.elevated.leave.cpu: 0.95 is above enter's 0.9`},
		{"{critical: {enter: {sched_p99: 20ms}, leave: {sched_p99: 50ms}}}",
			`d.yaml:3:80: degradation.levels.critical.leave.sched_p99: 50ms is above enter's 20ms`},
		{"{high: {enter: {in_flight: 500}, leave: {in_flight: 500}}}", ""},
		{"{high: {enter: {in_flight: 500}, leave: {in_flight: 300, cpu: 0.5}}}", ""},
		{"{high: {enter: {in_flight: 500}}}", ""},
	} {
		_, err := config.Parse("d.yaml", []byte(plans+"degradation: {levels: "+c.levels+"}\n"))
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.levels, err)
		case c.want != "" && (err == nil || !strings.HasPrefix(err.Error(), c.want)):
			t.Errorf("%s: %v, want %s", c.levels, err, c.want)
		}
	}
}

// degradation.interval is how often the server samples its signals (and
// wakes to do so): one below 10ms would keep a core busy sampling, one
// above a minute would leave a level behind its signals for that long.
// Either is refused at its line.
func TestDegradationIntervalIsBounded(t *testing.T) {
	const plans = "plans:\n  free: {limits: [{name: m, algorithm: gcra, quantity: 10, window: 1m}]}\n"
	for _, c := range []struct{ interval, want string }{
		{"1ns", `i.yaml:3:25: degradation.interval: 1ns: give an interval from 10ms to 1m`},
		{"1500us", `i.yaml:3:25: degradation.interval: 1.5ms: give an interval from 10ms to 1m`},
		{"2h", `i.yaml:3:25: degradation.interval: 2h0m0s: give an interval from 10ms to 1m`},
	} {
		_, err := config.Parse("i.yaml", []byte(plans+"degradation: {interval: "+c.interval+"}\n"))
		if err == nil || err.Error() != c.want {
			t.Errorf("%s:\n%v\nwant exactly:\n%s", c.interval, err, c.want)
		}
	}
	for _, ok := range []string{"10ms", "25ms", "1s", "1m"} {
		c, err := config.Parse("i.yaml", []byte(plans+"degradation: {interval: "+ok+"}\n"))
		if err != nil {
			t.Errorf("%s: %v", ok, err)
		} else if want, _ := config.ParseDuration(ok); c.Degradation.Interval != want {
			t.Errorf("%s: interval %v", ok, c.Degradation.Interval)
		}
	}
}

// degradation.min_answers is how many answers an interval must have for
// its p99 and error rate to count: 20 when left out (the controller's
// default), at least 1.
func TestDegradationMinAnswers(t *testing.T) {
	const plans = "plans:\n  free: {limits: [{name: m, algorithm: gcra, quantity: 10, window: 1m}]}\n"
	c, err := config.Parse("a.yaml", []byte(plans+"degradation: {min_answers: 5}\n"))
	if err != nil || c.Degradation.Controller.MinAnswers != 5 {
		t.Fatalf("min_answers 5: %v, %+v", err, c)
	}
	if c, err = config.Parse("a.yaml", []byte(plans+"degradation: {interval: 1s}\n")); err != nil || c.Degradation.Controller.MinAnswers != 0 {
		t.Fatalf("left out: %v, MinAnswers %d, want 0 (the controller's default)", err, c.Degradation.Controller.MinAnswers)
	}
	for _, bad := range []string{"0", "-1", "1.5", "many"} {
		if _, err := config.Parse("a.yaml", []byte(plans+"degradation: {min_answers: "+bad+"}\n")); err == nil || !strings.Contains(err.Error(), "a.yaml:3:28: degradation.min_answers") {
			t.Errorf("min_answers %s: %v, want an error at its line", bad, err)
		}
	}
}

// A degradation class is a ServeMux of its patterns: one listed twice, or
// two that match the same requests, is refused at its line (the server
// could not build the class), and so is a pattern in two classes, whose
// requests would be treated as both.
func TestDegradationClassPatternsAreDistinct(t *testing.T) {
	const plans = "plans:\n  free: {limits: [{name: m, algorithm: gcra, quantity: 10, window: 1m}]}\n"
	for _, c := range []struct{ classes, want string }{
		{`{expensive: ["POST /a", "POST /a"]}`, `d.yaml:3:48: degradation.classes.expensive[1]: "POST /a" conflicts with "POST /a", listed before it: a ServeMux cannot hold both`},
		{`{health: ["GET /h/{x}", "GET /h/{y}"]}`, `d.yaml:3:48: degradation.classes.health[1]: "GET /h/{y}" conflicts with "GET /h/{x}", listed before it: a ServeMux cannot hold both`},
		{`{expensive: ["POST /a"], critical: ["POST /a"]}`, `d.yaml:3:60: degradation.classes.critical[0]: "POST /a" is in expensive already`},
	} {
		_, err := config.Parse("d.yaml", []byte(plans+"degradation: {classes: "+c.classes+"}\n"))
		if err == nil || err.Error() != c.want {
			t.Errorf("%s:\n%v\nwant exactly:\n%s", c.classes, err, c.want)
		}
	}
	if _, err := config.Parse("d.yaml", []byte(plans+`degradation: {classes: {expensive: ["POST /a", "/a", "POST /a/{x}"]}}`+"\n")); err != nil {
		t.Errorf("patterns of one class that differ: %v", err)
	}
}
