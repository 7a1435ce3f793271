package degrade

import (
	"path/filepath"
	"testing"
	"time"
)

// A container on a cgroup v1 host sees its own cgroup as its hierarchy's
// root (Docker mounts /docker/<id> at /sys/fs/cgroup/memory): a limit on a
// parent (a Kubernetes pod's, a systemd slice's) is in no directory it can
// read, but v1 shows the least limit of the cgroup and all its parents in
// its memory.stat, hierarchical_memory_limit. Without a limit of its own,
// the memory signal read nothing, 0, up to the parent's limit; it is the
// container's working set against that limit.
func TestMemoryAgainstV1HierarchicalLimit(t *testing.T) {
	noGOMEMLIMIT(t)
	root := t.TempDir()
	mnt := filepath.Join(root, "mnt", "memory")
	write(t, root, map[string]string{
		"proc/self/cgroup":                 "12:memory:/docker/abc\n",
		"proc/self/mountinfo":              "33 30 0:30 /docker/abc " + mnt + " ro,nosuid - cgroup cgroup rw,memory\n",
		"mnt/memory/memory.limit_in_bytes": "9223372036854771712\n",
		"mnt/memory/memory.usage_in_bytes": "900000\n",
		"mnt/memory/memory.stat":           "cache 600000\nhierarchical_memory_limit 1000000\ntotal_inactive_file 500000\n",
	})
	r := &resources{sysfs: filepath.Join(root, "sys"), proc: filepath.Join(root, "proc")}
	if _, mem := r.read(time.Unix(100, 0)); mem != 0.4 {
		t.Errorf("mem %v, want 0.4: 900000 in use less 500000 of inactive file cache, of a parent's 1000000", mem)
	}
	// No limit anywhere: nothing to measure against.
	write(t, root, map[string]string{
		"mnt/memory/memory.stat": "hierarchical_memory_limit 9223372036854771712\ntotal_inactive_file 500000\n",
	})
	if _, mem := r.read(time.Unix(101, 0)); mem != 0 {
		t.Errorf("mem %v, want 0 without a limit", mem)
	}
}
