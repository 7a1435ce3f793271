package bench

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// RedisServer is a redis-server process started for a benchmark: no
// persistence, on a free loopback port, its files in a temporary directory.
type RedisServer struct {
	Addr string
	Port int
	cmd  *exec.Cmd
	dir  string
	done chan struct{}
}

// StartRedis starts redis-server without persistence (--save "" --appendonly no) and
// returns when it answers PING.
func StartRedis() (*RedisServer, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, fmt.Errorf("redis-server not found (apt-get install redis-server): %w", err)
	}
	dir, err := os.MkdirTemp("", "sluice-bench-redis-")
	if err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	s := &RedisServer{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), Port: port, dir: dir, done: make(chan struct{})}
	s.cmd = exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--dir", dir, "--logfile", filepath.Join(dir, "redis.log"), "--daemonize", "no", "--protected-mode", "no")
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := s.cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	go func() { s.cmd.Wait(); close(s.done) }()
	c := s.Client(1)
	defer c.Close()
	deadline := time.Now().Add(15 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err := c.Ping(ctx).Err()
		cancel()
		if err == nil {
			return s, nil
		}
		select {
		case <-s.done:
			log, _ := os.ReadFile(filepath.Join(dir, "redis.log"))
			os.RemoveAll(dir)
			return nil, fmt.Errorf("redis-server exited: %s", bytes.TrimSpace(log))
		default:
		}
		if time.Now().After(deadline) {
			s.Stop()
			return nil, fmt.Errorf("redis-server at %s: no PING answer: %w", s.Addr, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Pid returns the server's process id.
func (s *RedisServer) Pid() int { return s.cmd.Process.Pid }

// Client returns a go-redis client with poolSize connections.
func (s *RedisServer) Client(poolSize int) *goredis.Client {
	return goredis.NewClient(&goredis.Options{Addr: s.Addr, PoolSize: poolSize, MinIdleConns: poolSize})
}

// Do runs one command on a fresh connection.
func (s *RedisServer) Do(args ...any) (any, error) {
	c := s.Client(1)
	defer c.Close()
	return c.Do(context.Background(), args...).Result()
}

// Stop kills the server and removes its files.
func (s *RedisServer) Stop() {
	s.cmd.Process.Kill()
	<-s.done
	os.RemoveAll(s.dir)
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// CPUTime returns the user+system CPU time process pid has used so far
// (all its threads), from /proc/<pid>/stat; pid 0 is this process.
func CPUTime(pid int) time.Duration {
	if pid == 0 {
		var ru syscall.Rusage
		if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
			return 0
		}
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// Fields after the command (which is in parentheses and may hold spaces).
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64) // field 14: utime
	st, _ := strconv.ParseInt(f[12], 10, 64) // field 15: stime
	return time.Duration(ut+st) * time.Second / clockTicks
}

// clockTicks is USER_HZ, the unit of /proc/<pid>/stat times: 100 on Linux.
const clockTicks = 100

func numCPU() int { return runtime.NumCPU() }

// MachineCPU is the CPU time all cores of the machine have spent so far,
// from /proc/stat.
type MachineCPU struct {
	// Busy is everything but idle and iowait (user, nice, system, irq,
	// softirq, steal).
	Busy time.Duration
	// IRQ is the part spent in interrupts and softirqs: for a loopback
	// benchmark mostly the kernel's network processing, which no process
	// is charged for.
	IRQ time.Duration
}

// ReadMachineCPU reads /proc/stat.
func ReadMachineCPU() MachineCPU {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return MachineCPU{}
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return MachineCPU{}
	}
	var busy, irq int64
	for i, v := range f[1:9] {
		n, _ := strconv.ParseInt(v, 10, 64)
		switch i {
		case 3, 4: // idle, iowait
		case 5, 6: // irq, softirq
			busy += n
			irq += n
		default:
			busy += n
		}
	}
	return MachineCPU{Busy: time.Duration(busy) * time.Second / clockTicks, IRQ: time.Duration(irq) * time.Second / clockTicks}
}

// Sub returns m − o.
func (m MachineCPU) Sub(o MachineCPU) MachineCPU {
	return MachineCPU{Busy: m.Busy - o.Busy, IRQ: m.IRQ - o.IRQ}
}

// LoadAvg returns /proc/loadavg's three averages.
func LoadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

// Child is a helper process: this program again, with arguments that make
// it serve something. It prints one line of "name=value" words when ready
// and exits when its standard input closes.
type Child struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	done  chan struct{}
	// Vars are the words of its ready line.
	Vars map[string]string
}

// StartChild starts self with args and waits for its ready line.
func StartChild(self string, env []string, args ...string) (*Child, error) {
	cmd := exec.Command(self, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	c := &Child{cmd: cmd, stdin: stdin, done: make(chan struct{}), Vars: map[string]string{}}
	line := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		if sc.Scan() {
			line <- sc.Text()
		}
		close(line)
		io.Copy(io.Discard, stdout)
	}()
	go func() { cmd.Wait(); close(c.done) }()
	select {
	case l, ok := <-line:
		if !ok {
			<-c.done
			return nil, fmt.Errorf("%s %s: exited before it was ready", filepath.Base(self), strings.Join(args, " "))
		}
		for _, w := range strings.Fields(l) {
			if k, v, ok := strings.Cut(w, "="); ok {
				c.Vars[k] = v
			}
		}
		return c, nil
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		return nil, errors.New("child not ready after 30s")
	}
}

// Pid returns the child's process id.
func (c *Child) Pid() int { return c.cmd.Process.Pid }

// Stop closes the child's standard input and waits for it to exit (killing
// it after 10 s).
func (c *Child) Stop() {
	c.stdin.Close()
	select {
	case <-c.done:
	case <-time.After(10 * time.Second):
		c.cmd.Process.Kill()
		<-c.done
	}
}

// ServeUntilStdinCloses prints ready (the child's ready line) and blocks
// until standard input reaches EOF.
func ServeUntilStdinCloses(ready string) {
	fmt.Println(ready)
	io.Copy(io.Discard, os.Stdin)
}

// RuntimeStats is a sample of a Go process's runtime/metrics: what the
// half-load rows read, before and after, to tell where a tail latency comes
// from (garbage collection, or goroutines waiting to run).
type RuntimeStats struct {
	// GCCycles is the number of completed GC cycles; GCCPU the CPU time
	// spent in GC (mark assists, workers, pauses), in seconds.
	GCCycles uint64  `json:"gcCycles"`
	GCCPU    float64 `json:"gcCPU"`
	// GCPauses are the stop-the-world pauses of the GC; SchedLat the times
	// goroutines spent runnable before they ran (the Go scheduler's queue,
	// which includes waiting for the OS to run a thread).
	GCPauses Hist `json:"gcPauses"`
	SchedLat Hist `json:"schedLat"`
}

// Hist is a runtime/metrics histogram: Counts[i] values fell in
// [Buckets[i], Buckets[i+1]) seconds; infinite bounds are written as
// ±math.MaxFloat64.
type Hist struct {
	Counts  []uint64  `json:"counts"`
	Buckets []float64 `json:"buckets"`
}

// ReadRuntimeStats samples this process.
func ReadRuntimeStats() RuntimeStats {
	s := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}, {Name: "/cpu/classes/gc/total:cpu-seconds"},
		{Name: "/sched/pauses/total/gc:seconds"}, {Name: "/sched/latencies:seconds"}}
	metrics.Read(s)
	var r RuntimeStats
	if s[0].Value.Kind() == metrics.KindUint64 {
		r.GCCycles = s[0].Value.Uint64()
	}
	if s[1].Value.Kind() == metrics.KindFloat64 {
		r.GCCPU = s[1].Value.Float64()
	}
	hist := func(v metrics.Value) Hist {
		if v.Kind() != metrics.KindFloat64Histogram {
			return Hist{}
		}
		h := v.Float64Histogram()
		b := slices.Clone(h.Buckets)
		for i, x := range b { // finite, for JSON
			b[i] = max(-math.MaxFloat64, min(x, math.MaxFloat64))
		}
		return Hist{Counts: slices.Clone(h.Counts), Buckets: b}
	}
	r.GCPauses, r.SchedLat = hist(s[2].Value), hist(s[3].Value)
	return r
}

// Sub returns r − o: what happened between two samples of one process.
func (r RuntimeStats) Sub(o RuntimeStats) RuntimeStats {
	return RuntimeStats{GCCycles: r.GCCycles - o.GCCycles, GCCPU: r.GCCPU - o.GCCPU,
		GCPauses: r.GCPauses.Sub(o.GCPauses), SchedLat: r.SchedLat.Sub(o.SchedLat)}
}

// Sub returns h − o (o may be empty).
func (h Hist) Sub(o Hist) Hist {
	out := Hist{Counts: slices.Clone(h.Counts), Buckets: h.Buckets}
	if len(o.Counts) == len(h.Counts) {
		for i := range out.Counts {
			out.Counts[i] -= o.Counts[i]
		}
	}
	return out
}

// Total is the number of values in h.
func (h Hist) Total() uint64 {
	var n uint64
	for _, c := range h.Counts {
		n += c
	}
	return n
}

// Quantile returns the upper bound of the bucket holding the q-quantile
// (0 < q ≤ 1), 0 for an empty histogram.
func (h Hist) Quantile(q float64) time.Duration {
	total := h.Total()
	if total == 0 {
		return 0
	}
	want := uint64(math.Ceil(q * float64(total)))
	var n uint64
	for i, c := range h.Counts {
		n += c
		if n >= want && c > 0 {
			upper := h.Buckets[min(i+1, len(h.Buckets)-1)]
			if upper >= math.MaxFloat64 {
				upper = h.Buckets[i]
			}
			return time.Duration(upper * float64(time.Second))
		}
	}
	return 0
}

// RunQueueWait returns the time process pid's threads (pid 0: this process)
// have spent runnable but waiting for a CPU, summed over its threads, from
// /proc/<pid>/task/*/schedstat (exited threads are not counted).
func RunQueueWait(pid int) time.Duration {
	dir := "/proc/self/task"
	if pid != 0 {
		dir = fmt.Sprintf("/proc/%d/task", pid)
	}
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	var sum int64
	for _, t := range tasks {
		b, err := os.ReadFile(filepath.Join(dir, t.Name(), "schedstat"))
		if err != nil {
			continue
		}
		f := strings.Fields(string(b))
		if len(f) < 2 {
			continue
		}
		ns, _ := strconv.ParseInt(f[1], 10, 64) // run queue wait, ns
		sum += ns
	}
	return time.Duration(sum)
}
