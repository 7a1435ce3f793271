package degrade

import (
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"testing"
	"time"
)

// fakeTree writes files under a temporary root: name → content.
func fakeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for name, content := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func TestCgroupCPUAndMemory(t *testing.T) {
	root := fakeTree(t, map[string]string{
		"proc/self/cgroup":              "0::/svc/sluice\n",
		"sys/svc/sluice/cpu.stat":       "usage_usec 1000000\nuser_usec 800000\n",
		"sys/svc/sluice/cpu.max":        "150000 100000\n", // 1.5 cores
		"sys/svc/sluice/memory.max":     "1000000\n",
		"sys/svc/sluice/memory.current": "250000\n",
	})
	r := &resources{sysfs: filepath.Join(root, "sys"), proc: filepath.Join(root, "proc")}
	t0 := time.Unix(100, 0)
	if cpu, mem := r.read(t0); !math.IsNaN(cpu) || mem != 0.25 {
		t.Errorf("first read: cpu %v mem %v, want NaN (no window yet) and 0.25", cpu, mem)
	}
	// 1.2 s of CPU in 1 s of a 1.5-core quota: 0.8.
	os.WriteFile(filepath.Join(root, "sys/svc/sluice/cpu.stat"), []byte("usage_usec 2200000\n"), 0o644)
	if cpu, _ := r.read(t0.Add(time.Second)); cpu < 0.7999 || cpu > 0.8001 {
		t.Errorf("cpu %v, want 0.8 of the quota", cpu)
	}
	// No quota: every core counts; a limit of "max" falls back to GOMEMLIMIT.
	os.WriteFile(filepath.Join(root, "sys/svc/sluice/cpu.max"), []byte("max 100000\n"), 0o644)
	os.WriteFile(filepath.Join(root, "sys/svc/sluice/memory.max"), []byte("max\n"), 0o644)
	if _, mem := r.read(t0.Add(2 * time.Second)); mem < 0 || mem > 1 {
		t.Errorf("mem %v out of [0, 1]", mem)
	}
}

func TestHostCPUWithoutCgroupV2(t *testing.T) {
	root := fakeTree(t, map[string]string{
		"proc/self/cgroup": "4:memory:/x\n0::/\n", // v1 host: no cpu.stat under the v2 path
		"proc/stat":        "cpu  100 0 100 700 100 0 0 0 0 0\ncpu0 1 1 1 1\n",
	})
	r := &resources{sysfs: filepath.Join(root, "sys"), proc: filepath.Join(root, "proc")}
	r.read(time.Unix(1, 0))
	// +300 busy (user, system, irq) and +100 idle: 0.75.
	os.WriteFile(filepath.Join(root, "proc/stat"), []byte("cpu  300 0 150 800 100 50 0 0 0 0\n"), 0o644)
	if cpu, _ := r.read(time.Unix(2, 0)); cpu != 0.75 {
		t.Errorf("host cpu %v, want 0.75", cpu)
	}
}

func TestMemoryAgainstGOMEMLIMIT(t *testing.T) {
	old := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(old)
	r := &resources{sysfs: t.TempDir(), proc: t.TempDir()}
	r.sample = newResources().sample
	debug.SetMemoryLimit(1 << 62)
	if _, mem := r.read(time.Unix(1, 0)); mem <= 0 || mem > 0.001 {
		t.Errorf("mem %v against a huge limit, want a tiny positive share", mem)
	}
	debug.SetMemoryLimit(1 << 20) // less than the runtime already holds
	if _, mem := r.read(time.Unix(2, 0)); mem != 1 {
		t.Errorf("mem %v against a 1 MiB limit, want 1 (clamped)", mem)
	}
}

// On this machine, whatever its cgroups: readings in [0, 1].
func TestResourcesOfThisMachine(t *testing.T) {
	r := newResources()
	r.read(time.Now())
	time.Sleep(minCPUWindow + 20*time.Millisecond)
	cpu, mem := r.read(time.Now())
	if cpu < 0 || cpu > 1 || mem < 0 || mem > 1 {
		t.Errorf("cpu %v mem %v", cpu, mem)
	}
	r.mu.Lock()
	d := r.dirs()
	r.mu.Unlock()
	t.Logf("cgroup dirs %+v: cpu %.3f mem %.3f", d, cpu, mem)
}

// The memory in use of a cgroup is its working set: memory.current less
// the page cache the kernel reclaims before it comes near memory.max
// (memory.stat's inactive_file), as the kubelet counts it. A process that
// has read or written files holds such cache without needing it.
func TestCgroupMemoryLeavesOutReclaimableCache(t *testing.T) {
	root := fakeTree(t, map[string]string{
		"proc/self/cgroup":              "0::/svc/sluice\n",
		"sys/svc/sluice/cpu.stat":       "usage_usec 1000000\n",
		"sys/svc/sluice/memory.max":     "1000000\n",
		"sys/svc/sluice/memory.current": "900000\n",
		"sys/svc/sluice/memory.stat":    "anon 350000\nfile 520000\nactive_file 20000\ninactive_file 500000\n",
	})
	r := &resources{sysfs: filepath.Join(root, "sys"), proc: filepath.Join(root, "proc")}
	if _, mem := r.read(time.Unix(100, 0)); mem != 0.4 {
		t.Errorf("mem %v, want 0.4: 900000 in use less 500000 of inactive file cache, of 1000000", mem)
	}
	// More cache than the count (the two files are read at two moments):
	// nothing in use, never less.
	os.WriteFile(filepath.Join(root, "sys/svc/sluice/memory.stat"), []byte("inactive_file 950000\n"), 0o644)
	if _, mem := r.read(time.Unix(101, 0)); mem != 0 {
		t.Errorf("mem %v, want 0", mem)
	}
}

// Against GOMEMLIMIT the memory in use is what the runtime holds less what
// it has given back to the system, as the limit itself counts it: after a
// spike is freed and returned, the share falls with it.
func TestMemoryAgainstGOMEMLIMITLeavesOutReleasedMemory(t *testing.T) {
	old := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(old)
	r := &resources{sysfs: t.TempDir(), proc: t.TempDir()}
	r.sample = newResources().sample
	spike := make([]byte, 64<<20)
	for i := 0; i < len(spike); i += 4096 {
		spike[i] = 1
	}
	runtime.KeepAlive(spike)
	spike = nil
	debug.FreeOSMemory()
	m := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	metrics.Read(m)
	total, released := m[0].Value.Uint64(), m[1].Value.Uint64()
	if released < total/3 {
		t.Skipf("the runtime gave back %d of %d bytes: no spike to measure", released, total)
	}
	debug.SetMemoryLimit(int64(total))
	want := float64(total-released) / float64(total)
	if _, mem := r.read(time.Unix(1, 0)); mem > want+0.1 {
		t.Errorf("mem %.3f, want about %.3f: %d of %d bytes were given back to the system", mem, want, released, total)
	}
}

// A busy count of /proc/stat that goes back (steal time after a virtual
// machine's live migration, a counter reset) is no window of use: it wrapped
// around in unsigned arithmetic and read as the whole CPU, which entered a
// cpu level at once. Such a read reports 0 and measures the next window from
// it.
func TestHostCPUWhoseBusyCountGoesBackIsNoFullCPU(t *testing.T) {
	root := fakeTree(t, map[string]string{
		"proc/self/cgroup": "0::/\n",
		"proc/stat":        "cpu  100 0 100 700 100 0 0 500 0 0\n",
	})
	r := &resources{sysfs: filepath.Join(root, "sys"), proc: filepath.Join(root, "proc")}
	r.read(time.Unix(1, 0))
	// Steal back from 500 to 0 while the idle count rises: busy 700 → 210.
	os.WriteFile(filepath.Join(root, "proc/stat"), []byte("cpu  110 0 100 1800 100 0 0 0 0 0\n"), 0o644)
	if cpu, _ := r.read(time.Unix(2, 0)); cpu != 0 {
		t.Errorf("busy count gone back: cpu %v, want 0", cpu)
	}
	// +90 busy and +10 idle since: 0.9.
	os.WriteFile(filepath.Join(root, "proc/stat"), []byte("cpu  200 0 100 1810 100 0 0 0 0 0\n"), 0o644)
	if cpu, _ := r.read(time.Unix(3, 0)); cpu < 0.8999 || cpu > 0.9001 {
		t.Errorf("the next window: cpu %v, want 0.9", cpu)
	}
}

// A CPU quota above the cores the process may run on (a Kubernetes limit
// above the node's cores, a cpuset narrower than the quota) cannot all be
// used: the share is of the cores, and a process using every one of them
// reads 1. It read the share of the quota, 0.5 with a quota of twice the
// cores, and never reached a cpu threshold above that.
func TestCPUQuotaAboveTheCoresIsTheCores(t *testing.T) {
	cores := int64(runtime.NumCPU())
	root := fakeTree(t, map[string]string{
		"proc/self/cgroup":        "0::/svc/sluice\n",
		"sys/svc/sluice/cpu.stat": "usage_usec 0\n",
		"sys/svc/sluice/cpu.max":  strconv.FormatInt(2*cores*100000, 10) + " 100000\n",
	})
	r := &resources{sysfs: filepath.Join(root, "sys"), proc: filepath.Join(root, "proc")}
	r.read(time.Unix(100, 0))
	// Every core busy for 1 s.
	os.WriteFile(filepath.Join(root, "sys/svc/sluice/cpu.stat"), []byte("usage_usec "+strconv.FormatInt(cores*1000000, 10)+"\n"), 0o644)
	if cpu, _ := r.read(time.Unix(101, 0)); cpu < 0.9999 {
		t.Errorf("every one of %d cores busy under a quota of %d: cpu %v, want 1", cores, 2*cores, cpu)
	}
}
