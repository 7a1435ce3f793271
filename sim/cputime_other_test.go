//go:build !unix

package sim

import (
	"testing"
	"time"
)

// cpuTime is 0 where the process's CPU time is not read: the cpu-s/op
// metric is then 0.
func cpuTime(*testing.B) time.Duration { return 0 }
