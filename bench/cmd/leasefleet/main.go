// Command leasefleet measures sluice's leased quota (redis.Options.Lease)
// as a fleet runs it: several processes, each Open's store with many
// callers, on one redis-server, against the Redis peers of package bench
// run the same way.
//
//	leasefleet [-redis host:port] [-procs 4] [-callers 64] [-keys 10000] [-d 5s] [-only peers,sluice,promise]
//	leasefleet -cluster host:port,… [-d 5s]    # one global limit on a Cluster, leases off and on
//
// Without -redis it starts a redis-server of its own; LEASEFLEET_DEBUG=1
// prints each sluice process's lease statistics. It prints, per
// configuration, decisions/s of the fleet, p50/p99, Redis commands per
// decision by name (INFO commandstats over the measured span, the commands
// scripts run included), and for the promise runs the units admitted
// against the promise, counted by the processes from outside the store,
// over the run and in its steady seconds.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/sluice-dev/sluice/bench"
)

// lead is how long before its start a fleet run's processes are launched:
// long enough for them all to be ready on a busy machine.
const lead = 4 * time.Second

// job is what one child process runs; result what it reports.
type job struct {
	Mode    string        // "peer", "sluice", "promise"
	Peer    string        // bench.RedisPeers name (mode peer)
	Lease   bool          // sluice: leases on
	Addr    string        // redis (comma-separated seeds of a Cluster when Cluster)
	Cluster bool          // Addr is a Redis Cluster
	Global  bool          // sluice: every call on one key (a global limit)
	Callers int           // goroutines
	Keys    int           // keys of a throughput run
	Rate    float64       // paced calls/s of this process; 0: closed loop
	D       time.Duration // measurement
	Start   time.Time     // when to begin (all processes together)
	Proc    int           // index of this process
	Procs   int           // processes in the fleet
	Moving  bool          // promise: only one process offers traffic per second, in turn
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
	addr := flag.String("redis", "", "redis-server address (default: start one)")
	procs := flag.Int("procs", 4, "processes in the fleet")
	callers := flag.Int("callers", 64, "goroutines per process")
	keys := flag.Int("keys", defaultKeys, "keys of the throughput runs (Zipf popularity)")
	d := flag.Duration("d", 5*time.Second, "measurement per configuration")
	only := flag.String("only", "", "comma-separated configurations to run: peers, sluice, promise, global (default all but global)")
	cluster := flag.String("cluster", "", "seed addresses of a Redis Cluster (comma-separated), for the global runs")
	flag.Parse()
	if *child != "" {
		var j job
		if err := json.Unmarshal([]byte(*child), &j); err != nil {
			fatal(err)
		}
		r := runJob(j)
		json.NewEncoder(os.Stdout).Encode(r)
		return
	}
	if *addr == "" {
		srv, err := bench.StartRedis()
		if err != nil {
			fatal(err)
		}
		defer srv.Stop()
		*addr = srv.Addr
	}
	if *cluster != "" {
		if err := global(*cluster, *procs, *callers, *d); err != nil {
			fatal(err)
		}
		return
	}
	if err := parent(*addr, *procs, *callers, *keys, *d, *only); err != nil {
		fatal(err)
	}
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "leasefleet:", err)
	os.Exit(1)
}

// fleet runs j in procs processes at once and returns their results.
func fleet(j job, procs int) ([]result, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	j.Procs = procs
	if j.Start.IsZero() {
		j.Start = time.Now().Add(lead)
	}
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
		if err := c.Wait(); err != nil {
			return nil, fmt.Errorf("process %d: %w", i, err)
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
