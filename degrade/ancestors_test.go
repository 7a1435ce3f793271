package degrade

import (
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"testing"
	"time"
)

// noGOMEMLIMIT runs a test without a GOMEMLIMIT to fall back on.
func noGOMEMLIMIT(t *testing.T) {
	t.Helper()
	old := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(old) })
	debug.SetMemoryLimit(math.MaxInt64)
}

// A memory limit set on a parent cgroup only (a systemd slice's MemoryMax,
// a Kubernetes pod's) governs the process as its own would: the kernel
// reclaims and OOM-kills in the slice when the slice's use reaches it. Its
// service's memory.max says "max", and the memory signal read nothing at
// all (no limit found, no GOMEMLIMIT): 0 at 60% of the slice's limit. The
// share is the slice's use of the slice's limit, its sibling's included.
// Nothing above the mount's root is read: the parent of the mount point
// holds a limit that must not count.
func TestMemoryLimitOfAParentCgroupCounts(t *testing.T) {
	noGOMEMLIMIT(t)
	root := t.TempDir()
	mnt := filepath.Join(root, "mnt", "cgroup")
	write(t, root, map[string]string{
		"proc/self/cgroup":    "0::/sluice.slice/sluice.service\n",
		"proc/self/mountinfo": "31 30 0:28 / " + mnt + " rw,nosuid - cgroup2 cgroup2 rw\n",
		// Above the mount: not the process's to see.
		"mnt/memory.max":     "100000\n",
		"mnt/memory.current": "100000\n",
		// The hierarchy's root: no limit.
		"mnt/cgroup/cpu.stat":       "usage_usec 1\n",
		"mnt/cgroup/memory.current": "90000000\n",
		// The slice: 1000000 bytes at most, 600000 in use by the service
		// and a sibling.
		"mnt/cgroup/sluice.slice/cpu.stat":       "usage_usec 1\n",
		"mnt/cgroup/sluice.slice/memory.max":     "1000000\n",
		"mnt/cgroup/sluice.slice/memory.current": "650000\n",
		"mnt/cgroup/sluice.slice/memory.stat":    "anon 500000\ninactive_file 50000\n",
		// The service: no limit of its own.
		"mnt/cgroup/sluice.slice/sluice.service/cpu.stat":       "usage_usec 1\n",
		"mnt/cgroup/sluice.slice/sluice.service/memory.max":     "max\n",
		"mnt/cgroup/sluice.slice/sluice.service/memory.current": "200000\n",
	})
	r := &resources{sysfs: filepath.Join(root, "sys"), proc: filepath.Join(root, "proc")}
	if _, mem := r.read(time.Unix(100, 0)); mem < 0.5999 || mem > 0.6001 {
		t.Errorf("mem %v, want 0.6: the slice's 650000 in use less 50000 of inactive file cache, of its limit of 1000000", mem)
	}
	// A limit of the service's own, nearer than the slice's: its share.
	write(t, root, map[string]string{
		"mnt/cgroup/sluice.slice/sluice.service/memory.max": "250000\n",
	})
	if _, mem := r.read(time.Unix(101, 0)); mem < 0.7999 || mem > 0.8001 {
		t.Errorf("mem %v, want 0.8: the service's 200000 of its own 250000", mem)
	}
}

// A CPU quota set on a parent cgroup only (a Kubernetes pod's, a systemd
// slice's CPUQuota) throttles every cgroup below it when their use adds up
// to it. The service's cpu.max says "max", and its CPU was read as a share
// of every core: a slice at its whole 1-core quota read 0.5 of one core
// for the service (less with more cores) and never reached a cpu
// threshold. The share is the slice's use of the slice's quota.
func TestCPUQuotaOfAParentCgroupCounts(t *testing.T) {
	root := fakeTree(t, map[string]string{
		"proc/self/cgroup":                     "0::/kubepods/pod1/sluice\n",
		"sys/kubepods/cpu.stat":                "usage_usec 0\n",
		"sys/kubepods/pod1/cpu.stat":           "usage_usec 0\n",
		"sys/kubepods/pod1/cpu.max":            "100000 100000\n", // 1 core
		"sys/kubepods/pod1/sluice/cpu.stat":    "usage_usec 0\n",
		"sys/kubepods/pod1/sluice/cpu.max":     "max 100000\n",
		"sys/kubepods/pod1/sidecar/cpu.stat":   "usage_usec 0\n",
		"sys/kubepods/pod1/sidecar/cpu.max":    "max 100000\n",
		"sys/kubepods/pod1/sluice/memory.max":  "max\n",
		"sys/kubepods/pod1/sidecar/memory.max": "max\n",
	})
	r := &resources{sysfs: filepath.Join(root, "sys"), proc: filepath.Join(root, "proc")}
	t0 := time.Unix(100, 0)
	r.read(t0)
	// In 1 s: 0.5 s of the service's, 0.4 s of the sidecar's.
	write(t, root, map[string]string{
		"sys/kubepods/cpu.stat":             "usage_usec 5000000\n",
		"sys/kubepods/pod1/cpu.stat":        "usage_usec 900000\n",
		"sys/kubepods/pod1/sluice/cpu.stat": "usage_usec 500000\n",
	})
	if cpu, _ := r.read(t0.Add(time.Second)); cpu < 0.8999 || cpu > 0.9001 {
		t.Errorf("cpu %v, want 0.9: 0.9 s of the pod's 1-core quota used in 1 s", cpu)
	}
}

// In a cgroup namespace (a container's own, Kubernetes' default on cgroup
// v2) the process's cgroup is "/" and the mount shows that cgroup as the
// hierarchy's root: its files are the ones to read, and nothing above it.
func TestCgroupNamespaceReadsTheMountRootOnly(t *testing.T) {
	noGOMEMLIMIT(t)
	root := t.TempDir()
	mnt := filepath.Join(root, "mnt", "cgroup")
	write(t, root, map[string]string{
		"proc/self/cgroup":          "0::/\n",
		"proc/self/mountinfo":       "31 30 0:28 / " + mnt + " rw,nosuid - cgroup2 cgroup2 rw\n",
		"mnt/memory.max":            "100000\n",
		"mnt/memory.current":        "100000\n",
		"mnt/cgroup/cpu.stat":       "usage_usec 1\n",
		"mnt/cgroup/memory.max":     "1000000\n",
		"mnt/cgroup/memory.current": "300000\n",
	})
	r := &resources{sysfs: filepath.Join(root, "sys"), proc: filepath.Join(root, "proc")}
	if _, mem := r.read(time.Unix(100, 0)); mem != 0.3 {
		t.Errorf("mem %v, want 0.3 of the namespace's root, nothing above it", mem)
	}
}

// write writes files under root: name → content.
func write(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// The process may run on fewer cores than its parent's cgroup (a
// Kubernetes pod under the static CPU manager: each container pinned to
// cores of its own, the pod's quota their sum): the parent's use is of its
// own quota, not capped at the process's cores. With the parent's 4-core
// quota capped at the process's 2 cores, a sidecar and the process at 1
// core each read 1, the whole CPU, with both at half of theirs.
func TestCPUQuotaOfAParentIsNotCappedAtTheProcesssCores(t *testing.T) {
	root := fakeTree(t, map[string]string{
		"proc/self/cgroup":                  "0::/kubepods/pod1/sluice\n",
		"sys/kubepods/pod1/cpu.stat":        "usage_usec 0\n",
		"sys/kubepods/pod1/cpu.max":         "400000 100000\n", // 4 cores
		"sys/kubepods/pod1/sluice/cpu.stat": "usage_usec 0\n",
		"sys/kubepods/pod1/sluice/cpu.max":  "200000 100000\n", // 2 cores
	})
	r := &resources{sysfs: filepath.Join(root, "sys"), proc: filepath.Join(root, "proc"),
		cpus: func() (int, int) { return 2, 2 }}
	t0 := time.Unix(100, 0)
	r.read(t0)
	write(t, root, map[string]string{
		"sys/kubepods/pod1/cpu.stat":        "usage_usec 2000000\n",
		"sys/kubepods/pod1/sluice/cpu.stat": "usage_usec 1000000\n",
	})
	if cpu, _ := r.read(t0.Add(time.Second)); cpu < 0.4999 || cpu > 0.5001 {
		t.Errorf("cpu %v, want 0.5: 1 of the process's 2 cores, 2 of the pod's 4", cpu)
	}
}

// On a cgroup v1 or hybrid host (the v2 hierarchy holding no controller),
// a parent's quota is in the cpu hierarchy and its CPU time in cpuacct's,
// each mounted apart: the same cgroup is found the same number of levels
// up in each.
func TestCPUQuotaOfAParentCgroupOnV1(t *testing.T) {
	root := fakeTree(t, map[string]string{
		"proc/self/cgroup":                    "3:cpu:/slice/svc\n2:cpuacct:/slice/svc\n0::/slice/svc\n",
		"sys/unified/slice/svc/cpu.stat":      "usage_usec 0\n",
		"sys/cpu/slice/svc/cpu.cfs_quota_us":  "-1\n",
		"sys/cpu/slice/svc/cpu.cfs_period_us": "100000\n",
		"sys/cpu/slice/cpu.cfs_quota_us":      "50000\n",
		"sys/cpu/slice/cpu.cfs_period_us":     "100000\n", // half a core
		"sys/cpu/cpu.cfs_quota_us":            "-1\n",
		"sys/cpu/cpu.cfs_period_us":           "100000\n",
		"sys/cpuacct/slice/svc/cpuacct.usage": "0\n",
		"sys/cpuacct/slice/cpuacct.usage":     "0\n",
		"sys/cpuacct/cpuacct.usage":           "0\n",
	})
	r := &resources{sysfs: filepath.Join(root, "sys"), proc: filepath.Join(root, "proc"),
		cpus: func() (int, int) { return 8, 8 }}
	t0 := time.Unix(100, 0)
	r.read(t0)
	// In 1 s: 0.1 s of the service's, 0.4 s of the slice's (the service's
	// and a sibling's), 6 s of the host's.
	write(t, root, map[string]string{
		"sys/cpuacct/slice/svc/cpuacct.usage": "100000000\n",
		"sys/cpuacct/slice/cpuacct.usage":     "400000000\n",
		"sys/cpuacct/cpuacct.usage":           "6000000000\n",
	})
	if cpu, _ := r.read(t0.Add(time.Second)); cpu < 0.7999 || cpu > 0.8001 {
		t.Errorf("cpu %v, want 0.8: 0.4 s of the slice's half core in 1 s", cpu)
	}
}
