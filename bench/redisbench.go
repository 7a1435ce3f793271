package bench

import (
	"context"
	"encoding/binary"
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sluice-dev/sluice"
	sluiceredis "github.com/sluice-dev/sluice/redis"
)

// A Target is one performance target's verdict, for the report's summary.
type Target struct {
	Pass bool
	Text string
}

// Verdict returns "PASS" or "MISS".
func (t Target) Verdict() string {
	if t.Pass {
		return "PASS"
	}
	return "MISS"
}

// The Redis targets.
const (
	TargetRedisSpeedup = 2.0                    // sluice ÷ fastest peer, decisions/s
	TargetRedisCeiling = 0.6                    // sluice ÷ redis-benchmark pipelined ceiling
	TargetRedisP99     = 2 * time.Millisecond   // one decision at half of sluice's max rate
	ceilingPipeline    = 16                     // redis-benchmark -P
	ceilingMinRequests = 50_000                 // the calibration run
	pacedShare         = 0.5                    // paced load: this share of the measured max
	redisWarmup        = 300 * time.Millisecond // before every closed-loop measurement
)

// RedisOptions configures the Redis part.
type RedisOptions struct {
	Rounds int           // rounds of every peer and ceiling, interleaved
	Time   time.Duration // measurement per peer per round
	Paced  time.Duration // paced latency run per peer
	// SluiceDir is the sluice repository (for redis/lua, the script the
	// sluice-script ceiling runs).
	SluiceDir string
	// Profile, when set, is a directory for CPU profiles of this process
	// during sluice's last-round runs.
	Profile string
}

// GCRAScript is go-redis/redis_rate v10's GCRA script (allowN, from
// rwz/redis-gcra, MIT licensed), copied verbatim but for comments: the
// "comparable script" of the pipelined ceiling — what the fastest
// GCRA-in-Lua peer makes Redis run per decision.
const GCRAScript = `redis.replicate_commands()

local rate_limit_key = KEYS[1]
local burst = ARGV[1]
local rate = ARGV[2]
local period = ARGV[3]
local cost = tonumber(ARGV[4])

local emission_interval = period / rate
local increment = emission_interval * cost
local burst_offset = emission_interval * burst

local jan_1_2017 = 1483228800
local now = redis.call("TIME")
now = (now[1] - jan_1_2017) + (now[2] / 1000000)

local tat = redis.call("GET", rate_limit_key)

if not tat then
  tat = now
else
  tat = tonumber(tat)
end

tat = math.max(tat, now)

local new_tat = tat + increment
local allow_at = new_tat - burst_offset

local diff = now - allow_at
local remaining = diff / emission_interval

if remaining < 0 then
  local reset_after = tat - now
  local retry_after = diff * -1
  return {
    0, -- allowed
    0, -- remaining
    tostring(retry_after),
    tostring(reset_after),
  }
end

local reset_after = new_tat - now
if reset_after > 0 then
  redis.call("SET", rate_limit_key, new_tat, "EX", math.ceil(reset_after))
end
local retry_after = -1
return {cost, remaining, tostring(retry_after), tostring(reset_after)}
`

// A ceiling is one redis-benchmark run definition.
type ceiling struct {
	name, what string
	script     string
	args       []string // after EVALSHA <sha>
	// allowed reports whether a reply admits the call.
	allowed func(reply []any) bool
}

// sluiceScript rebuilds sluice's apply script for GCRA checks as package
// redis builds it (arith.lua, state.lua, bucket.lua, apply.lua, each
// followed by a newline) from the repository's redis/lua.
func sluiceScript(dir string) (string, error) {
	var b strings.Builder
	for _, f := range []string{"arith.lua", "state.lua", "bucket.lua", "apply.lua"} {
		src, err := os.ReadFile(filepath.Join(dir, "redis", "lua", f))
		if err != nil {
			return "", err
		}
		b.Write(src)
		b.WriteByte('\n')
	}
	return b.String(), nil
}

// sluiceScriptArgs are the apply script's arguments for one call of one
// GCRA check of l, cost 1, as redis.Store sends a call alone (see
// redis/lua/apply.lua: time, least TTL, mode, token, a table of 1 limit,
// then 1 call of 1 check: limit 1, cost 1).
func sluiceScriptArgs(l sluice.Limit, key string) []string {
	q, w := l.Quantity(), int64(l.Window()/time.Microsecond)
	g := int64(gcd(int(q), int(w)))
	return []string{"1", key, "", "1", "a", "", "1",
		strconv.Itoa(int(l.Algorithm())), strconv.FormatInt(q, 10), strconv.FormatInt(w, 10),
		strconv.FormatInt(l.Burst(), 10), strconv.FormatInt(q/g, 10), strconv.FormatInt(w/g, 10),
		strconv.FormatInt(int64(l.MaxWait()/time.Microsecond), 10), "0",
		"1", "1", "1", "1"}
}

// redisRun is one closed-loop measurement of one peer.
type redisRun struct {
	res LoadResult
	// redisCPU and selfCPU are the CPU time redis-server and this process
	// used during the measurement; redisUs the Redis command time per
	// decision from INFO commandstats (µs).
	redisCPU, selfCPU time.Duration
	machine           MachineCPU
	scriptUs          float64
	scriptCalls       float64 // script runs during the measurement
	problem           string
}

// ceilingRun is one redis-benchmark measurement.
type ceilingRun struct {
	rps      float64
	p50, p99 string
	redisCPU time.Duration
	elapsed  time.Duration
	calls    int
	scriptUs float64
	cmd      string
}

// RunRedis runs the Redis part and writes its section of the report to w.
func RunRedis(w io.Writer, o RedisOptions) ([]Target, error) {
	srv, err := StartRedis()
	if err != nil {
		return nil, err
	}
	defer srv.Stop()
	ver, _ := srv.Do("INFO", "server")
	version := "unknown"
	if s, ok := ver.(string); ok {
		for _, l := range strings.Split(s, "\r\n") {
			if v, ok := strings.CutPrefix(l, "redis_version:"); ok {
				version = v
			}
		}
	}
	benchBin, err := exec.LookPath("redis-benchmark")
	if err != nil {
		return nil, fmt.Errorf("redis-benchmark not found (it comes with redis-server / redis-tools): %w", err)
	}

	keys := Keys(RedisKeys)
	insts := make([]RedisInstance, len(RedisPeers))
	for i, p := range RedisPeers {
		if insts[i], err = p.New(srv.Addr, Rate); err != nil {
			return nil, fmt.Errorf("%s: %w", p.Name, err)
		}
		defer insts[i].Close()
		if err := createKeys(insts[i], keys); err != nil {
			return nil, fmt.Errorf("%s: creating the keys: %w", p.Name, err)
		}
	}

	// The ceilings: redis-benchmark, pipelined, on the same number of keys.
	limit := sluice.GCRA(Rate, time.Second)
	sluiceSrc, err := sluiceScript(o.SluiceDir)
	if err != nil {
		return nil, fmt.Errorf("sluice's Lua sources: %w", err)
	}
	rate := strconv.Itoa(Rate)
	ceilings := []ceiling{
		{"ceiling-gcra", "redis_rate's GCRA script (GET + SET EX)", GCRAScript,
			[]string{"1", "ceil:gcra:__rand_int__", rate, rate, "1", "1"},
			func(v []any) bool { return len(v) > 0 && v[0] == int64(1) }},
		{"ceiling-sluice", "sluice's own apply.lua for one GCRA check (GET + SET PX)", sluiceSrc,
			sluiceScriptArgs(limit, sluiceredis.Key("ceil:__rand_int__", limit.Name())),
			// the time, then the status words packed as little-endian
			// doubles, the first remaining·2 + allowed (see redis/lua/apply.lua)
			func(v []any) bool {
				if len(v) < 2 {
					return false
				}
				p, ok := v[1].(string)
				if !ok || len(p) < 8 {
					return false
				}
				return int64(math.Float64frombits(binary.LittleEndian.Uint64([]byte(p[:8]))))&1 == 1
			}},
	}
	shas := make([]string, len(ceilings))
	rc := srv.Client(1)
	defer rc.Close()
	for i, c := range ceilings {
		sha, err := rc.ScriptLoad(context.Background(), c.script).Result()
		if err != nil {
			return nil, fmt.Errorf("SCRIPT LOAD %s: %w", c.name, err)
		}
		shas[i] = sha
		// One call as the benchmark will make it, to check the script and its arguments.
		args := slices.Clone(c.args)
		args[1] = strings.ReplaceAll(args[1], "__rand_int__", "000000000001")
		nk, _ := strconv.Atoi(args[0])
		ia := make([]any, 0, len(args)-1-nk)
		for _, a := range args[1+nk:] {
			ia = append(ia, a)
		}
		v, err := rc.EvalSha(context.Background(), sha, args[1:1+nk], ia...).Slice()
		if err != nil || !c.allowed(v) {
			return nil, fmt.Errorf("%s: trial EVALSHA: %v %v", c.name, v, err)
		}
	}

	runs := make([][]redisRun, len(RedisPeers))
	ceilRuns := make([][]ceilingRun, len(ceilings))
	start := time.Now()
	for r := 1; r <= o.Rounds; r++ {
		fmt.Fprintf(os.Stderr, "report: redis round %d of %d\n", r, o.Rounds)
		for i, p := range RedisPeers {
			var stop func()
			if o.Profile != "" && r == o.Rounds && strings.HasPrefix(p.Name, "sluice") {
				stop = profileSelf(filepath.Join(o.Profile, "redis-client-"+p.Name+".pprof"))
			}
			run := measureRedis(srv, insts[i], keys, o.Time)
			if stop != nil {
				stop()
			}
			fmt.Fprintf(os.Stderr, "report:   %-20s %8.0f decisions/s\n", p.Name, run.res.Rate())
			runs[i] = append(runs[i], run)
		}
		for i, c := range ceilings {
			cr, err := runCeiling(srv, benchBin, shas[i], c, o.Time)
			if err != nil {
				return nil, err
			}
			fmt.Fprintf(os.Stderr, "report:   %-20s %8.0f calls/s\n", c.name, cr.rps)
			ceilRuns[i] = append(ceilRuns[i], cr)
		}
	}
	loopTime := time.Since(start)

	// Paced: every peer at half its own best rate.
	// A run with a problem (decisions the failover made locally instead of
	// in Redis) measured something else: the best run is the best clean
	// one, and a library with no clean run fails its targets.
	best := make([]redisRun, len(RedisPeers))
	tainted := make([]bool, len(RedisPeers))
	for i := range RedisPeers {
		clean := slices.DeleteFunc(slices.Clone(runs[i]), func(r redisRun) bool { return r.problem != "" })
		if tainted[i] = len(clean) == 0; tainted[i] {
			clean = runs[i]
		}
		best[i] = slices.MaxFunc(clean, func(a, b redisRun) int { return cmpF(a.res.Rate(), b.res.Rate()) })
	}
	paced := make([]LoadResult, len(RedisPeers))
	pacedProblem := make([]string, len(RedisPeers))
	for i, p := range RedisPeers {
		rate := best[i].res.Rate() * pacedShare
		fmt.Fprintf(os.Stderr, "report: redis paced %s at %.0f/s\n", p.Name, rate)
		inst := insts[i]
		inst.Check()
		paced[i] = Paced(RedisWorkers, rate, redisWarmup, o.Paced, func(w int) CallFunc {
			dec, walk := inst.Worker(), NewWalker(w, len(keys))
			return func() (bool, error) { return dec(keys[walk.Next()]) }
		})
		pacedProblem[i] = inst.Check()
	}

	// Report.
	fmt.Fprintf(w, "## Redis store (%d rounds × %v per library, %v in all; then %v paced per library)\n\n",
		o.Rounds, o.Time, loopTime.Round(time.Second), o.Paced)
	fmt.Fprintf(w, "One local redis-server %s (`redis-server --port N --save '' --appendonly no`), started by the report. "+
		"%d goroutines in this process, %d keys (`key-0` … `key-%d`, every key created before the rounds), "+
		"each goroutine walking all keys from its own offset with its own stride. The same limit for every library: "+
		"%d per second, burst %d, per key, so no call is refused (`refused` proves it). (sluice gives each key the TTL "+
		"of its state's reset-after, 1 ms after one unit at this limit, so with a key coming back every ~0.2 s its calls "+
		"find no key and write a new key; the peers keep their keys for at least 1 s.) "+
		"decisions/s: the best round, median: the median round. redis CPU, client CPU: the share of one core that "+
		"redis-server and this process (the client) used during the best round (from /proc; redis-server is single-threaded, "+
		"so 100%% means Redis is the bottleneck); redis CPU µs/decision: redis-server's CPU time per decision, network "+
		"included; script µs/call: INFO commandstats' usec_per_call of EVALSHA (EVAL for throttled), the script's run "+
		"(for sluice one run decides a batch of calls, see redis.WithBatching); decisions/call: decisions per script run "+
		"inside Redis; irq, others: the share of one core spent in interrupts and softirqs (the kernel's loopback "+
		"networking) and by everything else on the machine (other work, kernel threads) during that round.\n\n",
		version, RedisWorkers, RedisKeys, RedisKeys-1, Rate, Rate)
	var sluiceBest, sluiceServerBest, fastestPeer float64
	fastestName := ""
	rows := [][]string{{"library", "decisions/s", "median", "× sluice", "redis CPU", "client CPU", "redis CPU µs/decision", "script µs/call", "decisions/call", "irq", "others", "errors", "refused"}}
	for i, p := range RedisPeers {
		b := best[i]
		rates := make([]float64, len(runs[i]))
		errs, refused := int64(0), int64(0)
		for j, r := range runs[i] {
			rates[j] = r.res.Rate()
			errs += r.res.Errors
			refused += r.res.Refused
		}
		switch {
		case p.Name == "sluice-redis":
			sluiceBest = b.res.Rate()
		case p.Name == "sluice-redis-server":
			sluiceServerBest = b.res.Rate()
		case b.res.Rate() > fastestPeer:
			fastestPeer, fastestName = b.res.Rate(), p.Name
		}
		_ = fastestName
		rows = append(rows, []string{p.Name, fmt.Sprintf("%.0f", b.res.Rate()), fmt.Sprintf("%.0f", median(rates)),
			"", pctOf(b.redisCPU, b.res.Elapsed), pctOf(b.selfCPU, b.res.Elapsed),
			perCall(b.redisCPU, b.res.Calls), fmt.Sprintf("%.1f", b.scriptUs), perScript(b.res.Calls, b.scriptCalls), pctOf(b.machine.IRQ, b.res.Elapsed),
			pctOf(max(0, b.machine.Busy-b.machine.IRQ-b.redisCPU-b.selfCPU), b.res.Elapsed),
			strconv.FormatInt(errs, 10), strconv.FormatInt(refused, 10)})
	}
	for i := range rows[1:] {
		rows[i+1][3] = fmt.Sprintf("%.2f", sluiceBest/best[i].res.Rate())
	}
	bestCeil := make([]ceilingRun, len(ceilings))
	for i, c := range ceilings {
		bestCeil[i] = slices.MaxFunc(ceilRuns[i], func(a, b ceilingRun) int { return cmpF(a.rps, b.rps) })
		rps := make([]float64, len(ceilRuns[i]))
		for j, r := range ceilRuns[i] {
			rps[j] = r.rps
		}
		rows = append(rows, []string{c.name, fmt.Sprintf("%.0f", bestCeil[i].rps), fmt.Sprintf("%.0f", median(rps)),
			fmt.Sprintf("%.2f", sluiceBest/bestCeil[i].rps), pctOf(bestCeil[i].redisCPU, bestCeil[i].elapsed), "-",
			perCall(bestCeil[i].redisCPU, int64(bestCeil[i].calls)), fmt.Sprintf("%.1f", bestCeil[i].scriptUs), "1.0", "-", "-", "-", "-"})
	}
	WriteTable(w, rows)
	fmt.Fprintln(w)
	fmt.Fprintln(w, "× sluice = sluice-redis's decisions/s ÷ this row's (above 1: sluice is faster). Libraries:")
	fmt.Fprintln(w)
	for _, p := range RedisPeers {
		fmt.Fprintf(w, "- `%s`: %s\n", p.Name, p.Lib)
	}
	for i, c := range ceilings {
		fmt.Fprintf(w, "- `%s`: %s, run by redis-benchmark (its own process, pipelined): `%s`\n", c.name, c.what, bestCeil[i].cmd)
	}
	fmt.Fprintln(w)
	for i, p := range RedisPeers {
		for _, r := range runs[i] {
			if r.problem != "" {
				fmt.Fprintf(w, "- **%s**: %s\n", p.Name, r.problem)
			}
			if r.res.FirstErr != nil {
				fmt.Fprintf(w, "- %s: first error: %v\n", p.Name, r.res.FirstErr)
				break
			}
		}
	}

	fmt.Fprintf(w, "\n### One decision's latency at %.0f%% of each library's best rate (%v paced, %d goroutines on a fixed schedule)\n\n",
		pacedShare*100, o.Paced, RedisWorkers)
	fmt.Fprintln(w, "call = from the call's start to its return; schedule = from the time the schedule gave the call "+
		"(includes any time the goroutine fell behind; the wrk2 way of counting).")
	fmt.Fprintln(w)
	rows = [][]string{{"library", "offered/s", "achieved/s", "p50 ms", "p99 ms", "p99.9 ms", "max ms", "p99 schedule ms", "errors"}}
	for i, p := range RedisPeers {
		r := &paced[i]
		rows = append(rows, []string{p.Name, fmt.Sprintf("%.0f", r.Offered), fmt.Sprintf("%.0f", r.Rate()),
			Ms(Pct(r.Lat, 50)), Ms(Pct(r.Lat, 99)), Ms(Pct(r.Lat, 99.9)), Ms(Pct(r.Lat, 100)), Ms(Pct(r.Late, 99)),
			strconv.FormatInt(r.Errors, 10)})
	}
	WriteTable(w, rows)
	fmt.Fprintln(w)
	for i, p := range RedisPeers {
		if pacedProblem[i] != "" {
			fmt.Fprintf(w, "- **%s** (paced): %s\n", p.Name, pacedProblem[i])
		}
	}

	var targets []Target
	invalid := func(i int) string {
		if tainted[i] {
			return " — INVALID: every round had decisions by the local fallback, not Redis"
		}
		return ""
	}
	sluices := []struct {
		name string
		rate float64
		i    int
	}{{"sluice-redis", sluiceBest, peerIndex("sluice-redis")}, {"sluice-redis-server", sluiceServerBest, peerIndex("sluice-redis-server")}}
	for _, s := range sluices {
		targets = append(targets, Target{s.rate/fastestPeer >= TargetRedisSpeedup && !tainted[s.i], fmt.Sprintf(
			"Redis: %s %.0f decisions/s ÷ fastest peer %s %.0f = %.2f×, target ≥ %.0f×%s",
			s.name, s.rate, fastestName, fastestPeer, s.rate/fastestPeer, TargetRedisSpeedup, invalid(s.i))})
	}
	for _, s := range sluices {
		targets = append(targets, Target{s.rate/bestCeil[0].rps >= TargetRedisCeiling && !tainted[s.i], fmt.Sprintf(
			"Redis: %s %.0f decisions/s ÷ pipelined ceiling (%s, redis-benchmark -P %d) %.0f = %.0f%%, target ≥ %.0f%% "+
				"(÷ sluice's own script pipelined, %.0f: %.0f%%)%s",
			s.name, s.rate, ceilings[0].name, ceilingPipeline, bestCeil[0].rps, 100*s.rate/bestCeil[0].rps, 100*TargetRedisCeiling,
			bestCeil[1].rps, 100*s.rate/bestCeil[1].rps, invalid(s.i))})
	}
	for i, p := range RedisPeers {
		if !strings.HasPrefix(p.Name, "sluice") {
			continue
		}
		r := &paced[i]
		p99 := Pct(r.Lat, 99)
		note := ""
		if pacedProblem[i] != "" {
			note = " — INVALID: " + pacedProblem[i]
		}
		targets = append(targets, Target{p99 <= TargetRedisP99 && r.Errors == 0 && pacedProblem[i] == "", fmt.Sprintf(
			"Redis: %s p99 of one decision at %.0f/s (%.0f%% of its best): %s ms (schedule: %s ms), target ≤ %s ms%s",
			p.Name, r.Offered, pacedShare*100, Ms(p99), Ms(Pct(r.Late, 99)), Ms(TargetRedisP99), note)})
	}
	return targets, nil
}

// createKeys makes one decision per key, from RedisWorkers goroutines.
func createKeys(inst RedisInstance, keys []string) error {
	errc := make(chan error, RedisWorkers)
	for w := range RedisWorkers {
		go func() {
			dec := inst.Worker()
			for i := w; i < len(keys); i += RedisWorkers {
				if _, err := dec(keys[i]); err != nil {
					errc <- err
					return
				}
			}
			errc <- nil
		}()
	}
	var first error
	for range RedisWorkers {
		if err := <-errc; err != nil && first == nil {
			first = err
		}
	}
	return first
}

// measureRedis runs one closed loop of RedisWorkers goroutines on inst.
func measureRedis(srv *RedisServer, inst RedisInstance, keys []string, d time.Duration) redisRun {
	var run redisRun
	var r0, s0 time.Duration
	var m0 MachineCPU
	run.res = ClosedLoopHooks(RedisWorkers, redisWarmup, d, func(w int) CallFunc {
		dec, walk := inst.Worker(), NewWalker(w, len(keys))
		return func() (bool, error) { return dec(keys[walk.Next()]) }
	}, Hooks{Begin: func() {
		srv.Do("CONFIG", "RESETSTAT")
		r0, s0, m0 = CPUTime(srv.Pid()), CPUTime(0), ReadMachineCPU()
	}, End: func() {
		run.redisCPU, run.selfCPU, run.machine = CPUTime(srv.Pid())-r0, CPUTime(0)-s0, ReadMachineCPU().Sub(m0)
		run.scriptUs, run.scriptCalls = scriptUsec(srv)
	}})
	run.problem = inst.Check()
	return run
}

// scriptUsec is Redis's usec_per_call of the script command most called
// (EVALSHA or EVAL) since the last CONFIG RESETSTAT — the time a script
// run takes inside Redis, the commands it calls included — and its number
// of calls.
func scriptUsec(srv *RedisServer) (usecPerCall, calls float64) {
	v, err := srv.Do("INFO", "commandstats")
	if err != nil {
		return 0, 0
	}
	s, _ := v.(string)
	most, usec := 0.0, 0.0
	for _, l := range strings.Split(s, "\r\n") {
		if !strings.HasPrefix(l, "cmdstat_evalsha:") && !strings.HasPrefix(l, "cmdstat_eval:") {
			continue
		}
		var calls, per float64
		for _, f := range strings.Split(l[strings.IndexByte(l, ':')+1:], ",") {
			k, v, _ := strings.Cut(f, "=")
			switch k {
			case "calls":
				calls, _ = strconv.ParseFloat(v, 64)
			case "usec_per_call":
				per, _ = strconv.ParseFloat(v, 64)
			}
		}
		if calls > most {
			most, usec = calls, per
		}
	}
	return usec, most
}

// runCeiling runs redis-benchmark pipelined: a calibration run, then one
// sized to last about d.
func runCeiling(srv *RedisServer, bin, sha string, c ceiling, d time.Duration) (ceilingRun, error) {
	do := func(n int) (ceilingRun, error) {
		args := append([]string{"-h", "127.0.0.1", "-p", strconv.Itoa(srv.Port), "-c", strconv.Itoa(RedisWorkers),
			"-P", strconv.Itoa(ceilingPipeline), "-n", strconv.Itoa(n), "-r", strconv.Itoa(RedisKeys), "--csv",
			"EVALSHA", sha}, c.args...)
		srv.Do("CONFIG", "RESETSTAT")
		r0, t0 := CPUTime(srv.Pid()), time.Now()
		out, err := exec.Command(bin, args...).Output()
		cpu, elapsed := CPUTime(srv.Pid())-r0, time.Since(t0)
		if err != nil {
			return ceilingRun{}, fmt.Errorf("redis-benchmark %s: %w", c.name, err)
		}
		recs, err := csv.NewReader(strings.NewReader(string(out))).ReadAll()
		if err != nil || len(recs) < 2 || len(recs[1]) < 7 {
			return ceilingRun{}, fmt.Errorf("redis-benchmark %s: unexpected output %q", c.name, out)
		}
		rps, err := strconv.ParseFloat(recs[1][1], 64)
		if err != nil {
			return ceilingRun{}, fmt.Errorf("redis-benchmark %s: %q: %w", c.name, out, err)
		}
		usec, _ := scriptUsec(srv)
		q := make([]string, len(args))
		for i, a := range args {
			switch {
			case a == "":
				a = "''"
			case a == sha:
				a = "<sha>"
			}
			q[i] = a
		}
		return ceilingRun{rps: rps, p50: recs[1][4], p99: recs[1][6], redisCPU: cpu, elapsed: elapsed, calls: n,
			scriptUs: usec, cmd: "redis-benchmark " + strings.Join(q, " ")}, nil
	}
	cal, err := do(ceilingMinRequests)
	if err != nil {
		return cal, err
	}
	return do(max(ceilingMinRequests, int(cal.rps*d.Seconds())))
}

// profileSelf starts a CPU profile of this process into file; the returned
// function stops it.
func profileSelf(file string) func() {
	f, err := os.Create(file)
	if err != nil {
		fmt.Fprintf(os.Stderr, "report: profile: %v\n", err)
		return func() {}
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		fmt.Fprintf(os.Stderr, "report: profile: %v\n", err)
		return func() {}
	}
	return func() { pprof.StopCPUProfile(); f.Close() }
}

func perCall(cpu time.Duration, calls int64) string {
	if calls <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f", float64(cpu.Nanoseconds())/1e3/float64(calls))
}

func pctOf(cpu, wall time.Duration) string {
	if wall <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f%%", 100*cpu.Seconds()/wall.Seconds())
}

func cmpF(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	v = slices.Clone(v)
	slices.Sort(v)
	n := len(v)
	if n%2 == 1 {
		return v[n/2]
	}
	return (v[n/2-1] + v[n/2]) / 2
}

// perScript formats decisions per script run, or "-" when unknown.
func perScript(decisions int64, scriptCalls float64) string {
	if scriptCalls <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f", float64(decisions)/scriptCalls)
}

// peerIndex returns the index of the Redis peer called name, or -1.
func peerIndex(name string) int {
	return slices.IndexFunc(RedisPeers, func(p RedisPeer) bool { return p.Name == name })
}
