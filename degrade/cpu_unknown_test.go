package degrade

import (
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A window whose cgroup CPU count cannot be read (cpu.stat without
// usage_usec, or gone) has no CPU share: the signal is unknown, not 0, the
// share of an idle process. The monitor says so in Signals.CPUUnknown, its
// CPU field 0, and a CPU count read again starts a window whose share is
// measured at the next Sample at least minCPUWindow later.
func TestAnUnreadableCPUCountIsUnknownNotIdle(t *testing.T) {
	root := fakeTree(t, map[string]string{
		"proc/self/cgroup":        "0::/svc/sluice\n",
		"sys/svc/sluice/cpu.stat": "user_usec 1\n",   // no usage_usec
		"sys/svc/sluice/cpu.max":  "100000 100000\n", // 1 core
	})
	stat := filepath.Join(root, "sys/svc/sluice/cpu.stat")
	m := NewMonitor(nil)
	m.res = &resources{sysfs: filepath.Join(root, "sys"), proc: filepath.Join(root, "proc"),
		cpus: func() (int, int) { return 4, 4 }}
	if s := m.Sample(); !s.CPUUnknown || s.CPU != 0 {
		t.Errorf("an unreadable count: CPU unknown %v, CPU %v; want true and 0", s.CPUUnknown, s.CPU)
	}
	os.Remove(stat)
	if s := m.Sample(); !s.CPUUnknown {
		t.Errorf("a count gone: CPU unknown %v, want true", s.CPUUnknown)
	}
	os.WriteFile(stat, []byte("usage_usec 1000000\n"), 0o644)
	if s := m.Sample(); !s.CPUUnknown {
		t.Errorf("the count readable again: CPU unknown %v, want true (its window starts)", s.CPUUnknown)
	}
	time.Sleep(minCPUWindow + 20*time.Millisecond)
	if s := m.Sample(); s.CPUUnknown {
		t.Errorf("a window after the count was readable again: CPU unknown %v, want false", s.CPUUnknown)
	}
}

// Without a cgroup, the host's /proc/stat is the CPU count: unreadable, the
// share is unknown too (NaN from read).
func TestAnUnreadableHostCPUCountIsUnknown(t *testing.T) {
	root := fakeTree(t, map[string]string{
		"proc/self/cgroup": "0::/\n",
		"proc/stat":        "cpu  100 0 50 800 0 0 0 0 0 0\n",
	})
	r := &resources{sysfs: filepath.Join(root, "sys"), proc: filepath.Join(root, "proc")}
	if cpu, _ := r.read(time.Unix(1, 0)); !math.IsNaN(cpu) {
		t.Fatalf("the first read: cpu %v, want NaN (no window yet)", cpu)
	}
	os.WriteFile(filepath.Join(root, "proc/stat"), []byte("cpu  150 0 50 850 0 0 0 0 0 0\n"), 0o644)
	if cpu, _ := r.read(time.Unix(2, 0)); cpu != 0.5 {
		t.Fatalf("a readable /proc/stat: cpu %v, want 0.5 (50 busy jiffies of 100)", cpu)
	}
	os.Remove(filepath.Join(root, "proc/stat"))
	if cpu, _ := r.read(time.Unix(3, 0)); !math.IsNaN(cpu) {
		t.Errorf("/proc/stat gone: cpu %v, want NaN (unknown)", cpu)
	}
}
