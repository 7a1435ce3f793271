package client_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/client"
)

// A LimiterGate refuses at once, with ErrExceedsBurst, a cost above the q
// of a window limit it keeps (no wait can admit it), whatever its window
// holds: it neither waits for its window to empty (an hour here, a day
// for a per-day window) nor fails with ErrWaitTooLong, which would tell
// the caller to wait rather than to split the request.
func TestAGateRefusesACostAboveItsWindowAtOnce(t *testing.T) {
	t.Parallel()
	gate := client.NewLocalGate(sluice.FixedWindow(2, time.Hour))
	for range 2 {
		if err := gate.Wait(context.Background(), 1); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	begin := time.Now()
	if err := gate.Wait(ctx, 3); !errors.Is(err, client.ErrExceedsBurst) {
		t.Errorf("Wait(3) on a gate of 2 an hour, spent: %v after %v; want ErrExceedsBurst at once", err, time.Since(begin).Round(time.Millisecond))
	}
	if _, err := gate.Acquire(ctx, 3); !errors.Is(err, client.ErrExceedsBurst) {
		t.Errorf("Acquire(3) on a gate of 2 an hour, spent: %v; want ErrExceedsBurst", err)
	}
	fresh := client.NewLocalGate(sluice.FixedWindow(2, time.Hour))
	if err := fresh.Wait(context.Background(), 3); !errors.Is(err, client.ErrExceedsBurst) {
		t.Errorf("Wait(3) on a fresh gate of 2 an hour: %v; want ErrExceedsBurst", err)
	}
}
