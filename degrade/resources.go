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
//   - CPU from the process's cgroup between two reads: its CPU time (v2:
//     cpu.stat's usage_usec; v1: cpuacct.usage) against its quota (v2:
//     cpu.max; v1: cpu.cfs_quota_us of cpu.cfs_period_us) or the cores the
//     process may run on, whichever is fewer (the cores when there is no
//     quota), over at least minCPUWindow; without a cgroup, the host's busy
//     share from /proc/stat.
//   - Memory from the cgroup's working set against its limit (v2:
//     memory.max; v1: memory.limit_in_bytes, where a limit of 4 EiB or more
//     is none): what it uses (memory.current; v1: memory.usage_in_bytes)
//     less the page cache the kernel reclaims first (memory.stat's
//     inactive_file; v1: total_inactive_file), as the kubelet counts it;
//     without a limit there, the Go runtime's memory against GOMEMLIMIT,
//     counted as the limit counts it (what it holds less what it gave
//     back); without either, 0 (nothing to measure against).
//
// Each controller is read where cgroupDirs finds it: on its v1 hierarchy
// when it has one, else in the v2 directory.
//
// A source that cannot be read reads as 0: a missing signal never raises
// the level. It is safe for concurrent use.
type resources struct {
	sysfs, proc string // "/sys/fs/cgroup" and "/proc"; a test's fake trees

	once   sync.Once
	cgroup cgroupDirs // the process's, found once

	mu        sync.Mutex
	prevAt    time.Time
	prevUsage int64     // cgroup CPU time, µs
	prevHost  [2]uint64 // host busy and total jiffies
	lastCPU   float64   // the CPU share of the last window measured
	sample    []metrics.Sample
}

// minCPUWindow is the shortest time between two reads that the CPU share
// is measured over: the kernel counts a running task's CPU time at its
// scheduler ticks (every 1 to 10 ms) and the host's in 10 ms jiffies, so
// over a window of a few ticks the count is a whole number of them, and the
// share noise between 0 and the whole CPU. Over ten ticks at the coarsest,
// a tick is a tenth of a core's share at most. A read sooner after the
// last, or at a time before it, reports the last window's share and leaves
// the window open.
const minCPUWindow = 100 * time.Millisecond

func newResources() *resources {
	return &resources{sysfs: "/sys/fs/cgroup", proc: "/proc",
		sample: []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}}
}

// dirs returns the process's cgroup directories, found at the first call.
func (r *resources) dirs() cgroupDirs {
	r.once.Do(func() { r.cgroup = findCgroup(r.proc, r.sysfs) })
	return r.cgroup
}

// read returns the CPU share used since the previous read that counted
// the CPU time (0 at the first, and when the count cannot be read; that of
// the read before when the previous one is less than minCPUWindow before
// now, or after it) and the memory share used now.
func (r *resources) read(now time.Time) (cpu, mem float64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.prevAt.IsZero() && now.Sub(r.prevAt) < minCPUWindow {
		return r.lastCPU, clamp01(r.memory())
	}
	var counted bool
	if d := r.dirs(); d.cpuacct != "" || d.v2 != "" {
		cpu, counted = r.cgroupCPU(d, now)
	} else {
		cpu, counted = r.hostCPU()
	}
	if !counted { // no window measured, none started: the next is from the last count
		return 0, clamp01(r.memory())
	}
	r.prevAt = now
	r.lastCPU = clamp01(cpu)
	return r.lastCPU, clamp01(r.memory())
}

// cgroupCPU returns the cgroup's CPU share since the previous count (0 at
// the first), and whether its CPU time could be read: a read that could
// not changes nothing.
func (r *resources) cgroupCPU(d cgroupDirs, now time.Time) (float64, bool) {
	usage, ok := cgroupUsage(d)
	if !ok {
		return 0, false
	}
	prevUsage, prevAt := r.prevUsage, r.prevAt
	r.prevUsage = usage
	if prevAt.IsZero() || !now.After(prevAt) {
		return 0, true
	}
	wall := float64(now.Sub(prevAt)) / float64(time.Microsecond)
	return float64(usage-prevUsage) / (wall * cgroupCores(d)), true
}

// cgroupUsage is the cgroup's CPU time in µs: v1's cpuacct.usage (ns),
// else v2's cpu.stat usage_usec.
func cgroupUsage(d cgroupDirs) (int64, bool) {
	if d.cpuacct != "" {
		ns, ok := readInt(filepath.Join(d.cpuacct, "cpuacct.usage"))
		return ns / int64(time.Microsecond/time.Nanosecond), ok
	}
	return statField(filepath.Join(d.v2, "cpu.stat"), "usage_usec")
}

// cgroupCores is the cgroup's CPU quota in cores (v1's cpu.cfs_quota_us
// over cpu.cfs_period_us, where -1 is none; else v2's cpu.max), at most
// the cores the process may run on (runtime.NumCPU), which it is when
// there is no quota.
func cgroupCores(d cgroupDirs) float64 {
	var quota, period float64
	if d.cpu != "" {
		q, ok1 := readInt(filepath.Join(d.cpu, "cpu.cfs_quota_us"))
		p, ok2 := readInt(filepath.Join(d.cpu, "cpu.cfs_period_us"))
		if ok1 && ok2 {
			quota, period = float64(q), float64(p)
		}
	} else if d.v2 != "" {
		b, _ := os.ReadFile(filepath.Join(d.v2, "cpu.max"))
		if f := strings.Fields(string(b)); len(f) == 2 && f[0] != "max" {
			q, e1 := strconv.ParseFloat(f[0], 64)
			p, e2 := strconv.ParseFloat(f[1], 64)
			if e1 == nil && e2 == nil {
				quota, period = q, p
			}
		}
	}
	cores := float64(runtime.NumCPU())
	if quota > 0 && period > 0 {
		return min(quota/period, cores)
	}
	return cores
}

// hostCPU is the host's busy share of jiffies since the previous read; 0
// at the first read, and when a count went back since the previous one.
// It reports whether /proc/stat could be read: a read that could not
// changes nothing.
func (r *resources) hostCPU() (float64, bool) {
	b, err := os.ReadFile(filepath.Join(r.proc, "stat"))
	if err != nil {
		return 0, false
	}
	line, _, _ := bytes.Cut(b, []byte("\n"))
	f := strings.Fields(string(line))
	if len(f) < 5 || f[0] != "cpu" {
		return 0, false
	}
	var total, idle uint64
	for i, s := range f[1:] {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return 0, false
		}
		if i >= 8 { // guest and guest_nice are already in user and nice
			break
		}
		total += v
		if i == 3 || i == 4 { // idle, iowait
			idle += v
		}
	}
	prev, busy := r.prevHost, total-idle
	r.prevHost = [2]uint64{busy, total}
	if prev[1] == 0 || total <= prev[1] || busy < prev[0] {
		return 0, true // no window yet, or counts gone back: nothing measured
	}
	return float64(busy-prev[0]) / float64(total-prev[1]), true
}

// memory is the share of the memory limit in use.
func (r *resources) memory() float64 {
	if share, ok := cgroupMemory(r.dirs()); ok {
		return share
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

// noMemoryLimit is the least cgroup v1 memory limit that is none: v1 shows
// an unlimited cgroup's as its largest page count in bytes, just under
// 2⁶³ (how far under depends on the page size).
const noMemoryLimit = 1 << 62

// cgroupMemory is the cgroup's working set as a share of its limit, and
// whether it has a limit: v1's files when the memory controller is on v1,
// else v2's.
func cgroupMemory(d cgroupDirs) (float64, bool) {
	dir, limitFile, usageFile, cacheKey := d.v2, "memory.max", "memory.current", "inactive_file"
	if d.memory != "" {
		dir, limitFile, usageFile, cacheKey = d.memory, "memory.limit_in_bytes", "memory.usage_in_bytes", "total_inactive_file"
	}
	if dir == "" {
		return 0, false
	}
	limit, ok := readInt(filepath.Join(dir, limitFile)) // v2's "max" is none
	if !ok || limit <= 0 || limit >= noMemoryLimit {
		return 0, false
	}
	used, ok := readInt(filepath.Join(dir, usageFile))
	if !ok {
		return 0, false
	}
	if cache, ok := statField(filepath.Join(dir, "memory.stat"), cacheKey); ok {
		used = max(used-cache, 0)
	}
	return float64(used) / float64(limit), true
}

// readInt reads a file holding one integer.
func readInt(path string) (int64, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	return n, err == nil
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
