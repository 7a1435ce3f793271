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

// measure runs j on the fleet and counts the commands Redis runs in its
// measured span (from the end of the warm-up for j.D, as the processes
// count their calls), by name.
func measure(name, addr string, j job, procs int) (fleetRun, error) {
	j.Addr, j.Run = addr, fmt.Sprintf("lf%d-%s", time.Now().UnixNano(), name)
	if j.Start.IsZero() {
		j.Start = time.Now().Add(lead)
	}
	type span struct {
		cmds map[string]int64
		err  error
	}
	counted := make(chan span, 1)
	go func() {
		time.Sleep(time.Until(j.Start.Add(warmup)))
		before, err := redisCommands(addr)
		if err != nil {
			counted <- span{err: err}
			return
		}
		time.Sleep(time.Until(j.Start.Add(warmup + j.D)))
		after, err := redisCommands(addr)
		for k := range after {
			after[k] -= before[k]
		}
		counted <- span{after, err}
	}()
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
		s += fmt.Sprintf("  from leases %.1f%%", 100*float64(f.local)/float64(max(f.leaseCalls, 1)))
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

func parent(addr string, procs, callers, keys int, d time.Duration, only string) error {
	want := func(name string) bool {
		return only == "" || slices.Contains(strings.Split(only, ","), name)
	}
	fmt.Printf("leasefleet: %d processes × %d callers, %d keys, %v per run, Redis at %s, load %s\n", procs, callers, keys, d, addr, bench.LoadAvg())
	base := job{Callers: callers, Keys: keys, D: d}
	fastestPeer := 0.0
	for _, p := range []string{"redis_rate", "ulule-redis", "throttled-redis"} {
		if !want("peers") {
			break
		}
		j := base
		j.Mode, j.Peer = "peer", p
		f, err := measure(p, addr, j, procs)
		if err != nil {
			return err
		}
		fmt.Println(f)
		fastestPeer = max(fastestPeer, f.rate)
	}
	var leased fleetRun
	for _, on := range []bool{false, true} {
		if !want("sluice") {
			break
		}
		j := base
		j.Mode, j.Lease = "sluice", on
		name := "sluice lease off"
		if on {
			name = "sluice lease auto"
		}
		f, err := measure(name, addr, j, procs)
		if err != nil {
			return err
		}
		fmt.Println(f)
		if on {
			leased = f
		}
	}
	if leased.rate > 0 && fastestPeer > 0 {
		fmt.Printf("lease auto / fastest peer: %.1f×\n", leased.rate/fastestPeer)
	}
	for _, share := range []float64{0.5, 0.1} {
		if leased.rate == 0 {
			break
		}
		j := base
		j.Mode, j.Lease, j.Rate = "sluice", true, leased.rate*share/float64(procs)
		f, err := measure(fmt.Sprintf("sluice lease %g load", share), addr, j, procs)
		if err != nil {
			return err
		}
		fmt.Println(f)
	}
	for _, moving := range []bool{false, true} {
		if !want("promise") {
			break
		}
		for _, on := range []bool{false, true} {
			j := base
			j.Mode, j.Lease, j.Moving = "promise", on, moving
			name := fmt.Sprintf("promise lease=%v moving=%v", on, moving)
			j.Start = time.Now().Add(lead)
			f, err := measure(name, addr, j, procs)
			if err != nil {
				return err
			}
			fmt.Println(f)
			promise(f, j.Start, d)
		}
	}
	return nil
}

// promise prints, per limit of the promise runs, what the fleet admitted
// against the most the limit allows in the run's span (windows touched ×
// Q; a bucket's burst plus its refill over the span), and in the seconds
// of the clock that lie wholly in the run after its first second (steady:
// every bucket has been drained, and Q per second is the most any limit
// admits there).
func promise(f fleetRun, start time.Time, d time.Duration) {
	const q = 2000
	end := start.Add(d)
	slack := end.Add(100 * time.Millisecond) // calls made before the end, decided after it
	windows := slack.Unix() - start.Unix() + 1
	for _, l := range promiseLimits() {
		per := f.admits[l.Algorithm().String()]
		var got, steady, whole int64
		for k, n := range per {
			got += n
			if sec := start.Unix() + int64(k); sec >= start.Add(time.Second).Unix()+1 && sec+1 <= end.Unix() {
				steady += n
				whole++
			}
		}
		most := windows * q
		if l.Algorithm().String() != "fixed-window" && l.Algorithm().String() != "sliding-window-counter" {
			most = q + int64(slack.Sub(start).Seconds()*q)
		}
		fmt.Printf("    %-24s admitted %6d  most allowed %6d  over %d  of that %5.1f%%  steady (%d s) %5.1f%% of Q/s\n",
			l.Algorithm(), got, most, max(got-most, 0), 100*float64(got)/float64(most),
			whole, 100*float64(steady)/float64(max(whole*q, 1)))
	}
}

// global runs the fleet with every call on one key of a Redis Cluster (a
// global limit, one slot), leases off and on, and prints the ratio.
func global(seeds string, procs, callers int, d time.Duration) error {
	fmt.Printf("leasefleet: global limit on the Cluster at %s, %d processes × %d callers, %v per run, load %s\n",
		seeds, procs, callers, d, bench.LoadAvg())
	var rates [2]float64
	for i, on := range []bool{false, true} {
		j := job{Mode: "sluice", Lease: on, Global: true, Cluster: true, Callers: callers, D: d}
		j.Addr, j.Run = seeds, fmt.Sprintf("lfg%d", time.Now().UnixNano())
		res, err := fleet(j, procs)
		if err != nil {
			return err
		}
		f := sum(fmt.Sprintf("global lease=%v", on), res)
		fmt.Println(f)
		rates[i] = f.rate
	}
	fmt.Printf("global, lease auto / lease off: %.1f×\n", rates[1]/max(rates[0], 1))
	return nil
}
