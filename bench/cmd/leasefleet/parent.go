package main

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/sluice-dev/sluice/bench"
)

// fleetRun is one configuration's outcome, summed over the processes.
type fleetRun struct {
	name                    string
	calls, admitted, errors int64
	rate                    float64          // decisions/s
	cmds                    map[string]int64 // Redis's commands in the measured span, by name
	p50, p99                time.Duration    // the processes' largest
	local, roundTrips       int64
	leaseCalls              int64
	fallback                int64
	late                    time.Duration      // the latest process's start after the run's
	admits                  map[string][]int64 // per limit, per second from the start's
	firstErr                string
}

// measure runs j on the fleet from j.Start and, on a standalone Redis,
// counts the commands Redis runs in its measured span (from the end of the
// warm-up for j.D, as the processes count their calls), by name.
func measure(name, addr string, j job, procs int) (fleetRun, error) {
	j.Addr, j.Run = addr, fmt.Sprintf("lf%d-%s", time.Now().UnixNano(), strings.ReplaceAll(name, " ", "-"))
	type span struct {
		cmds map[string]int64
		err  error
	}
	counted := make(chan span, 1)
	if j.Cluster {
		counted <- span{}
	} else {
		go func() {
			time.Sleep(time.Until(j.Start.Add(j.warm())))
			before, err := redisCommands(addr)
			if err != nil {
				counted <- span{err: err}
				return
			}
			time.Sleep(time.Until(j.Start.Add(j.warm() + j.D)))
			after, err := redisCommands(addr)
			for k := range after {
				after[k] -= before[k]
			}
			counted <- span{after, err}
		}()
	}
	res, err := fleet(j, procs)
	if err != nil {
		return fleetRun{}, fmt.Errorf("%s: %w", name, err)
	}
	c := <-counted
	if c.err != nil {
		return fleetRun{}, c.err
	}
	f := sum(name, res)
	f.cmds = c.cmds
	return f, nil
}

// sum adds up the processes' results of one configuration.
func sum(name string, res []result) fleetRun {
	f := fleetRun{name: name, admits: map[string][]int64{}}
	for _, r := range res {
		f.calls += r.Calls
		f.admitted += r.Admitted
		f.errors += r.Errors
		f.rate += float64(r.Calls) / max(r.Elapsed.Seconds(), 1e-9)
		f.p50, f.p99 = max(f.p50, r.P50), max(f.p99, r.P99)
		f.local += r.Local
		f.roundTrips += r.RoundTrips
		f.leaseCalls += r.LeaseCalls
		f.fallback += r.Fallback
		f.late = max(f.late, r.Late)
		for k, v := range r.Admits {
			if len(f.admits[k]) < len(v) {
				f.admits[k] = append(f.admits[k], make([]int64, len(v)-len(f.admits[k]))...)
			}
			for i, n := range v {
				f.admits[k][i] += n
			}
		}
		if f.firstErr == "" {
			f.firstErr = r.FirstErr
		}
	}
	return f
}

func (f fleetRun) String() string {
	var all int64
	names := make([]string, 0, len(f.cmds))
	for k, v := range f.cmds {
		all += v
		if v > 0 {
			names = append(names, k)
		}
	}
	slices.Sort(names)
	per := func(n int64) float64 { return float64(n) / float64(max(f.calls, 1)) }
	s := fmt.Sprintf("%-22s %12.0f/s  calls %9d  admitted %5.1f%%  errors %d  p50 %8s ms  p99 %8s ms",
		f.name, f.rate, f.calls, 100*float64(f.admitted)/float64(max(f.calls, 1)), f.errors, bench.Ms(f.p50), bench.Ms(f.p99))
	if f.cmds != nil { // counted on a standalone Redis only
		s += fmt.Sprintf("  Redis cmds/decision %.4f (", per(all))
		for i, k := range names {
			if i > 0 {
				s += " "
			}
			s += fmt.Sprintf("%s %.4f", k, per(f.cmds[k]))
		}
		s += ")"
	}
	if f.local > 0 {
		s += fmt.Sprintf("  from leases %.1f%%  round trips/call %.4f", 100*float64(f.local)/float64(max(f.leaseCalls, 1)),
			float64(f.roundTrips)/float64(max(f.leaseCalls, 1)))
	}
	if f.fallback > 0 {
		s += fmt.Sprintf("  fallback decisions %d", f.fallback)
	}
	if f.late > 50*time.Millisecond {
		s += fmt.Sprintf("  (a process began %v late: its calls and Redis's commands were counted over different spans)", f.late.Round(time.Millisecond))
	}
	if f.firstErr != "" {
		s += "  first error: " + f.firstErr
	}
	return s
}
