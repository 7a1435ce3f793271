package client

import (
	"context"
	"testing"
	"time"
)

// Requests held for a host's quota are granted in the order they came:
// one that arrives when room is made, while another waits for it, does
// not take it first. Without a line, the request that finished (a batch
// worker sending its next) took the room its own answer made before the
// waiters woke, and one worker of eight made 24 of 57 calls while others
// waited a second and a half for theirs.
func TestARequestThatWaitsIsGrantedBeforeOneThatCameLater(t *testing.T) {
	h := newHostState(true, 0)
	probe, _, err := h.acquire(context.Background(), "api.example", 1, time.Minute)
	if err != nil || !probe.probe {
		t.Fatalf("first request: probe %v, %v; want the probe granted", probe.probe, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	waiting := make(chan error, 1)
	go func() {
		_, _, err := h.acquire(ctx, "api.example", 1, time.Minute)
		waiting <- err
	}()
	time.Sleep(100 * time.Millisecond) // it waits for the probe's answer

	// The answer leaves room for one more request, the waiting one's.
	h.finish(probe, ok200(time.Now(), 1, time.Minute))
	later, cancelLater := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancelLater()
	if _, _, err := h.acquire(later, "api.example", 1, time.Minute); err == nil {
		t.Error("a request that came later took the room made for the one waiting")
	}
	if err := <-waiting; err != nil {
		t.Errorf("the request waiting first: %v; want it granted", err)
	}
}
