package degrade

import (
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// Two reads closer than the cgroup's CPU counter can tell apart (a sample
// an operator asks for just as the server's own is taken) are no window:
// the second reports the share of the last window measured, not the few
// µs of CPU counted over a wall time that rounds to 0 (infinite, read as
// the whole CPU, which raised the level), and the next read measures from
// the last real one. A read whose time is before the last one's (two
// samples taking the lock in the other order) is no window either.
func TestCPUOfAWindowTooShortToMeasureIsTheLastShare(t *testing.T) {
	root := fakeTree(t, map[string]string{
		"proc/self/cgroup":        "0::/svc/sluice\n",
		"sys/svc/sluice/cpu.stat": "usage_usec 1000000\n",
		"sys/svc/sluice/cpu.max":  "150000 100000\n", // 1.5 cores
	})
	stat := filepath.Join(root, "sys/svc/sluice/cpu.stat")
	r := &resources{sysfs: filepath.Join(root, "sys"), proc: filepath.Join(root, "proc")}
	t0 := time.Unix(100, 0)
	r.read(t0)
	// 0.6 s of CPU in 1 s of a 1.5-core quota: 0.4.
	os.WriteFile(stat, []byte("usage_usec 1600000\n"), 0o644)
	t1 := t0.Add(time.Second)
	if cpu, _ := r.read(t1); cpu < 0.3999 || cpu > 0.4001 {
		t.Fatalf("cpu %v, want 0.4", cpu)
	}
	os.WriteFile(stat, []byte("usage_usec 1600005\n"), 0o644)
	if cpu, _ := r.read(t1.Add(500 * time.Nanosecond)); cpu < 0.3999 || cpu > 0.4001 {
		t.Errorf("a read 500ns after the last: cpu %v, want the last window's 0.4", cpu)
	}
	if cpu, _ := r.read(t1.Add(-time.Millisecond)); cpu < 0.3999 || cpu > 0.4001 {
		t.Errorf("a read before the last: cpu %v, want the last window's 0.4", cpu)
	}
	// 1.2 s more in the second after t1: 0.8, measured from t1.
	os.WriteFile(stat, []byte("usage_usec 2800000\n"), 0o644)
	if cpu, _ := r.read(t1.Add(time.Second)); cpu < 0.7999 || cpu > 0.8001 {
		t.Errorf("the next read: cpu %v, want 0.8 over the second since the last window", cpu)
	}
}

// The kernel counts a running task's CPU time at its scheduler ticks (every
// 1 to 10 ms; the host's /proc/stat in 10 ms jiffies), not as it is spent:
// over a window of a few ticks the count is a whole number of them, and a
// process using a tenth of its core read 0 in one 10 ms window and 0.8 in
// the next (two threads' ticks landing), entering a level of cpu: 0.8 at
// once. A window shorter than minCPUWindow (100 ms, ten ticks at the
// coarsest) reports the last window's share, as a degradation.interval
// under 100 ms samples.
func TestCPUOfAWindowOfAFewTicksIsTheLastShare(t *testing.T) {
	root := fakeTree(t, map[string]string{
		"proc/self/cgroup":        "0::/svc/sluice\n",
		"sys/svc/sluice/cpu.stat": "usage_usec 0\n",
		"sys/svc/sluice/cpu.max":  "100000 100000\n", // 1 core
	})
	stat := filepath.Join(root, "sys/svc/sluice/cpu.stat")
	r := &resources{sysfs: filepath.Join(root, "sys"), proc: filepath.Join(root, "proc")}
	t0 := time.Unix(100, 0)
	r.read(t0)
	os.WriteFile(stat, []byte("usage_usec 100000\n"), 0o644) // 0.1 s in 1 s
	t1 := t0.Add(time.Second)
	if cpu, _ := r.read(t1); cpu < 0.0999 || cpu > 0.1001 {
		t.Fatalf("cpu %v, want 0.1", cpu)
	}
	os.WriteFile(stat, []byte("usage_usec 108000\n"), 0o644) // two 4 ms ticks land
	if cpu, _ := r.read(t1.Add(10 * time.Millisecond)); cpu < 0.0999 || cpu > 0.1001 {
		t.Errorf("a 10ms window of two ticks: cpu %v, want the last window's 0.1", cpu)
	}
	os.WriteFile(stat, []byte("usage_usec 120000\n"), 0o644)
	if cpu, _ := r.read(t1.Add(200 * time.Millisecond)); cpu < 0.0999 || cpu > 0.1001 {
		t.Errorf("200ms after the last window: cpu %v, want 0.1 measured since it", cpu)
	}
}

// A read whose CPU count cannot be read (a file read while it is rewritten,
// a cgroup gone) measures nothing, its share unknown (NaN), and moves no
// window: the next read measured from it the CPU time counted since the
// process started (or since the last good read) over the wall time of one
// window, and read the whole CPU.
func TestCPUAfterAnUnreadableCountIsMeasuredFromTheLastGoodRead(t *testing.T) {
	root := fakeTree(t, map[string]string{
		"proc/self/cgroup":        "0::/svc/sluice\n",
		"sys/svc/sluice/cpu.stat": "usage_usec 50000000\n", // 50 s since it started
		"sys/svc/sluice/cpu.max":  "100000 100000\n",       // 1 core
	})
	stat := filepath.Join(root, "sys/svc/sluice/cpu.stat")
	r := &resources{sysfs: filepath.Join(root, "sys"), proc: filepath.Join(root, "proc")}
	t0 := time.Unix(100, 0)
	os.WriteFile(stat, []byte("user_usec 1\n"), 0o644) // no usage_usec
	r.read(t0)
	os.WriteFile(stat, []byte("usage_usec 50000000\n"), 0o644)
	if cpu, _ := r.read(t0.Add(time.Second)); !math.IsNaN(cpu) {
		t.Errorf("the first good read: cpu %v, want NaN (no window yet)", cpu)
	}
	os.WriteFile(stat, []byte("nonsense\n"), 0o644)
	if cpu, _ := r.read(t0.Add(2 * time.Second)); !math.IsNaN(cpu) {
		t.Errorf("an unreadable count: cpu %v, want NaN (unknown)", cpu)
	}
	os.WriteFile(stat, []byte("usage_usec 50600000\n"), 0o644) // 0.6 s in 2 s
	if cpu, _ := r.read(t0.Add(3 * time.Second)); cpu < 0.2999 || cpu > 0.3001 {
		t.Errorf("cpu %v, want 0.3 over the 2 s since the last good read", cpu)
	}
}
