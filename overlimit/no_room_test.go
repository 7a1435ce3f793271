package overlimit_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/storetest"
	"github.com/sluice-dev/sluice/memory"
	"github.com/sluice-dev/sluice/overlimit"
)

// roomless is a memory store that, while full is set, has no room for a
// new state: it refuses a call that would keep one as a memory store
// under memory.WithMaxKeys refuses it, for want of room, nothing counted
// (sluice.Status.NoRoom), with the wait until a state that keeps it out
// stops refusing. calls counts the calls that reach it.
type roomless struct {
	*memory.Store
	full  atomic.Bool
	calls atomic.Int64
}

func (s *roomless) Apply(ctx context.Context, checks []sluice.Check, out []sluice.Status) error {
	s.calls.Add(1)
	if !s.full.Load() {
		return s.Store.Apply(ctx, checks, out)
	}
	for i := range checks {
		out[i] = sluice.Status{ResetAfter: 30 * time.Second, RetryAfter: 30 * time.Second, NoRoom: true}
	}
	return nil
}

// A refusal for want of room counted nothing and says nothing of the
// key's use: room comes back when another key's state stops refusing or
// is reset (an operator's reset of a client holding it), which the cache
// cannot see. So it is never remembered: the key's next call reaches the
// store, which admits it once room is found.
func TestARefusalForWantOfRoomIsNotRemembered(t *testing.T) {
	clk := storetest.NewClock()
	store := &roomless{Store: memory.New(memory.WithClock(clk.Now), memory.WithSweepInterval(0))}
	t.Cleanup(func() { store.Close() })
	limiter := sluice.NewLimiter(overlimit.New(store, overlimit.Options{Clock: clk.Now}))
	check := []sluice.Check{{Key: "new", Limit: sluice.FixedWindow(3, time.Hour), Cost: 1}}
	var d sluice.Decision
	store.full.Store(true)
	if err := limiter.Allow(context.Background(), check, &d); err != nil || d.Allowed || !d.Statuses[0].NoRoom {
		t.Fatalf("refused for want of room: allowed %v, NoRoom %v, %v", d.Allowed, d.Statuses[0].NoRoom, err)
	}
	store.full.Store(false) // room found
	if err := limiter.Allow(context.Background(), check, &d); err != nil || !d.Allowed || store.calls.Load() != 2 {
		t.Errorf("once room is found: allowed %v, %d calls reached the store, %v; want admitted by the store", d.Allowed, store.calls.Load(), err)
	}
}
