package degrade

import (
	"math"
	"path/filepath"
	"runtime/debug"
	"testing"
	"time"
)

// A process whose memory nothing limits (a cgroup whose memory.max is
// "max", no GOMEMLIMIT) reads a memory share of 0 and says that it is
// unlimited, so that a memory threshold that can never be reached is
// told from a process using none of its limit; one under a limit says it
// is limited.
func TestAMemoryWithoutALimitIsSaidToBeUnlimited(t *testing.T) {
	noGoLimit := debug.SetMemoryLimit(-1) == math.MaxInt64 // the test binary's GOMEMLIMIT
	for _, tc := range []struct {
		max       string
		unlimited bool
	}{
		{"max\n", noGoLimit},
		{"1000000\n", false},
	} {
		root := fakeTree(t, map[string]string{
			"proc/self/cgroup":              "0::/svc/sluice\n",
			"sys/svc/sluice/cpu.stat":       "usage_usec 1000000\n",
			"sys/svc/sluice/memory.max":     tc.max,
			"sys/svc/sluice/memory.current": "400000\n",
			"sys/svc/sluice/memory.stat":    "inactive_file 0\n",
		})
		r := &resources{sysfs: filepath.Join(root, "sys"), proc: filepath.Join(root, "proc")}
		_, mem := r.read(time.Unix(100, 0))
		if got := r.memoryUnlimited(); got != tc.unlimited || tc.unlimited && mem != 0 {
			t.Errorf("memory.max %q (GOMEMLIMIT unset: %v): share %v, unlimited %v; want unlimited %v", tc.max, noGoLimit, mem, got, tc.unlimited)
		}
	}
}
