//go:build unix

package migrate_test

import (
	"syscall"
	"testing"
	"time"
)

// cpuTime is the CPU time (user and system) the process has used so far,
// which other processes on a loaded machine do not add to, as they do to
// the wall clock.
func cpuTime(t *testing.T) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
