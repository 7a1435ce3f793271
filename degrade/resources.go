package degrade

import (
	"bufio"
	"bytes"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"time"
)

// resources reads how much of the CPU and memory the process may use it
// uses, as fractions in [0, 1]:
//
//   - CPU from the process's cgroup (v2: cpu.stat's usage_usec against
//     cpu.max's quota, or every core when it has none) between two reads;
//     without a cgroup v2 hierarchy, the host's busy share from /proc/stat.
//   - Memory from the cgroup's working set against memory.max: its
//     memory.current less the page cache the kernel reclaims first
//     (memory.stat's inactive_file), as the kubelet counts it; without a
//     limit there, the Go runtime's memory against GOMEMLIMIT, counted as
//     the limit counts it (what it holds less what it gave back); without
//     either, 0 (nothing to measure against).
//
// A source that cannot be read reads as 0: a missing signal never raises
// the level. It is safe for concurrent use.
type resources struct {
	sysfs, proc string // "/sys/fs/cgroup" and "/proc"; a test's fake trees

	once   sync.Once
	cgroup string // the process's cgroup v2 directory, "" without one

	mu        sync.Mutex
	prevAt    time.Time
	prevUsage int64     // cgroup CPU time, µs
	prevHost  [2]uint64 // host busy and total jiffies
	lastCPU   float64   // the CPU share of the last window measured
	sample    []metrics.Sample
}

// minCPUWindow is the shortest time between two reads that the CPU share
// is measured over: the cgroup counts CPU time in whole µs, so over a
// shorter window its count is noise (and over a wall time below a µs,
// unbounded). A read sooner after the last, or at a time before it,
// reports the last window's share and leaves the window open.
const minCPUWindow = time.Millisecond

func newResources() *resources {
	return &resources{sysfs: "/sys/fs/cgroup", proc: "/proc",
		sample: []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}}
}

// dir finds the process's cgroup v2 directory: the "0::" line of
// /proc/self/cgroup, under the v2 mount (the hierarchy's root, or its
// "unified" folder on a hybrid host).
func (r *resources) dir() string {
	r.once.Do(func() {
		b, err := os.ReadFile(filepath.Join(r.proc, "self", "cgroup"))
		if err != nil {
			return
		}
		for _, line := range strings.Split(string(b), "\n") {
			rel, ok := strings.CutPrefix(line, "0::")
			if !ok {
				continue
			}
			for _, root := range []string{r.sysfs, filepath.Join(r.sysfs, "unified")} {
				d := filepath.Join(root, filepath.Clean("/"+rel))
				if _, err := os.Stat(filepath.Join(d, "cpu.stat")); err == nil {
					r.cgroup = d
					return
				}
			}
		}
	})
	return r.cgroup
}

// read returns the CPU share used since the previous read (0 at the first;
// that of the read before when the previous one is less than minCPUWindow
// before now, or after it) and the memory share used now.
func (r *resources) read(now time.Time) (cpu, mem float64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.prevAt.IsZero() && now.Sub(r.prevAt) < minCPUWindow {
		return r.lastCPU, clamp01(r.memory())
	}
	if d := r.dir(); d != "" {
		cpu = r.cgroupCPU(d, now)
	} else {
		cpu = r.hostCPU()
	}
	r.prevAt = now
	r.lastCPU = clamp01(cpu)
	return r.lastCPU, clamp01(r.memory())
}

func (r *resources) cgroupCPU(dir string, now time.Time) float64 {
	usage, ok := statField(filepath.Join(dir, "cpu.stat"), "usage_usec")
	if !ok {
		return 0
	}
	prevUsage, prevAt := r.prevUsage, r.prevAt
	r.prevUsage = usage
	if prevAt.IsZero() || !now.After(prevAt) {
		return 0
	}
	cores := float64(runtime.NumCPU())
	if b, err := os.ReadFile(filepath.Join(dir, "cpu.max")); err == nil {
		f := strings.Fields(string(b))
		if len(f) == 2 && f[0] != "max" {
			quota, e1 := strconv.ParseFloat(f[0], 64)
			period, e2 := strconv.ParseFloat(f[1], 64)
			if e1 == nil && e2 == nil && quota > 0 && period > 0 {
				cores = quota / period
			}
		}
	}
	wall := float64(now.Sub(prevAt)) / float64(time.Microsecond)
	return float64(usage-prevUsage) / (wall * cores)
}

// hostCPU is the host's busy share of jiffies since the previous read.
func (r *resources) hostCPU() float64 {
	b, err := os.ReadFile(filepath.Join(r.proc, "stat"))
	if err != nil {
		return 0
	}
	line, _, _ := bytes.Cut(b, []byte("\n"))
	f := strings.Fields(string(line))
	if len(f) < 5 || f[0] != "cpu" {
		return 0
	}
	var total, idle uint64
	for i, s := range f[1:] {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return 0
		}
		if i >= 8 { // guest and guest_nice are already in user and nice
			break
		}
		total += v
		if i == 3 || i == 4 { // idle, iowait
			idle += v
		}
	}
	prev := r.prevHost
	r.prevHost = [2]uint64{total - idle, total}
	if prev[1] == 0 || total <= prev[1] {
		return 0
	}
	return float64(total-idle-prev[0]) / float64(total-prev[1])
}

// memory is the share of the memory limit in use.
func (r *resources) memory() float64 {
	if d := r.dir(); d != "" {
		if limit, err := os.ReadFile(filepath.Join(d, "memory.max")); err == nil {
			if l, err := strconv.ParseFloat(strings.TrimSpace(string(limit)), 64); err == nil && l > 0 {
				if cur, err := os.ReadFile(filepath.Join(d, "memory.current")); err == nil {
					if c, err := strconv.ParseFloat(strings.TrimSpace(string(cur)), 64); err == nil {
						if cache, ok := statField(filepath.Join(d, "memory.stat"), "inactive_file"); ok {
							c = max(c-float64(cache), 0)
						}
						return c / l
					}
				}
			}
		}
	}
	limit := debug.SetMemoryLimit(-1)
	if limit <= 0 || limit == math.MaxInt64 {
		return 0
	}
	metrics.Read(r.sample)
	if r.sample[0].Value.Kind() != metrics.KindUint64 || r.sample[1].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	held, released := r.sample[0].Value.Uint64(), r.sample[1].Value.Uint64()
	return float64(held-min(released, held)) / float64(limit)
}

// statField reads one "key value" line of a cgroup stat file.
func statField(path, key string) (int64, bool) {
	f, err := os.Open(path)
	if err != nil {
		return 0, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), " ")
		if ok && k == key {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return n, err == nil
		}
	}
	return 0, false
}

func clamp01(v float64) float64 {
	switch {
	case v < 0 || math.IsNaN(v):
		return 0
	case v > 1:
		return 1
	}
	return v
}
