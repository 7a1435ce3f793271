package httplimit_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/memory"
)

// allowing answers as a failover's allow policy does while down is set:
// every check admitted and Unavailable, its state as if untouched;
// otherwise next decides.
type allowing struct {
	next sluice.Store
	down atomic.Bool
}

func (s *allowing) Apply(ctx context.Context, checks []sluice.Check, out []sluice.Status) error {
	if !s.down.Load() {
		return s.next.Apply(ctx, checks, out)
	}
	for i := range out {
		out[i] = sluice.Status{Allowed: true, Remaining: checks[i].Limit.Burst(), Unavailable: true}
	}
	return nil
}

// switchable is a store that a failover's policy decides for while it is
// down.
type switchable interface {
	sluice.Store
	setDown(bool)
}

func (s *denying) setDown(down bool)  { s.down.Store(down) }
func (s *allowing) setDown(down bool) { s.down.Store(down) }

// boxMiddleware is a Middleware with a penalty box on store.
func boxMiddleware(t *testing.T, store sluice.Store) *httplimit.Middleware {
	t.Helper()
	mw, err := httplimit.New(sluice.NewLimiter(store), httplimit.Options{
		Plans:   []*httplimit.Plan{{Name: "free", Limits: []sluice.Limit{sluice.PerMinute(10).Named("per-minute")}}},
		Penalty: httplimit.Penalty{Refusals: 2, Within: time.Minute, For: 10 * time.Minute},
	})
	if err != nil {
		t.Fatal(err)
	}
	return mw
}

// Penalize while no store decides (a failover's deny, or its allow, which
// admits every check untouched) writes nothing, and says so: an error
// wrapping sluice.ErrStoreUnavailable, never a box's length. Once the
// store is back, the client is not in the box.
func TestPenalizeWithoutAStoreDecisionBoxesNoOne(t *testing.T) {
	for name, mk := range map[string]func(sluice.Store) switchable{
		"deny":  func(next sluice.Store) switchable { return &denying{next: next} },
		"allow": func(next sluice.Store) switchable { return &allowing{next: next} },
	} {
		t.Run(name, func(t *testing.T) {
			local := memory.New(memory.WithSweepInterval(0))
			t.Cleanup(func() { local.Close() })
			store := mk(local)
			mw := boxMiddleware(t, store)
			store.setDown(true)
			left, err := mw.Penalize(context.Background(), "ip:192.0.2.1")
			store.setDown(false)
			if !errors.Is(err, sluice.ErrStoreUnavailable) {
				t.Fatalf("Penalize with no store deciding: %v, %v; want an error wrapping sluice.ErrStoreUnavailable", left, err)
			}
			states, err := mw.Inspect(context.Background(), "ip:192.0.2.1", "")
			if err != nil {
				t.Fatal(err)
			}
			for _, st := range states {
				if st.Name == "penalty" && st.Remaining != 1 {
					t.Errorf("once the store is back: penalty remaining %d; want 1 (not boxed)", st.Remaining)
				}
			}
			if left, err := mw.Penalize(context.Background(), "ip:192.0.2.1"); err != nil || left != 10*time.Minute {
				t.Errorf("Penalize once the store is back: %v, %v; want 10m", left, err)
			}
		})
	}
}

// Inspect of states no store read (a failover's deny, which would show
// every limit used up) returns no state and an error wrapping
// sluice.ErrStoreUnavailable.
func TestInspectOfStatesNoStoreReadIsAnError(t *testing.T) {
	local := memory.New(memory.WithSweepInterval(0))
	t.Cleanup(func() { local.Close() })
	store := &denying{next: local}
	mw := boxMiddleware(t, store)
	store.down.Store(true)
	states, err := mw.Inspect(context.Background(), "ip:192.0.2.1", "")
	if !errors.Is(err, sluice.ErrStoreUnavailable) || states != nil {
		t.Errorf("Inspect with no store deciding: %+v, %v; want no state and an error wrapping sluice.ErrStoreUnavailable", states, err)
	}
}
