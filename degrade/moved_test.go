package degrade

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A process moved to another cgroup (systemd-run --scope, a runtime
// restructuring its slices, cgclassify) is measured in its new cgroup from
// the read after the move, whether its old cgroup is gone or still holds
// other processes; the window that spans the move measures nothing, since
// the two cgroups' counts are of different work.
func TestCPUFollowsAProcessMovedToAnotherCgroup(t *testing.T) {
	for _, oldRemains := range []bool{false, true} {
		name := "old cgroup removed"
		if oldRemains {
			name = "old cgroup still there"
		}
		t.Run(name, func(t *testing.T) {
			root := fakeTree(t, map[string]string{
				"proc/self/cgroup":     "0::/a\n",
				"sys/a/cpu.stat":       "usage_usec 1000000\n",
				"sys/a/cpu.max":        "100000 100000\n", // 1 core
				"sys/a/memory.max":     "1000\n",
				"sys/a/memory.current": "100\n",
			})
			r := &resources{sysfs: filepath.Join(root, "sys"), proc: filepath.Join(root, "proc"),
				cpus: func() (int, int) { return 4, 4 }}
			t0 := time.Unix(100, 0)
			r.read(t0)
			write(t, root, map[string]string{
				"proc/self/cgroup":     "0::/b\n",
				"sys/b/cpu.stat":       "usage_usec 90000000\n", // 90 s of other work
				"sys/b/cpu.max":        "100000 100000\n",
				"sys/b/memory.max":     "1000\n",
				"sys/b/memory.current": "500\n",
			})
			if !oldRemains {
				os.RemoveAll(filepath.Join(root, "sys/a"))
			}
			if cpu, mem := r.read(t0.Add(time.Second)); cpu != 0 || mem != 0.5 {
				t.Errorf("the read after the move: cpu %v mem %v, want 0 (no window across cgroups) and the new cgroup's 0.5", cpu, mem)
			}
			write(t, root, map[string]string{"sys/b/cpu.stat": "usage_usec 90600000\n"}) // 0.6 s in 1 s
			if cpu, _ := r.read(t0.Add(2 * time.Second)); cpu < 0.5999 || cpu > 0.6001 {
				t.Errorf("cpu %v, want the new cgroup's 0.6", cpu)
			}
		})
	}
}
