package client_test

import (
	"context"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/client"
)

// NewLocalGate's store runs no goroutine, not even its clock's ticker
// (which a memory store starts for limits that tolerate a lagging clock):
// a LimiterGate has no Close to stop one.
func TestLocalGateHasNoBackgroundGoroutine(t *testing.T) {
	g := client.NewLocalGate(sluice.TokenBucket(100_000, time.Second))
	buf := make([]byte, 4<<20)
	seen := false
	for i := 0; i < 300 && !seen; i++ {
		if err := g.Wait(context.Background(), 1); err != nil {
			t.Fatal(err)
		}
		stacks := string(buf[:runtime.Stack(buf, true)])
		seen = strings.Contains(stacks, "memory.(*clock).tick")
		time.Sleep(time.Millisecond)
	}
	if seen {
		t.Errorf("a local gate in use runs a background goroutine (memory.(*clock).tick); its doc says it has none")
	}
}
