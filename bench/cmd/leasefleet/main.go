// Command leasefleet measures sluice's leased quota (redis.Options.Lease)
// as a fleet runs it: several processes, each with Open's store and many
// callers, on one redis-server, against the Redis peers of package bench
// run the same way; one global limit on a 3-master Cluster; and the
// promise, counted by the processes from outside the store. It prints a
// Markdown report with a PASS/MISS line per target of the leased quota;
// `make bench` runs it as its lease part (BENCH_ONLY=lease).
//
//	leasefleet [-redis host:port] [-cluster host:port,…] [-procs 4] [-callers 64] [-keys 10000]
//	           [-d 5s] [-half-warmup 3s] [-half-d 0] [-promise-d 20s] [-lead 4s]
//	           [-only peers,sluice,half,global,promise] [-targets file.json]
//
// Without -redis it starts a redis-server of its own, without -cluster a
// Cluster of its own (when the global runs are chosen). -targets writes
// the targets' verdicts there as JSON ([]bench.Target). LEASEFLEET_DEBUG=1
// prints each sluice process's lease statistics.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// job is what one child process runs; result what it reports.
type job struct {
	Mode    string        // "peer", "sluice", "promise"
	Peer    string        // bench.RedisPeers name (mode peer)
	Lease   bool          // sluice: leases on
	Addr    string        // redis (comma-separated seeds of a Cluster when Cluster)
	Cluster bool          // Addr is a Redis Cluster
	Global  bool          // sluice: every call on one key (a global limit)
	Kind    string        // sluice: the limit of every key (kindGCRASecond, kindGCRAMinute, kindWindow)
	Callers int           // goroutines
	Keys    int           // keys of a throughput run
	Rate    float64       // paced calls/s of this process; 0: closed loop
	D       time.Duration // measurement
	Warmup  time.Duration // calls before the measurement; 0: warmup
	Start   time.Time     // when to begin (all processes together)
	Proc    int           // index of this process
	Procs   int           // processes in the fleet
	Moving  bool          // promise: only one process offers traffic per second, in turn
	Kill    bool          // promise: process 0 stops at half the run, reports, and kills itself with SIGKILL, its leases held
	Run     string        // key prefix of this run
}

type result struct {
	Late                    time.Duration // how long after Start the process began
	Calls, Admitted, Errors int64
	Elapsed                 time.Duration
	P50, P99                time.Duration
	Local, RoundTrips       int64              // the leases' counts, warm-up included
	LeaseCalls              int64              // calls the leases counted, warm-up included
	Fallback                int64              // decisions of the local fallback
	Admits                  map[string][]int64 // promise: units admitted per limit, per second of the clock from Start's
	FirstErr                string
}

func main() {
	child := flag.String("child", "", "run one process of a fleet (JSON job)")
	var o options
	flag.StringVar(&o.redis, "redis", "", "redis-server address (default: start one)")
	flag.StringVar(&o.cluster, "cluster", "", "seed addresses of a Redis Cluster (comma-separated), for the global runs (default: start one)")
	flag.IntVar(&o.procs, "procs", 4, "processes in the fleet")
	flag.IntVar(&o.callers, "callers", 64, "goroutines per process")
	flag.IntVar(&o.keys, "keys", defaultKeys, "keys of the throughput runs (Zipf popularity)")
	flag.DurationVar(&o.d, "d", 5*time.Second, "measurement per throughput and global run")
	flag.DurationVar(&o.halfWarmup, "half-warmup", 3*time.Second, "warm-up of the ½-rate runs (long enough for their processes to have seen the keys)")
	flag.DurationVar(&o.halfD, "half-d", 0, "measurement per ½-rate run (0: -d, but at least one whole window of the run's limit and 2 s more)")
	flag.DurationVar(&o.promiseD, "promise-d", 20*time.Second, "length of each promise run (whole seconds)")
	flag.DurationVar(&o.lead, "lead", 4*time.Second, "how long before a run's start its processes are launched")
	only := flag.String("only", "", "comma-separated runs: "+strings.Join(runNames, ", ")+" (default all)")
	targets := flag.String("targets", "", "write the targets' verdicts to this file as JSON")
	flag.Parse()
	if *child != "" {
		var j job
		if err := json.Unmarshal([]byte(*child), &j); err != nil {
			fatal(err)
		}
		r := runJob(j)
		json.NewEncoder(os.Stdout).Encode(r)
		if j.Kill && j.Proc == 0 {
			syscall.Kill(os.Getpid(), syscall.SIGKILL)
		}
		return
	}
	if *only == "" {
		*only = strings.Join(runNames, ",")
	}
	o.only = strings.Split(*only, ",")
	ts, err := report(os.Stdout, o)
	if err != nil {
		fatal(err)
	}
	if *targets != "" {
		b, _ := json.Marshal(ts)
		if err := os.WriteFile(*targets, b, 0o644); err != nil {
			fatal(err)
		}
	}
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "leasefleet:", err)
	os.Exit(1)
}

// fleet runs j in procs processes at once and returns their results. With
// j.Kill, process 0's death by SIGKILL after its result is expected.
func fleet(j job, procs int) ([]result, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	j.Procs = procs
	cmds := make([]*exec.Cmd, procs)
	outs := make([]*bufio.Scanner, procs)
	for i := range cmds {
		j.Proc = i
		b, _ := json.Marshal(j)
		cmds[i] = exec.Command(self, "-child", string(b))
		cmds[i].Stderr = os.Stderr
		out, err := cmds[i].StdoutPipe()
		if err != nil {
			return nil, err
		}
		outs[i] = bufio.NewScanner(out)
		outs[i].Buffer(make([]byte, 1<<20), 1<<20)
		if err := cmds[i].Start(); err != nil {
			return nil, err
		}
	}
	res := make([]result, procs)
	for i, c := range cmds {
		if !outs[i].Scan() {
			c.Wait()
			return nil, fmt.Errorf("process %d gave no result", i)
		}
		if err := json.Unmarshal(outs[i].Bytes(), &res[i]); err != nil {
			return nil, err
		}
		err := c.Wait()
		var exit *exec.ExitError
		if j.Kill && i == 0 && errors.As(err, &exit) && exit.Sys().(syscall.WaitStatus).Signal() == syscall.SIGKILL {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("process %d: %w", i, err)
		}
		if j.Kill && i == 0 {
			return nil, fmt.Errorf("process 0 was to be killed by SIGKILL, but exited normally")
		}
	}
	return res, nil
}

// redisCommands returns the commands Redis has run so far, by name (those
// that scripts call included, INFO excluded), as its INFO commandstats
// counts them.
func redisCommands(addr string) (map[string]int64, error) {
	c := goredis.NewClient(&goredis.Options{Addr: addr})
	defer c.Close()
	info, err := c.Info(context.Background(), "commandstats").Result()
	if err != nil {
		return nil, err
	}
	n := map[string]int64{}
	for _, l := range strings.Split(info, "\r\n") {
		name, stats, ok := strings.Cut(strings.TrimPrefix(l, "cmdstat_"), ":")
		if !ok || name == l || name == "info" {
			continue
		}
		if i := strings.Index(stats, "calls="); i >= 0 {
			v, _ := strconv.ParseInt(strings.SplitN(stats[i+6:], ",", 2)[0], 10, 64)
			n[name] = v
		}
	}
	return n, nil
}
