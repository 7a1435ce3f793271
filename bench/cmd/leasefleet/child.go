package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/bench"
	"github.com/sluice-dev/sluice/redis"
)

// defaultKeys is the number of keys of the throughput runs, drawn with
// Zipf popularity (s = 1.1), unless -keys says otherwise.
const defaultKeys = 10_000

// warmup is how long the callers of a run call before they count, unless
// its job says otherwise.
const warmup = 300 * time.Millisecond

// warm returns how long j's callers call before they count.
func (j job) warm() time.Duration {
	if j.Warmup > 0 {
		return j.Warmup
	}
	return warmup
}

// throughputRate is the limit of every key in the GCRA throughput runs
// and of the global runs: GCRA, per second, burst as much: high enough
// that most calls are admitted.
const throughputRate = 1_000_000

// minuteQuota is the limit of every key in the per-minute throughput
// runs, as an API's per-minute plan is (a fixed window of a minute, or
// GCRA with a minute's burst), high enough that every call is admitted.
const minuteQuota = 60_000_000

// Kinds of limit of a throughput run (job.Kind).
const (
	kindGCRASecond = ""           // GCRA throughputRate per second, burst as much
	kindGCRAMinute = "gcra-min"   // GCRA minuteQuota per minute, burst as much
	kindWindow     = "window-min" // a fixed window of minuteQuota per minute
)

// throughputLimit returns the limit of every key of j's throughput or
// global run.
func throughputLimit(j job) sluice.Limit {
	switch j.Kind {
	case kindGCRAMinute:
		return sluice.GCRA(minuteQuota, time.Minute)
	case kindWindow:
		return sluice.FixedWindow(minuteQuota, time.Minute)
	}
	return sluice.GCRA(throughputRate, time.Second)
}

// runJob runs one process's part of a fleet run.
func runJob(j job) result {
	switch j.Mode {
	case "peer":
		return runPeer(j)
	case "promise":
		return runPromise(j)
	}
	return runSluice(j)
}

// load runs j's callers with call from j.Start for j.D (paced at j.Rate
// when set) and returns what they measured.
func load(j job, newCall func(w int) bench.CallFunc) result {
	time.Sleep(time.Until(j.Start))
	late := time.Since(j.Start)
	var r bench.LoadResult
	if j.Rate > 0 {
		r = bench.PacedHooks(j.Callers, j.Rate, j.warm(), j.D, newCall, bench.Hooks{})
	} else {
		r = bench.ClosedLoopHooks(j.Callers, j.warm(), j.D, newCall, bench.Hooks{})
	}
	res := result{Late: late, Calls: r.Calls, Admitted: r.Calls - r.Refused - r.Errors, Errors: r.Errors, Elapsed: r.Elapsed,
		P50: bench.Pct(r.Lat, 50), P99: bench.Pct(r.Lat, 99)}
	if r.FirstErr != nil {
		res.FirstErr = r.FirstErr.Error()
	}
	return res
}

// zipfKeys returns, per worker, a function drawing one of keys key names
// with Zipf popularity.
func zipfKeys(prefix string, keys, w int) func() string {
	rng := rand.New(rand.NewPCG(uint64(w), 42))
	z := rand.NewZipf(rng, 1.1, 1, uint64(keys-1))
	names := make([]string, keys)
	for i := range names {
		names[i] = fmt.Sprintf("%s%d", prefix, i)
	}
	return func() string { return names[z.Uint64()] }
}

func runPeer(j job) result {
	for _, p := range bench.RedisPeers {
		if p.Name != j.Peer {
			continue
		}
		inst, err := p.New(j.Addr, throughputRate)
		if err != nil {
			return result{FirstErr: err.Error()}
		}
		defer inst.Close()
		return load(j, func(w int) bench.CallFunc {
			dec, key := inst.Worker(), zipfKeys(j.Run, j.Keys, w)
			return func() (bool, error) { return dec(key()) }
		})
	}
	return result{FirstErr: "no peer " + j.Peer}
}

// open opens the store `sluice serve` runs, leasing every limit when
// j.Lease.
func open(j job) (*redis.Guarded, error) {
	// A timeout of a second: on a loaded machine the default 50 ms sends
	// calls to the local fallback, which would then be measured instead
	// of Redis (Fallback counts any that still are).
	o := redis.Options{Addrs: strings.Split(j.Addr, ","), Instances: j.Procs, Timeout: time.Second}
	if j.Cluster {
		o.Mode = redis.ModeCluster
	}
	if j.Lease {
		o.Lease.Mode = redis.LeaseAuto
	}
	return redis.Open(context.Background(), o)
}

func runSluice(j job) result {
	g, err := open(j)
	if err != nil {
		return result{FirstErr: err.Error()}
	}
	defer g.Close()
	limit := throughputLimit(j)
	r := load(j, func(w int) bench.CallFunc {
		key, ctx := zipfKeys(j.Run, j.Keys, w), context.Background()
		if j.Global {
			key = func() string { return j.Run + "-global" }
		}
		checks, out := []sluice.Check{{Limit: limit, Cost: 1}}, make([]sluice.Status, 1)
		return func() (bool, error) {
			checks[0].Key = key()
			err := g.Apply(ctx, checks, out)
			return out[0].Allowed, err
		}
	})
	stats(g, &r, j)
	return r
}

// stats adds g's lease and fallback counts to r.
func stats(g *redis.Guarded, r *result, j job) {
	r.Fallback = g.Failover().Stats().FallbackDecisions
	if l := g.Leases(); l != nil {
		s := l.Stats()
		r.Local, r.LeaseCalls, r.RoundTrips = s.Local, s.Calls, s.RoundTrips
		if os.Getenv("LEASEFLEET_DEBUG") != "" {
			fmt.Fprintf(os.Stderr, "process %d: %+v\n", j.Proc, s)
		}
	}
}

// promiseLimits are the limits of the promise runs, one hot key each:
// 2,000 units per second.
func promiseLimits() []sluice.Limit {
	return []sluice.Limit{sluice.FixedWindow(2000, time.Second), sluice.SlidingCounter(2000, time.Second),
		sluice.TokenBucket(2000, time.Second), sluice.GCRA(2000, time.Second), sluice.LeakyBucket(2000, time.Second)}
}

// moveOffset shifts the moving promise run's hand-overs off the windows'
// edges (a run starts on a whole second): traffic moves in mid-window.
const moveOffset = 500 * time.Millisecond

// runPromise offers, over the fleet, twice what every limit admits, and
// counts what is admitted, per limit and per second of the clock. Moving:
// only process ⌊(t + moveOffset)/1s⌋ mod procs offers traffic at time t
// after the start, at the fleet's whole rate. Kill: process 0 stops at
// half the run and returns without closing its store, so that its caller
// can kill it holding its leases.
func runPromise(j job) result {
	g, err := open(j)
	if err != nil {
		return result{FirstErr: err.Error()}
	}
	victim := j.Kill && j.Proc == 0
	if !victim { // the victim dies holding its leases
		defer g.Close()
	}
	limits := promiseLimits()
	first := j.Start.Unix()
	secs := int(j.Start.Add(j.D).Unix()-first) + 1
	admits := make([][]atomic.Int64, len(limits)) // per limit, per second from first
	for i := range admits {
		admits[i] = make([]atomic.Int64, secs)
	}
	var calls, errs atomic.Int64
	perCall := time.Duration(float64(time.Second) * float64(j.Procs*j.Callers) / (2 * 2000))
	if j.Moving {
		perCall /= time.Duration(j.Procs)
	}
	time.Sleep(time.Until(j.Start))
	late := time.Since(j.Start)
	end := j.Start.Add(j.D)
	if victim {
		end = j.Start.Add(j.D / 2)
	}
	var wg sync.WaitGroup
	for w := range j.Callers {
		wg.Go(func() {
			ctx, out := context.Background(), make([]sluice.Status, 1)
			next := time.Now().Add(time.Duration(w) * perCall / time.Duration(j.Callers))
			for {
				time.Sleep(time.Until(next))
				now := time.Now()
				if !now.Before(end) {
					return
				}
				next = next.Add(perCall)
				if j.Moving && int((now.Sub(j.Start)+moveOffset)/time.Second)%j.Procs != j.Proc {
					continue
				}
				for i, l := range limits {
					c := sluice.Check{Key: fmt.Sprintf("%s-%v", j.Run, l.Algorithm()), Limit: l, Cost: 1}
					calls.Add(1)
					if err := g.Apply(ctx, []sluice.Check{c}, out); err != nil {
						errs.Add(1)
					} else if out[0].Allowed {
						admits[i][min(int(now.Unix()-first), secs-1)].Add(1)
					}
				}
			}
		})
	}
	wg.Wait()
	r := result{Late: late, Calls: calls.Load(), Errors: errs.Load(), Elapsed: j.D, Admits: map[string][]int64{}}
	for i, l := range limits {
		per := make([]int64, secs)
		for k := range per {
			per[k] = admits[i][k].Load()
			r.Admitted += per[k]
		}
		r.Admits[l.Algorithm().String()] = per
	}
	stats(g, &r, j)
	return r
}
