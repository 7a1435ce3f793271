package degrade

import (
	"path/filepath"
	"testing"
	"time"
)

// procStat is a /proc/self/stat line whose process has used utime and
// stime clock ticks (1/100 s), its name holding spaces and parentheses.
func procStat(utime, stime string) string {
	return "4242 (sluice (x) y) S 1 4242 4242 0 -1 4194560 100 0 0 0 " + utime + " " + stime + " 0 0 20 0 9 0 100 0 0\n"
}

// A process whose GOMAXPROCS is below the cores it may run on (GOMAXPROCS=2
// on a 16-core host, with no CPU quota) runs its goroutines on 2 cores at
// most: at 2 cores busy it is at its whole capacity, its goroutines
// waiting for a P, but its CPU was read as a share of the 16 cores, 0.125,
// and never reached a cpu threshold. The process's own CPU time
// (/proc/self/stat) is measured against GOMAXPROCS; its cgroup's, which
// counts the other processes in it, against the cgroup's quota or the
// cores. A busy neighbour in the cgroup is not the process's use of its
// GOMAXPROCS.
func TestCPUIsMeasuredAgainstGOMAXPROCS(t *testing.T) {
	for _, tc := range []struct {
		name       string
		cgroup     string // the cgroup's CPU time after 1 s, µs, from 0
		self       string // the process's, clock ticks, from 0
		want       float64
		cgroupTree bool
	}{
		{"the process alone at its 2 Ps in its cgroup is at its whole capacity", "2000000", "150", 1, true},
		{"the process at 1 of its 2 Ps is at half its capacity", "1000000", "50", 0.5, true},
		{"a neighbour's 5.5 cores in the cgroup are its share of the 16 cores, not the process's of its Ps", "6000000", "0", 0.375, true},
		{"without a cgroup, the host's share or the process's of its Ps, whichever is larger", "", "200", 1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files := map[string]string{
				"proc/self/stat": procStat("0", "0"),
				"proc/stat":      "cpu  100 0 100 1000 0 0 0 0 0 0\n",
			}
			if tc.cgroupTree {
				files["proc/self/cgroup"] = "0::/svc\n"
				files["sys/svc/cpu.stat"] = "usage_usec 0\n"
				files["sys/svc/cpu.max"] = "max 100000\n"
			}
			root := fakeTree(t, files)
			r := &resources{sysfs: filepath.Join(root, "sys"), proc: filepath.Join(root, "proc"),
				cpus: func() (int, int) { return 16, 2 }}
			t0 := time.Unix(100, 0)
			r.read(t0)
			after := map[string]string{
				"proc/self/stat": procStat(tc.self, "50"),
				// The host: 2 of 16 cores busy for 1 s (100 jiffies a core).
				"proc/stat": "cpu  250 0 150 2400 0 0 0 0 0 0\n",
			}
			if tc.cgroupTree {
				after["sys/svc/cpu.stat"] = "usage_usec " + tc.cgroup + "\n"
			}
			write(t, root, after)
			if cpu, _ := r.read(t0.Add(time.Second)); cpu < tc.want-0.0001 || cpu > tc.want+0.0001 {
				t.Errorf("cpu %v, want %v", cpu, tc.want)
			}
		})
	}
}
