package degrade

import (
	"fmt"
	"strings"
	"sync"
	"time"
)

// Signals is one reading of the server's load. A signal that is not a
// number, or negative, counts as 0, as an unmeasured one does: it never
// reaches a threshold, so it enters no level and holds none. So does a
// CPU that is unknown (CPUUnknown), whatever its value.
type Signals struct {
	// InFlight is the number of requests being served.
	InFlight int64
	// P99 is the 99th percentile of request latency over the last window,
	// by nearest rank: the ⌈0.99·n⌉-th smallest of its n latencies (of
	// 100, the 99th), 0 for a window without any. A Monitor keeps at most
	// 4096 latencies a window: of more, P99 is that of a uniform random
	// sample of 4096 of them, its 4056th smallest, which lies between the
	// window's 98.7th and 99.3rd percentiles about 19 times in 20 (its
	// rank's standard deviation is 0.16 percentile points), and between
	// its 97.5th and 99.7th but for a chance below 1e-10.
	P99 time.Duration
	// ErrorRate is the share of requests that failed (5xx) over the last
	// window, in [0, 1]: its Failures over the larger of its Answers and
	// its Failures; 0 for a window without any.
	ErrorRate float64
	// Answers is the number of requests answered over the last window,
	// whose latencies P99 is of, with those of Abandoned.
	Answers int64
	// Abandoned is the number of requests over the last window whose
	// clients gave up on them before the upstream answered (Monitor's
	// Request.End with status Abandoned): their latencies, lower bounds of
	// the upstream's, are of P99, and P99 counts from Answers and Abandoned
	// together; they are no outcome, of ErrorRate neither.
	Abandoned int64
	// Failures is the number of failures counted over the last window: of
	// its answers, and of answers earlier windows counted whose failure
	// came later (Monitor.Failed), which may outnumber its answers. Zero
	// counts Answers as the outcomes ErrorRate is of.
	Failures int64
	// StoreDown reports that the limiter's store is not reachable.
	StoreDown bool
	// SchedP99 is the 99th percentile of the Go scheduler's latency over the
	// last window: how long runnable goroutines waited for a CPU; 0 for a
	// window of fewer than 100 waits, whose p99 would be the longest.
	SchedP99 time.Duration
	// CPU is the share of the CPU the process may use (its cgroup's quota,
	// or the host's) that was used over the last window, in [0, 1]; under a
	// parent cgroup with a quota (a pod's, a systemd slice's), the larger of
	// that and the parent's use, its other children's included, of its
	// quota; and at least the process's own use of its GOMAXPROCS (at most
	// the cores), all that its Go code can run on at once. A window is at
	// least 100ms long: the kernel counts CPU time in ticks, too coarse to
	// measure a shorter one, so a sample sooner after the last repeats its
	// share.
	CPU float64
	// Memory is the share of the memory limit in use (its cgroup's, or
	// GOMEMLIMIT; 0 without a limit), in [0, 1]; under a parent cgroup with
	// a limit, the larger of that and the parent's use of its limit.
	Memory float64
	// MemoryUnlimited reports that neither a cgroup nor GOMEMLIMIT limits
	// the process's memory: Memory is then 0, which is not a share of
	// anything, and reaches no threshold.
	MemoryUnlimited bool
	// CPUUnknown reports that the CPU share could not be measured over the
	// last window: its cgroup's CPU count, or the host's without one, could
	// not be read. CPU is then 0, which is not its value: it reaches no
	// threshold, so the level is decided, entered and left, by the other
	// signals alone.
	CPUUnknown bool
}

// Thresholds are the values at which a signal counts as high. A zero value
// disables that signal.
type Thresholds struct {
	InFlight  int64
	P99       time.Duration
	ErrorRate float64
	SchedP99  time.Duration
	// CPU and Memory are shares in (0, 1].
	CPU, Memory float64
	// StoreDown, when true, counts a down store as high.
	StoreDown bool
}

// minP99Samples is the fewest samples whose nearest-rank p99 is not their
// slowest: of n < 100, the ⌈0.99·n⌉-th smallest is the n-th.
const minP99Samples = 100

// counted returns s with the signals that too few answers leave
// uncounted at 0: ErrorRate when s has fewer than minAnswers outcomes (the
// larger of its answers and its failures), P99 when it has fewer than
// minAnswers or minP99Samples latencies (its answers and its abandoned
// requests).
func counted(s Signals, minAnswers int64) Signals {
	if s.Answers+s.Abandoned < max(minAnswers, minP99Samples) {
		s.P99 = 0
	}
	if max(s.Answers, s.Failures) < minAnswers {
		s.ErrorRate = 0
	}
	return s
}

// exceeded lists the signals of s at or above t, of those that count
// (counted).
func (t Thresholds) exceeded(s Signals, minAnswers int64) []string {
	if s.CPUUnknown {
		t.CPU = 0
	}
	s = counted(s, minAnswers)
	var why []string
	if t.InFlight > 0 && s.InFlight >= t.InFlight {
		why = append(why, fmt.Sprintf("in-flight %d ≥ %d", s.InFlight, t.InFlight))
	}
	if t.P99 > 0 && s.P99 >= t.P99 {
		why = append(why, fmt.Sprintf("p99 %v ≥ %v of %d answers", s.P99, t.P99, s.Answers+s.Abandoned))
	}
	if outcomes := max(s.Answers, s.Failures); t.ErrorRate > 0 && s.ErrorRate >= t.ErrorRate {
		why = append(why, fmt.Sprintf("error rate %.3f ≥ %.3f of %d answers", s.ErrorRate, t.ErrorRate, outcomes))
	}
	if t.SchedP99 > 0 && s.SchedP99 >= t.SchedP99 {
		why = append(why, fmt.Sprintf("scheduler p99 %v ≥ %v", s.SchedP99, t.SchedP99))
	}
	if t.CPU > 0 && s.CPU >= t.CPU {
		why = append(why, fmt.Sprintf("CPU %.2f ≥ %.2f", s.CPU, t.CPU))
	}
	if t.Memory > 0 && s.Memory >= t.Memory {
		why = append(why, fmt.Sprintf("memory %.2f ≥ %.2f", s.Memory, t.Memory))
	}
	if t.StoreDown && s.StoreDown {
		why = append(why, "store down")
	}
	return why
}

// Rule says when a level is entered and left. A level is entered when any
// signal reaches Enter, and left (one level down) when every signal is below
// Leave. Leave thresholds lower than Enter give hysteresis; a Leave signal
// that is zero, negative, not a number or above its Enter value uses its
// Enter value, so that a signal still at Enter holds the level. A Leave
// signal whose Enter is zero holds a level other signals entered.
type Rule struct {
	Enter, Leave Thresholds
}

func (r Rule) leave() Thresholds {
	l, e := r.Leave, r.Enter
	l.InFlight = leaveAt(l.InFlight, e.InFlight)
	l.P99 = leaveAt(l.P99, e.P99)
	l.ErrorRate = leaveAt(l.ErrorRate, e.ErrorRate)
	l.SchedP99 = leaveAt(l.SchedP99, e.SchedP99)
	l.CPU = leaveAt(l.CPU, e.CPU)
	l.Memory = leaveAt(l.Memory, e.Memory)
	l.StoreDown = l.StoreDown || e.StoreDown
	return l
}

// leaveAt returns the Leave threshold of a signal entered at enter: enter
// when leave cannot hold what enter entered (see Rule), else leave.
func leaveAt[T int64 | time.Duration | float64](leave, enter T) T {
	if enter > 0 && !(leave > 0 && leave <= enter) {
		return enter
	}
	return leave
}

// Config configures a Controller.
type Config struct {
	// Rules for Elevated, High and Critical, in that order. A rule whose
	// Enter thresholds are all zero is never entered by signals.
	Rules [3]Rule
	// MinDwell is the least time a level is held, and the least time its
	// signals must have stayed below its Leave thresholds without a break,
	// before the controller steps down from it; 5s by default (zero or
	// negative). Stepping up is never delayed: overload is answered at
	// once, recovery is cautious. (A level's own shedding lowers the
	// signals it is read from: one calm reading is not recovery.)
	MinDwell time.Duration
	// MinAnswers is the fewest answers (Signals.Answers; for P99, with its
	// Abandoned; for ErrorRate, its Failures when they are more) a window
	// must have for its P99 and ErrorRate to count, entering a level or
	// holding one: of a quiet window's few answers, one slow or failed
	// request would be a p99 or an error rate of its own. 20 by default (0); 1
	// judges the error rate of every window with an answer. P99 counts
	// only from 100 answers, or MinAnswers when that is more: of fewer,
	// the p99 is the slowest answer, and one slow request would be the
	// p99. The other signals count in every window.
	MinAnswers int64
}

// defaultMinDwell is Config.MinDwell's default.
const defaultMinDwell = 5 * time.Second

// defaultMinAnswers is Config.MinAnswers's default.
const defaultMinAnswers = 20

// Controller holds the current level. It is safe for concurrent use. The
// zero Controller has no rules: it stays at Normal unless pinned, holds a
// level it leaves the default MinDwell, and reads time.Now.
type Controller struct {
	cfg      Config
	clock    func() time.Time
	onChange func(from, to Level, why string)

	mu sync.Mutex
	// pending are the transitions not yet reported to onChange, oldest
	// first; reporting is true while a goroutine reports them.
	pending   []transition
	reporting bool
	level     Level
	since     time.Time
	pinned    bool
	last      Signals
	// calmSince is when the signals last went below the current level's
	// Leave thresholds and stayed there; zero while they are not.
	calmSince time.Time
	// reconfigured is closed, and replaced, by SetConfig (Reconfigured);
	// nil until Reconfigured asks for it.
	reconfigured chan struct{}
}

// NewController returns a controller at Normal. clock is the time it
// reads (nil: time.Now); when it goes back, the level's dwell and calm
// count from the time it went back to, so a step back never shortens a
// hold nor lengthens it by the step. onChange, if not nil, is called on
// every transition with a reason, outside the controller's lock, one call
// at a time and in the order of the transitions, so that the last call
// names the level in force; it may call the controller. A transition made
// while an earlier one is being reported is reported, after it, by the
// goroutine reporting it.
func NewController(cfg Config, clock func() time.Time, onChange func(from, to Level, why string)) *Controller {
	if cfg.MinDwell <= 0 {
		cfg.MinDwell = defaultMinDwell
	}
	if clock == nil {
		clock = time.Now
	}
	return &Controller{cfg: cfg, clock: clock, onChange: onChange, since: clock()}
}

// minDwell is Config.MinDwell, or its default (in the zero Controller).
func (c *Controller) minDwell() time.Duration {
	if c.cfg.MinDwell <= 0 {
		return defaultMinDwell
	}
	return c.cfg.MinDwell
}

// minAnswers is Config.MinAnswers, or its default.
func (c *Controller) minAnswers() int64 {
	if c.cfg.MinAnswers <= 0 {
		return defaultMinAnswers
	}
	return c.cfg.MinAnswers
}

// Counted returns s as the controller reads it against its thresholds: its
// P99 and ErrorRate 0 when s has too few answers for them to count (see
// Config.MinAnswers), its other signals as they are.
func (c *Controller) Counted(s Signals) Signals {
	c.mu.Lock()
	defer c.mu.Unlock()
	return counted(s, c.minAnswers())
}

// now is the controller's time.
func (c *Controller) now() time.Time {
	if c.clock == nil {
		return time.Now()
	}
	return c.clock()
}

// SetConfig replaces the rules (on a configuration reload); the level and
// its dwell carry over. It closes the channel Reconfigured returned.
func (c *Controller) SetConfig(cfg Config) {
	if cfg.MinDwell <= 0 {
		cfg.MinDwell = defaultMinDwell
	}
	c.mu.Lock()
	c.cfg = cfg
	if c.reconfigured != nil {
		close(c.reconfigured)
		c.reconfigured = nil
	}
	c.mu.Unlock()
}

// Reconfigured returns a channel that the next SetConfig closes, once the
// new rules are in force: a loop that feeds the controller at an interval
// of the configuration the rules come from waits on it too, so that a
// reload that changes the interval applies at once, not when a wait of
// the old interval ends. Callers get the channel before they read the
// configuration, so that no SetConfig between the two goes unseen.
func (c *Controller) Reconfigured() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.reconfigured == nil {
		c.reconfigured = make(chan struct{})
	}
	return c.reconfigured
}

// Level returns the current level.
func (c *Controller) Level() Level {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.level
}

// State is what the admin API shows.
type State struct {
	Level   Level     `json:"level"`
	Name    string    `json:"name"`
	Pinned  bool      `json:"pinned"`
	Since   time.Time `json:"since"`
	Signals Signals   `json:"signals"`
}

// State returns the level, whether it is pinned, since when, and the last
// signals seen.
func (c *Controller) State() State {
	c.mu.Lock()
	defer c.mu.Unlock()
	return State{Level: c.level, Name: c.level.String(), Pinned: c.pinned, Since: c.since, Signals: c.last}
}

// Update feeds a reading and returns the level after it: up at once to the
// highest level whose Enter thresholds s reaches, or down one level when the
// level has been held MinDwell and the signals have stayed below its Leave
// thresholds for MinDwell, this reading included. A pinned level does not
// move.
func (c *Controller) Update(s Signals) Level {
	c.mu.Lock()
	c.last = s
	now := c.now()
	if now.Before(c.since) { // the clock went back: count from where it went
		c.since = now
	}
	if now.Before(c.calmSince) {
		c.calmSince = now
	}
	from, to, why := c.level, c.level, ""
	calm := from > Normal && len(c.cfg.Rules[from-1].leave().exceeded(s, c.minAnswers())) == 0
	switch {
	case !calm:
		c.calmSince = time.Time{}
	case c.calmSince.IsZero():
		c.calmSince = now
	}
	if !c.pinned {
		for l := Critical; l > c.level; l-- {
			if reasons := c.cfg.Rules[l-1].Enter.exceeded(s, c.minAnswers()); len(reasons) > 0 {
				to, why = l, strings.Join(reasons, ", ")
				break
			}
		}
		if dwell := c.minDwell(); to == from && calm && now.Sub(c.since) >= dwell && now.Sub(c.calmSince) >= dwell {
			to, why = from-1, "signals below the "+from.String()+" leave thresholds for "+dwell.String()
		}
	}
	if to != from {
		c.level, c.since, c.calmSince = to, now, time.Time{}
	}
	c.report(from, to, why)
	return to
}

// transition is a change of level to report to onChange.
type transition struct {
	from, to Level
	why      string
}

// report, called with mu held, unlocks it and reports a transition from →
// to to onChange, if it is one, after every transition before it: the
// first caller to find none being reported reports them all, in order,
// each outside mu.
func (c *Controller) report(from, to Level, why string) {
	if from == to || c.onChange == nil {
		c.mu.Unlock()
		return
	}
	c.pending = append(c.pending, transition{from, to, why})
	if c.reporting {
		c.mu.Unlock()
		return
	}
	c.reporting = true
	for len(c.pending) > 0 {
		t := c.pending[0]
		c.pending = c.pending[1:]
		c.mu.Unlock()
		c.onChange(t.from, t.to, t.why)
		c.mu.Lock()
	}
	c.reporting = false
	c.mu.Unlock()
}

// Pin holds the level at l until Unpin, whatever the signals say. A level
// above Critical pins Critical, one below Normal pins Normal. Pinning a
// level other than the current one is a transition (reported to onChange)
// and starts its dwell afresh.
func (c *Controller) Pin(l Level) {
	c.force(min(max(l, Normal), Critical), true, "pinned by an operator")
}

// Reset unpins and returns to Normal at once (a transition reported to
// onChange): for a server whose configuration no longer has a degradation
// section, so that the level reported is the level in force.
func (c *Controller) Reset() {
	c.force(Normal, false, "no degradation section in the configuration")
}

// force sets the level and whether it is pinned, reporting a transition to
// onChange with why. A new level starts its dwell and its calm afresh.
func (c *Controller) force(to Level, pinned bool, why string) {
	c.mu.Lock()
	from := c.level
	c.level, c.pinned = to, pinned
	if from != to {
		c.since, c.calmSince = c.now(), time.Time{}
	}
	c.report(from, to, why)
}

// Unpin lets signals move the level again.
func (c *Controller) Unpin() {
	c.mu.Lock()
	c.pinned = false
	c.mu.Unlock()
}
