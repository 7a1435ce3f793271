package redis

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/memory"
)

// heldTakeBackend is a shared state whose applyAt waits for release before
// answering: a take in flight when Close runs.
type heldTakeBackend struct {
	mu      sync.Mutex
	started chan struct{}
	release chan struct{}
	given   int64
	once    sync.Once
}

func (b *heldTakeBackend) applyAt(ctx context.Context, checks []sluice.Check, out []sluice.Status, ats []int64) error {
	b.once.Do(func() { close(b.started) })
	<-b.release
	now := sluice.MicrosSinceEpoch(time.Now())
	for i, c := range checks {
		out[i] = sluice.Status{Allowed: true, Remaining: c.Limit.Burst() - c.Cost, ResetAfter: time.Hour}
		ats[i] = now
	}
	return nil
}

func (b *heldTakeBackend) take(ctx context.Context, checks []sluice.Check, want []int64, out []sluice.Status, got []int64) (int64, error) {
	ats := make([]int64, len(checks))
	err := b.applyAt(ctx, checks, out, ats)
	copy(got, want)
	return ats[0], err
}

func (b *heldTakeBackend) giveBack(ctx context.Context, checks []sluice.Check, marks []string, ats []int64) (int64, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, c := range checks {
		b.given += c.Cost
	}
	return 0, nil
}

// Close waits for a take a call started before it, then gives back what
// that take leased: a lease installed after Close's give-back would be
// neither spent (every later call goes to the store behind) nor given back,
// its units counted in Redis until their window ended.
func TestATakeInFlightAtCloseIsGivenBack(t *testing.T) {
	mem := memory.New()
	defer mem.Close()
	b := &heldTakeBackend{started: make(chan struct{}), release: make(chan struct{})}
	l := newLeased(mem, b, nil, 1, LeaseOptions{Mode: LeaseAuto, Idle: time.Hour, MaxAge: time.Hour})
	c := sluice.Check{Key: "k", Limit: sluice.FixedWindow(1_000_000, 400*24*time.Hour), Cost: 1}
	done := make(chan error, 1)
	go func() { done <- l.Apply(context.Background(), []sluice.Check{c}, make([]sluice.Status, 1)) }()
	<-b.started // the call's take is in flight
	closed := make(chan error, 1)
	go func() { closed <- l.Close() }()
	time.Sleep(50 * time.Millisecond)
	select {
	case <-closed:
		close(b.release)
		t.Fatal("Close returned while a call's take was in flight")
	default:
	}
	close(b.release)
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	st := l.Stats()
	b.mu.Lock()
	given := b.given
	b.mu.Unlock()
	if st.Held > 0 || given == 0 {
		t.Errorf("after Close: %d units of lease held, %d given back; want none held, the take's unspent units given back (stats %+v)",
			st.Held, given, st)
	}
}
