package degrade

import (
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A container on a cgroup v1 host (or a hybrid one, whose v2 hierarchy
// holds no controller) is measured against its v1 CPU quota and memory
// limit, found where the container mounts its hierarchies
// (/proc/self/mountinfo: Docker mounts /docker/<id> at /sys/fs/cgroup/…).
// Its CPU was read as a share of every core of the host (of the v2 root's
// cpu.stat, or /proc/stat), so a container using all of its 1.5 cores of
// 8 read 0.19 and never reached a cpu threshold; its memory limit was not
// read at all.
func TestCgroupV1QuotaAndLimit(t *testing.T) {
	old := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(old)
	debug.SetMemoryLimit(math.MaxInt64) // no GOMEMLIMIT to fall back on
	root := t.TempDir()
	mnt := func(name string) string { return filepath.Join(root, "mnt", name) }
	files := map[string]string{
		"proc/self/cgroup": "12:memory:/docker/abc\n" +
			"4:cpu,cpuacct:/docker/abc\n" +
			"1:name=systemd:/docker/abc\n" +
			"0::/docker/abc\n",
		"proc/self/mountinfo": strings.Join([]string{
			"30 22 0:27 / /sys/fs/cgroup ro,nosuid - tmpfs tmpfs ro,mode=755",
			"31 30 0:28 /docker/abc " + mnt("unified") + " ro,nosuid - cgroup2 cgroup2 rw",
			"32 30 0:29 /docker/abc " + mnt("cpu,cpuacct") + " ro,nosuid shared:9 - cgroup cgroup rw,cpu,cpuacct",
			"33 30 0:30 /docker/abc " + mnt("memory") + " ro,nosuid - cgroup cgroup rw,memory",
		}, "\n") + "\n",
		// The v2 hierarchy of a hybrid host: base statistics, no controller.
		"mnt/unified/cpu.stat":              "usage_usec 1000\n",
		"mnt/cpu,cpuacct/cpuacct.usage":     "1000000000\n", // ns
		"mnt/cpu,cpuacct/cpu.cfs_quota_us":  "150000\n",
		"mnt/cpu,cpuacct/cpu.cfs_period_us": "100000\n", // 1.5 cores
		"mnt/memory/memory.limit_in_bytes":  "1000000\n",
		"mnt/memory/memory.usage_in_bytes":  "900000\n",
		"mnt/memory/memory.stat":            "cache 600000\nrss 300000\ninactive_file 1\ntotal_inactive_file 500000\n",
	}
	for name, content := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write := func(name, content string) {
		if err := os.WriteFile(filepath.Join(root, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r := &resources{sysfs: filepath.Join(root, "sys"), proc: filepath.Join(root, "proc")}
	t0 := time.Unix(100, 0)
	if _, mem := r.read(t0); mem != 0.4 {
		t.Errorf("mem %v, want 0.4: 900000 in use less 500000 of inactive file cache, of 1000000", mem)
	}
	// 1.2 s of CPU in 1 s of a 1.5-core quota: 0.8.
	write("mnt/cpu,cpuacct/cpuacct.usage", "2200000000\n")
	if cpu, _ := r.read(t0.Add(time.Second)); cpu < 0.7999 || cpu > 0.8001 {
		t.Errorf("cpu %v, want 0.8 of the v1 quota", cpu)
	}

	// No quota (-1) and no limit (v1's largest page count): every core, and
	// nothing to measure memory against.
	write("mnt/cpu,cpuacct/cpu.cfs_quota_us", "-1\n")
	write("mnt/memory/memory.limit_in_bytes", "9223372036854771712\n")
	busy := 2200000000 + int64(runtime.NumCPU())*500_000_000 // half of every core for 1 s
	write("mnt/cpu,cpuacct/cpuacct.usage", strconv.FormatInt(busy, 10)+"\n")
	if cpu, mem := r.read(t0.Add(2 * time.Second)); cpu < 0.4999 || cpu > 0.5001 || mem != 0 {
		t.Errorf("cpu %v mem %v, want 0.5 of every core and 0 (no limit)", cpu, mem)
	}
}
