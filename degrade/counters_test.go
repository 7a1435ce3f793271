package degrade

import (
	"path/filepath"
	"testing"
	"time"
)

// cpuacct.usage is an unsigned count of nanoseconds: a root cgroup of a
// cgroup v1 host (where a process outside any container may be in the
// cpu,cpuacct hierarchy) passes 2⁶³ ns after 292 years of CPU, 4.6 years
// of a busy 64-core host. It is read unsigned: read as a signed number,
// a count past 2⁶³ fails to parse and the CPU signal reads 0 for ever.
func TestCPUOfAV1CountPastTheSignedRange(t *testing.T) {
	root := fakeTree(t, map[string]string{
		"proc/self/cgroup":                  "4:cpu,cpuacct:/\n",
		"sys/cpu,cpuacct/cpuacct.usage":     "9300000000000000000\n",
		"sys/cpu,cpuacct/cpu.cfs_quota_us":  "200000\n",
		"sys/cpu,cpuacct/cpu.cfs_period_us": "100000\n", // 2 cores
	})
	r := &resources{sysfs: filepath.Join(root, "sys"), proc: filepath.Join(root, "proc"),
		cpus: func() (int, int) { return 64, 64 }}
	t0 := time.Unix(100, 0)
	r.read(t0)
	// 1.5 s of CPU in 1 s of a 2-core quota: 0.75.
	write(t, root, map[string]string{"sys/cpu,cpuacct/cpuacct.usage": "9300000001500000000\n"})
	if cpu, _ := r.read(t0.Add(time.Second)); cpu < 0.7499 || cpu > 0.7501 {
		t.Errorf("cpu %v, want 0.75", cpu)
	}
	// The count wraps around 2⁶⁴: no window, and the next from it.
	write(t, root, map[string]string{"sys/cpu,cpuacct/cpuacct.usage": "500000000\n"})
	if cpu, _ := r.read(t0.Add(2 * time.Second)); cpu != 0 {
		t.Errorf("a count gone round: cpu %v, want 0", cpu)
	}
	write(t, root, map[string]string{"sys/cpu,cpuacct/cpuacct.usage": "1500000000\n"})
	if cpu, _ := r.read(t0.Add(3 * time.Second)); cpu < 0.4999 || cpu > 0.5001 {
		t.Errorf("the window after: cpu %v, want 0.5", cpu)
	}
}
