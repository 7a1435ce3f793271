package degrade

import (
	"path/filepath"
	"testing"
	"time"
)

// cgroup v2's memory.high (systemd's MemoryHigh=, Kubernetes' memory QoS)
// is a limit too: above it the kernel throttles the cgroup's allocations
// and reclaims from it hard, the process stalling long before memory.max.
// A service limited by MemoryHigh= alone, whose memory.max says "max", read
// no limit and a memory signal of 0 while it was throttled. Each cgroup's
// limit is the lesser of the two.
func TestMemoryHighIsALimit(t *testing.T) {
	noGOMEMLIMIT(t)
	root := fakeTree(t, map[string]string{
		"proc/self/cgroup":                               "0::/system.slice/sluice.service\n",
		"sys/system.slice/sluice.service/cpu.stat":       "usage_usec 1\n",
		"sys/system.slice/sluice.service/memory.max":     "max\n",
		"sys/system.slice/sluice.service/memory.high":    "1000000\n",
		"sys/system.slice/sluice.service/memory.current": "900000\n",
	})
	dir := "sys/system.slice/sluice.service/"
	r := &resources{sysfs: filepath.Join(root, "sys"), proc: filepath.Join(root, "proc")}
	if _, mem := r.read(time.Unix(100, 0)); mem != 0.9 {
		t.Errorf("mem %v, want 0.9 of memory.high", mem)
	}
	// memory.max below memory.high: memory.max is the nearer.
	write(t, root, map[string]string{dir + "memory.max": "950000\n", dir + "memory.high": "2000000\n"})
	if _, mem := r.read(time.Unix(101, 0)); mem < 0.9473 || mem > 0.9474 {
		t.Errorf("mem %v, want 900000/950000 of memory.max", mem)
	}
	// Both "max": no limit.
	write(t, root, map[string]string{dir + "memory.max": "max\n", dir + "memory.high": "max\n"})
	if _, mem := r.read(time.Unix(102, 0)); mem != 0 {
		t.Errorf("mem %v, want 0 without a limit", mem)
	}
}
