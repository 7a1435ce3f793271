package gctune

import (
	"os"
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

// gcPercent returns the collector's GOGC setting.
func gcPercent() int {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p
}

// unsetGCEnv clears GOGC and GOMEMLIMIT for the test, restoring them after.
func unsetGCEnv(t *testing.T) {
	for _, k := range []string{"GOGC", "GOMEMLIMIT"} {
		t.Setenv(k, "")
		os.Unsetenv(k)
	}
}

func TestGCHeapFloor(t *testing.T) {
	t.Run("a small live heap gets a target of about the floor, and stopping restores GOGC", func(t *testing.T) {
		unsetGCEnv(t)
		base := gcPercent()
		stop := Start(256 << 20)
		runtime.GC()
		runtime.GC() // the hook of the first cycle has run by the second's end
		if p := gcPercent(); p <= max(base, 100) {
			t.Errorf("GOGC %d while serving with a 256 MiB floor, want above %d", p, max(base, 100))
		}
		stop()
		if p := gcPercent(); p != base {
			t.Errorf("GOGC %d after stop, want %d as before", p, base)
		}
	})
	t.Run("after each cycle the target follows the live heap", func(t *testing.T) {
		unsetGCEnv(t)
		stop := Start(1 << 30)
		defer stop()
		runtime.GC()
		before := gcPercent()
		live := make([]*[1 << 20]byte, 64) // 64 MiB more live heap
		for i := range live {
			live[i] = new([1 << 20]byte)
		}
		deadline := time.Now().Add(5 * time.Second)
		for gcPercent() >= before {
			if time.Now().After(deadline) {
				t.Fatalf("GOGC still %d after cycles with 64 MiB more live heap", before)
			}
			runtime.GC()
			time.Sleep(time.Millisecond)
		}
		runtime.KeepAlive(live)
	})
	t.Run("GOGC in the environment or a floor of 0 leave the collector alone", func(t *testing.T) {
		unsetGCEnv(t)
		base := gcPercent()
		stop := Start(0)
		if p := gcPercent(); p != base {
			t.Errorf("GOGC %d with no floor, want %d", p, base)
		}
		stop()
		t.Setenv("GOGC", "100")
		stop = Start(1 << 30)
		if p := gcPercent(); p != base {
			t.Errorf("GOGC %d with GOGC in the environment, want %d", p, base)
		}
		stop()
	})
}
