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
//   - CPU also from the process's own CPU time (/proc/self/stat's utime and
//     stime) against its GOMAXPROCS, at most the cores; the largest share
//     counts. Go code runs on at most GOMAXPROCS threads at once, so a
//     process using that many cores is at its whole capacity, its
//     goroutines waiting for one, however many cores or how much quota is
//     left. GOMAXPROCS is read at every window: the runtime sets its default
//     from the cgroup's quota, rounded up and at least 2, and follows the
//     quota as it changes, so under a quota the quota is the nearer limit,
//     measured with the cgroup. Threads the runtime runs outside GOMAXPROCS
//     (in system calls, in cgo) count in the process's time too, so it may
//     use more than GOMAXPROCS cores: such a share reads 1. The cgroup's use
//     is not measured against GOMAXPROCS: it counts the other processes in
//     the cgroup, which GOMAXPROCS does not bound.
//   - Memory from the cgroup's working set against its limit (v2:
//     memory.max or memory.high, whichever is less; v1:
//     memory.limit_in_bytes, where a limit of 4 EiB or more is none): what
//     it uses (memory.current; v1: memory.usage_in_bytes) less the page
//     cache the kernel reclaims first (memory.stat's inactive_file; v1:
//     total_inactive_file), as the kubelet counts it; without a limit
//     there, the Go runtime's memory against GOMEMLIMIT, counted as the
//     limit counts it (what it holds less what it gave back); without
//     either, 0 (nothing to measure against).
//
// A limit on a parent cgroup (a systemd slice's, a Kubernetes pod's)
// governs the process as its own does: the kernel throttles the parent's
// cgroups when their CPU time adds up to its quota, and reclaims and
// OOM-kills among them when their memory reaches its limit. So each cgroup
// from the process's up to the root of the hierarchy's mount (the
// container's own cgroup in a cgroup namespace: nothing above it is
// visible) is measured in the same way, with its own use, which counts its
// other children's, against its own limit (a parent's CPU quota whatever
// cores the process may run on: its other children may run on others); the
// share is the largest, that of the limit nearest to being reached. Of the
// parents, only those with a limit count. On v1 the process's cgroup's
// memory.stat also names the least memory limit of its parents
// (hierarchical_memory_limit), those above the mount's root included,
// which its own working set is measured against.
//
// Each controller is read where cgroupDirs finds it: on its v1 hierarchy
// when it has one, else in the v2 directory. The process's cgroup is found
// again at a read after /proc/self/cgroup changed (the process was moved):
// the first window in its new cgroup measures only the process's own CPU.
//
// A CPU count that cannot be read (the process's cgroup's, or /proc/stat
// without one) makes the share unknown, NaN: not 0, which is an idle
// process's. A memory source that cannot be read reads as 0, as memory
// without a limit does. It is safe for concurrent use.
type resources struct {
	sysfs, proc string // "/sys/fs/cgroup" and "/proc"; a test's fake trees
	// cpus returns the cores the process may run on and its GOMAXPROCS;
	// nil reads the runtime's.
	cpus func() (numCPU, maxProcs int)

	// cgroup is the process's cgroup, found from cgroupFile, the
	// /proc/self/cgroup it was found from; found once it was.
	cgroup     cgroupDirs
	cgroupFile []byte
	found      bool

	mu        sync.Mutex
	prevAt    time.Time
	prevUsage []int64   // CPU time of each cgroup of cpuLevels, µs; -1 when not read
	prevHost  [2]uint64 // host busy and total jiffies
	prevProc  int64     // the process's CPU time, clock ticks; -1 when not read
	lastCPU   float64   // the CPU share of the last window measured
	measured  bool      // whether a window was measured: lastCPU is one's
	unlimited bool      // whether the last memory read found no limit
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

// dirs returns the process's cgroup directories, found again whenever its
// /proc/self/cgroup changed since they were found: the process was moved to
// another cgroup. When the directories change, the cgroups' CPU counts
// start a new window, the new cgroup's count being of other work. A
// /proc/self/cgroup that cannot be read keeps the directories found. Call
// it with mu held.
func (r *resources) dirs() cgroupDirs {
	b, err := os.ReadFile(filepath.Join(r.proc, "self", "cgroup"))
	switch {
	case err != nil && !r.found:
		r.found = true
	case err != nil, r.found && bytes.Equal(b, r.cgroupFile):
	default:
		if d := cgroupOf(b, r.proc, r.sysfs); d != r.cgroup {
			r.cgroup, r.prevUsage = d, nil
		}
		r.cgroupFile, r.found = b, true
	}
	return r.cgroup
}

// read returns the CPU share used since the previous read that counted
// the CPU time (NaN, unknown, at the first, which only starts a window,
// and when the count cannot be read; that of the read before when the
// previous one is less than minCPUWindow before now, or after it: NaN
// until a window was measured) and the memory share used now.
func (r *resources) read(now time.Time) (cpu, mem float64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	d := r.dirs()
	if !r.prevAt.IsZero() && now.Sub(r.prevAt) < minCPUWindow {
		return r.last(), clamp01(r.memory(d))
	}
	numCPU, maxProcs := runtime.NumCPU(), runtime.GOMAXPROCS(0)
	if r.cpus != nil {
		numCPU, maxProcs = r.cpus()
	}
	var counted bool
	first := r.prevAt.IsZero()
	if d.cpuacct.path != "" || d.v2.path != "" {
		cpu, counted = r.cgroupCPU(d, now, numCPU)
	} else {
		cpu, counted = r.hostCPU()
	}
	if !counted { // no window measured, none started: the next is from the last count
		return math.NaN(), clamp01(r.memory(d))
	}
	cpu = max(cpu, r.processCPU(now, min(maxProcs, numCPU)))
	r.prevAt = now
	if !first {
		r.lastCPU, r.measured = clamp01(cpu), true
	}
	return r.last(), clamp01(r.memory(d))
}

// memoryUnlimited reports whether the last read found no memory limit.
func (r *resources) memoryUnlimited() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.unlimited
}

// last is the CPU share of the last window measured, NaN before any was.
func (r *resources) last() float64 {
	if !r.measured {
		return math.NaN()
	}
	return r.lastCPU
}

// cgroupCPU returns the largest CPU share since the previous count of the
// cgroups of cpuLevels (0 at the first), and whether the process's cgroup's
// CPU time could be read: a read that could not changes nothing. The
// process's cgroup's time is of its quota or numCPU cores, whichever is
// fewer; a parent's of its quota, whatever cores the process may run on:
// its other children may run on others. A parent whose CPU time cannot be
// read, or went back, counts in no window it ends.
func (r *resources) cgroupCPU(d cgroupDirs, now time.Time, numCPU int) (float64, bool) {
	usage, quota := cpuLevels(d)
	v1 := d.cpuacct.path != ""
	leaf, ok := cgroupUsage(usage[0], v1)
	if !ok {
		return 0, false
	}
	prev, prevAt := r.prevUsage, r.prevAt
	r.prevUsage = make([]int64, len(usage))
	var share float64
	for i := range usage {
		q := cgroupQuota(quota[i], d.cpu.path != "")
		r.prevUsage[i] = -1
		if i == 0 {
			r.prevUsage[i] = leaf
		} else if !math.IsInf(q, 1) {
			if u, ok := cgroupUsage(usage[i], v1); ok {
				r.prevUsage[i] = u
			}
		}
		if prevAt.IsZero() || !now.After(prevAt) || i >= len(prev) || prev[i] < 0 || r.prevUsage[i] < prev[i] {
			continue // no window, or no count of this cgroup's at both ends
		}
		wall := float64(now.Sub(prevAt)) / float64(time.Microsecond)
		cores := q
		if i == 0 {
			cores = min(q, float64(max(numCPU, 1)))
		}
		share = max(share, float64(r.prevUsage[i]-prev[i])/(wall*cores))
	}
	return share, true
}

// cpuLevels returns the directories of each cgroup from the process's up
// to its hierarchy's mount root, nearest first: where its CPU time is
// counted (v1's cpuacct hierarchy, else v2's), and where its quota is set
// (v1's cpu hierarchy, else v2's) or "" where there is none.
func cpuLevels(d cgroupDirs) (usage, quota []string) {
	if d.cpuacct.path != "" {
		usage = d.cpuacct.ancestry()
	} else {
		usage = d.v2.ancestry()
	}
	if d.cpu.path != "" {
		quota = d.cpu.ancestry()
	} else {
		quota = d.v2.ancestry()
	}
	// The two hierarchies of v1 are walked up together: a cgroup is the
	// same number of levels up in each.
	quota = append(quota, make([]string, max(len(usage)-len(quota), 0))...)
	return usage, quota[:len(usage)]
}

// cgroupUsage is the CPU time of the cgroup in dir in µs: v1's
// cpuacct.usage (ns, unsigned: past 2⁶³ on a large host's root cgroup),
// else v2's cpu.stat usage_usec.
func cgroupUsage(dir string, v1 bool) (int64, bool) {
	if v1 {
		b, err := os.ReadFile(filepath.Join(dir, "cpuacct.usage"))
		if err != nil {
			return 0, false
		}
		ns, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
		return int64(ns / uint64(time.Microsecond/time.Nanosecond)), err == nil
	}
	return statField(filepath.Join(dir, "cpu.stat"), "usage_usec")
}

// cgroupQuota is the CPU quota in cores of the cgroup in dir (v1's
// cpu.cfs_quota_us over cpu.cfs_period_us, where -1 is none; else v2's
// cpu.max); +Inf when it has none, or dir is "".
func cgroupQuota(dir string, v1 bool) float64 {
	none := math.Inf(1)
	if dir == "" {
		return none
	}
	var quota, period float64
	if v1 {
		q, ok1 := readInt(filepath.Join(dir, "cpu.cfs_quota_us"))
		p, ok2 := readInt(filepath.Join(dir, "cpu.cfs_period_us"))
		if ok1 && ok2 {
			quota, period = float64(q), float64(p)
		}
	} else {
		b, _ := os.ReadFile(filepath.Join(dir, "cpu.max"))
		if f := strings.Fields(string(b)); len(f) == 2 && f[0] != "max" {
			q, e1 := strconv.ParseFloat(f[0], 64)
			p, e2 := strconv.ParseFloat(f[1], 64)
			if e1 == nil && e2 == nil {
				quota, period = q, p
			}
		}
	}
	if quota > 0 && period > 0 {
		return quota / period
	}
	return none
}

// clockTicks is the unit of /proc's CPU times: USER_HZ, 100 a second on
// every Linux architecture.
const clockTicks = 100

// processCPU returns the process's own CPU time since the previous count
// as a share of procs cores; 0 at the first count, when /proc/self/stat
// cannot be read (the next window is then measured from the next count),
// and when its count went back.
func (r *resources) processCPU(now time.Time, procs int) float64 {
	ticks, ok := processTicks(filepath.Join(r.proc, "self", "stat"))
	prev, prevAt := r.prevProc, r.prevAt
	r.prevProc = -1
	if !ok {
		return 0
	}
	r.prevProc = ticks
	if prevAt.IsZero() || !now.After(prevAt) || prev < 0 || ticks < prev || procs < 1 {
		return 0
	}
	wall := now.Sub(prevAt).Seconds()
	return float64(ticks-prev) / clockTicks / (wall * float64(procs))
}

// processTicks reads the CPU time of a /proc/<pid>/stat, its utime and
// stime (clock ticks of every thread, the 14th and 15th fields). The
// process's name, the second field, is in parentheses and may hold spaces
// and parentheses of its own: the fields are counted after its last ")".
func processTicks(path string) (int64, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, false
	}
	utime, e1 := strconv.ParseInt(f[11], 10, 64)
	stime, e2 := strconv.ParseInt(f[12], 10, 64)
	if e1 != nil || e2 != nil || utime < 0 || stime < 0 || utime > math.MaxInt64-stime {
		return 0, false
	}
	return utime + stime, true
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

// memory is the share of the memory limit in use, of the cgroup in d; 0,
// with r.unlimited set, when neither a cgroup nor GOMEMLIMIT limits it.
// r.mu must be held.
func (r *resources) memory(d cgroupDirs) float64 {
	r.unlimited = false
	if share, ok := cgroupMemory(d); ok {
		return share
	}
	limit := debug.SetMemoryLimit(-1)
	if limit <= 0 || limit == math.MaxInt64 {
		r.unlimited = true
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

// cgroupMemory is the largest share of its limit of the working set of
// each cgroup from the process's up to its hierarchy's mount root, and
// whether any has a limit: v1's files when the memory controller is on v1,
// else v2's. A cgroup whose use cannot be read is measured by the nearest
// below it whose use could be, a part of its own. On v1, the process's
// cgroup's limit is also its memory.stat's hierarchical_memory_limit, the
// least of its own and its parents', those above the mount's root
// included.
func cgroupMemory(d cgroupDirs) (float64, bool) {
	dir, usageFile, cacheKey := d.v2, "memory.current", "inactive_file"
	if d.memory.path != "" {
		dir, usageFile, cacheKey = d.memory, "memory.usage_in_bytes", "total_inactive_file"
	}
	var share float64
	var limited bool
	used := int64(-1) // the working set of the cgroup, or of the nearest below
	for i, p := range dir.ancestry() {
		if u, ok := readInt(filepath.Join(p, usageFile)); ok {
			used = u
			if cache, ok := statField(filepath.Join(p, "memory.stat"), cacheKey); ok {
				used = max(used-cache, 0)
			}
		}
		limit := memoryLimit(p, d.memory.path != "", i == 0)
		if limit == 0 || used < 0 {
			continue
		}
		share, limited = max(share, float64(used)/float64(limit)), true
	}
	return share, limited
}

// memoryLimit is the memory limit in bytes of the cgroup in dir, 0 for
// none: v1's memory.limit_in_bytes, and for the process's own cgroup (leaf)
// its memory.stat's hierarchical_memory_limit; v2's memory.max and
// memory.high, above which the kernel throttles the cgroup and reclaims
// from it hard; the least of those it has.
func memoryLimit(dir string, v1, leaf bool) int64 {
	var limit int64
	least := func(n int64, ok bool) {
		if ok && n > 0 && n < noMemoryLimit && (limit == 0 || n < limit) {
			limit = n
		}
	}
	if v1 {
		least(readInt(filepath.Join(dir, "memory.limit_in_bytes")))
		if leaf {
			least(statField(filepath.Join(dir, "memory.stat"), "hierarchical_memory_limit"))
		}
		return limit
	}
	least(readInt(filepath.Join(dir, "memory.max"))) // "max" is none
	least(readInt(filepath.Join(dir, "memory.high")))
	return limit
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
