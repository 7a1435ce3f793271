package client_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/client"
)

// A Wait whose context has already ended returns its error and spends
// nothing: the one call a minute is still there for a live context.
func TestAGateSpendsNothingForAnEndedContext(t *testing.T) {
	gate := client.NewLocalGate(sluice.PerMinute(1))
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	for range 20 {
		if err := gate.Wait(ended, 1); !errors.Is(err, context.Canceled) {
			t.Fatalf("Wait with an ended context: %v", err)
		}
		if _, err := gate.Acquire(ended, 1); !errors.Is(err, context.Canceled) {
			t.Fatalf("Acquire with an ended context: %v", err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := gate.Wait(ctx, 1); err != nil {
		t.Errorf("the first Wait with a live context: %v", err)
	}
}
