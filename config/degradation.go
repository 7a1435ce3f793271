package config

import (
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/sluice-dev/sluice/degrade"
)

// Degradation configures graceful degradation under overload.
type Degradation struct {
	// Enabled is true when the configuration has a degradation section.
	Enabled bool
	// Interval is how often the signals are sampled, 1s by default, from
	// 10ms to 1m. The CPU share is measured over at least 100ms: sampled
	// more often, it changes every 100ms.
	Interval time.Duration
	// Controller holds the level rules and the minimum dwell.
	Controller degrade.Config
	// Factor multiplies the quantity and burst of every limit whose window
	// is at most FactorMaxWindow from level 1 up, 0.5 by default; in (0, 1].
	Factor float64
	// FactorMaxWindow is the longest window Factor scales, an hour by
	// default: longer windows and calendar quotas (whose window is their
	// period's longest) keep their quantity, since a refusal under a
	// reduced daily or monthly quota would send a client away until the
	// window ends for an overload of minutes.
	FactorMaxWindow time.Duration
	// RetryAfter is the Retry-After of 503 answers, MinDwell by default.
	RetryAfter time.Duration
	// StaleFor is how long a GET response stays servable from the stale
	// cache at level 2 (proxy mode); 30s by default, 0 disables the cache.
	StaleFor time.Duration
	// Expensive, Critical and Health are ServeMux patterns of the endpoint
	// classes: expensive ones are refused from level 1, writes not critical
	// from level 2, everything but health from level 3. Hosts match in any
	// case and without the root dot. A request is expensive when any
	// spelling of it that upstreams serve as a pattern's matches it: its
	// escaped or decoded path, without a trailing slash or path parameters,
	// in any case, its method in any case. It is critical or health only as
	// written: when both readings of an escaped path match, and the path
	// without its parameters (/health/..;/admin is /admin to Tomcat). A
	// route is in one class: the same pattern, however written, in two is
	// refused. Patterns may nest: of an expensive pattern and a critical or
	// health one that both match, the more specific decides, as in a
	// ServeMux ("GET /api/health" inside "/api/" is health); when neither
	// is, the critical or health one does.
	Expensive, Critical, Health []string
}

// minSampleInterval and maxSampleInterval bound degradation.interval: the
// server wakes every interval to sample its signals (cgroup files, the
// scheduler's latencies), and a level follows them no sooner.
const (
	minSampleInterval = 10 * time.Millisecond
	maxSampleInterval = time.Minute
)

func (d *decoder) degradation(n *yaml.Node, path string, g *Degradation) {
	g.Enabled, g.Interval, g.Factor, g.FactorMaxWindow, g.StaleFor = true, time.Second, 0.5, time.Hour, 30*time.Second
	g.Controller.MinDwell = 5 * time.Second
	levels := map[string]int{"elevated": 0, "high": 1, "critical": 2}
	d.Mapping(n, path, map[string]field{
		"interval": func(n *yaml.Node, p string) {
			before := len(d.Errs)
			if g.Interval = d.Duration(n, p); len(d.Errs) == before && (g.Interval < minSampleInterval || g.Interval > maxSampleInterval) {
				d.Errorf(n, p, "%v: give an interval from 10ms to 1m", g.Interval)
			}
		},
		"min_dwell":   func(n *yaml.Node, p string) { g.Controller.MinDwell = d.minDwell(n, p) },
		"min_answers": func(n *yaml.Node, p string) { g.Controller.MinAnswers = d.Int(n, p, 1, 1<<40) },
		"factor":      func(n *yaml.Node, p string) { g.Factor = d.Float(n, p, 0.001, 1) },
		"factor_max_window": func(n *yaml.Node, p string) {
			before := len(d.Errs)
			if g.FactorMaxWindow = d.Duration(n, p); len(d.Errs) == before && g.FactorMaxWindow < time.Second {
				d.Errorf(n, p, "%v: give a window of at least 1s (744h scales monthly quotas too)", g.FactorMaxWindow)
			}
		},
		"retry_after": func(n *yaml.Node, p string) { g.RetryAfter = d.retryAfter(n, p) },
		"stale_for":   func(n *yaml.Node, p string) { g.StaleFor = d.durationOrNone(n, p) },
		"levels": func(n *yaml.Node, path string) {
			var enterAt [3]map[string]*yaml.Node
			var enterPath [3]string
			d.Entries(n, path, func(k, v *yaml.Node, p string) {
				i, ok := levels[k.Value]
				if !ok {
					d.Errorf(k, p, "unknown level (elevated, high, critical)")
					return
				}
				r := &g.Controller.Rules[i]
				var leaveAt map[string]*yaml.Node
				var leavePath string
				d.Mapping(v, p, map[string]field{
					"enter": func(n *yaml.Node, p string) { r.Enter, enterAt[i] = d.thresholds(n, p); enterPath[i] = p },
					"leave": func(n *yaml.Node, p string) { r.Leave, leaveAt = d.thresholds(n, p); leavePath = p },
				})
				d.leaveBelowEnter(r.Enter, r.Leave, leaveAt, leavePath)
			})
			d.enterInOrder(g.Controller.Rules, enterAt, enterPath)
		},
		"classes": func(n *yaml.Node, path string) {
			classOf := map[string]classed{} // route (routes.Normal) → the class listing it
			d.Mapping(n, path, map[string]field{
				"expensive": func(n *yaml.Node, p string) { g.Expensive = d.patterns(n, p, "expensive", classOf) },
				"critical":  func(n *yaml.Node, p string) { g.Critical = d.patterns(n, p, "critical", classOf) },
				"health":    func(n *yaml.Node, p string) { g.Health = d.patterns(n, p, "health", classOf) },
			})
		},
	})
	if g.RetryAfter == 0 {
		g.RetryAfter = g.Controller.MinDwell
	}
}

// thresholds decodes a level's enter or leave thresholds, and returns the
// node of each signal read, by name.
func (d *decoder) thresholds(n *yaml.Node, path string) (degrade.Thresholds, map[string]*yaml.Node) {
	var t degrade.Thresholds
	at := map[string]*yaml.Node{}
	read := func(name string, f field) field {
		return func(n *yaml.Node, p string) {
			at[name] = n
			f(n, p)
		}
	}
	d.Mapping(n, path, map[string]field{
		"in_flight":  read("in_flight", func(n *yaml.Node, p string) { t.InFlight = d.Int(n, p, 1, 1<<40) }),
		"p99":        read("p99", func(n *yaml.Node, p string) { t.P99 = d.Duration(n, p) }),
		"error_rate": read("error_rate", func(n *yaml.Node, p string) { t.ErrorRate = d.Float(n, p, 0.0001, 1) }),
		"sched_p99":  read("sched_p99", func(n *yaml.Node, p string) { t.SchedP99 = d.Duration(n, p) }),
		"cpu":        read("cpu", func(n *yaml.Node, p string) { t.CPU = d.Float(n, p, 0.01, 1) }),
		"memory":     read("memory", func(n *yaml.Node, p string) { t.Memory = d.Float(n, p, 0.01, 1) }),
		"store_down": func(n *yaml.Node, p string) { t.StoreDown = d.Bool(n, p) },
	})
	return t, at
}

// leaveBelowEnter refuses a leave threshold above its signal's enter
// threshold: the level would be left while its signal still enters it, and
// entered again at the next sample.
func (d *decoder) leaveBelowEnter(enter, leave degrade.Thresholds, at map[string]*yaml.Node, path string) {
	for _, s := range []struct {
		name         string
		above        bool
		leave, enter any
	}{
		{"in_flight", enter.InFlight > 0 && leave.InFlight > enter.InFlight, leave.InFlight, enter.InFlight},
		{"p99", enter.P99 > 0 && leave.P99 > enter.P99, leave.P99, enter.P99},
		{"error_rate", enter.ErrorRate > 0 && leave.ErrorRate > enter.ErrorRate, leave.ErrorRate, enter.ErrorRate},
		{"sched_p99", enter.SchedP99 > 0 && leave.SchedP99 > enter.SchedP99, leave.SchedP99, enter.SchedP99},
		{"cpu", enter.CPU > 0 && leave.CPU > enter.CPU, leave.CPU, enter.CPU},
		{"memory", enter.Memory > 0 && leave.Memory > enter.Memory, leave.Memory, enter.Memory},
	} {
		if s.above {
			d.Errorf(at[s.name], path+"."+s.name, "%v is above enter's %v: the level would be left while the signal still enters it "+
				"(a leave below enter holds the level until the signal has fallen; left out, it is enter's)", s.leave, s.enter)
		}
	}
}

// levelNames are the names of the levels of degrade.Config.Rules, in order.
var levelNames = [3]string{"elevated", "high", "critical"}

// enterInOrder refuses a level's enter threshold below a lower level's for
// the same signal: a load between the two would enter the higher level
// straight from normal, and never the lower one by that signal. at and path
// are each level's enter thresholds' nodes, by signal, and its path.
func (d *decoder) enterInOrder(rules [3]degrade.Rule, at [3]map[string]*yaml.Node, path [3]string) {
	type value struct {
		name string
		v    float64 // for comparing
		show any     // as written
	}
	signals := func(t degrade.Thresholds) []value {
		return []value{
			{"in_flight", float64(t.InFlight), t.InFlight},
			{"p99", float64(t.P99), t.P99},
			{"error_rate", t.ErrorRate, t.ErrorRate},
			{"sched_p99", float64(t.SchedP99), t.SchedP99},
			{"cpu", t.CPU, t.CPU},
			{"memory", t.Memory, t.Memory},
		}
	}
	for j := 1; j < len(rules); j++ {
		for k, e := range signals(rules[j].Enter) {
			if e.v <= 0 {
				continue
			}
			var highest value // of the lower levels' enter thresholds above e
			below := -1
			for i := range j {
				if l := signals(rules[i].Enter)[k]; l.v > e.v && l.v > highest.v {
					highest, below = l, i
				}
			}
			if below >= 0 {
				d.Errorf(at[j][e.name], path[j]+"."+e.name, "%v is below %s's %v: a load between them would enter %s straight from normal, "+
					"and never %s by this signal (give a higher level a threshold at or above a lower one's)",
					e.show, levelNames[below], highest.show, levelNames[j], levelNames[below])
			}
		}
	}
}
