//go:build !unix

package migrate_test

import (
	"testing"
	"time"
)

// cpuTime is the time since the first call, where the process's CPU time
// is not read.
func cpuTime(*testing.T) time.Duration { return time.Since(start) }

var start = time.Now()
