package memory_test

import (
	"context"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/memory"
)

// Close returns once the store's goroutines have ended, so that a program
// (or a leak check) right after it finds none of them.
func TestCloseWaitsForTheClocksTicker(t *testing.T) {
	for i := range 20 {
		s := memory.New(memory.WithClockResolution(time.Millisecond), memory.WithSweepInterval(0))
		lim := sluice.NewLimiter(s)
		var d sluice.Decision
		checks := []sluice.Check{{Key: "k", Limit: sluice.TokenBucket(100, time.Second), Cost: 1}}
		for range 50 { // the ticker starts once the key is held
			if err := lim.Allow(context.Background(), checks, &d); err != nil {
				t.Fatal(err)
			}
		}
		for start := time.Now(); !strings.Contains(stacks(), "memory.(*clock).tick"); {
			if time.Since(start) > 5*time.Second {
				s.Close()
				t.Fatalf("round %d: the clock's ticker did not start", i)
			}
			runtime.Gosched()
		}
		s.Close()
		if st := stacks(); strings.Contains(st, "memory.(*clock).tick") {
			t.Fatalf("round %d: the clock's ticker still runs after Close:\n%s", i, st)
		}
	}
}

// stacks returns every goroutine's stack.
func stacks() string {
	buf := make([]byte, 1<<20)
	return string(buf[:runtime.Stack(buf, true)])
}
