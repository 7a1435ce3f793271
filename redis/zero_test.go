package redis_test

import (
	"context"
	"errors"
	"testing"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/redis"
)

// The zero Store, Guarded and Leased, a Store of a nil client and a Leased
// without its stores have no connection: their calls are errors wrapping
// sluice.ErrStoreUnavailable, Close and Return do nothing, and none panics.
func TestZeroValuesHaveNoStore(t *testing.T) {
	ctx := context.Background()
	checks := []sluice.Check{{Key: "k", Limit: sluice.PerMinute(1), Cost: 1}}
	out := make([]sluice.Status, 1)
	var s redis.Store
	var g redis.Guarded
	var l redis.Leased
	_, resetErr := s.Reset(ctx, "k", []sluice.Limit{sluice.PerMinute(1)})
	_, guardedResetErr := g.Reset(ctx, "k", []sluice.Limit{sluice.PerMinute(1)})
	for what, err := range map[string]error{
		"Store.Apply":     s.Apply(ctx, checks, out),
		"Store.Charge":    s.Charge(ctx, checks),
		"Store.Release":   s.Release(ctx, checks, []int64{1}),
		"Store.Refund":    s.Refund(ctx, checks, []int64{1}),
		"Store.Reset":     resetErr,
		"Guarded.Apply":   g.Apply(ctx, checks, out),
		"Guarded.Release": g.Release(ctx, checks, []int64{1}),
		"Guarded.Refund":  g.Refund(ctx, checks, []int64{1}),
		"Guarded.Reset":   guardedResetErr,
		"Guarded.Ping":    g.Ping(ctx),
		"Leased.Apply":    l.Apply(ctx, checks, out),
	} {
		if !errors.Is(err, sluice.ErrStoreUnavailable) {
			t.Errorf("%s: %v, want ErrStoreUnavailable", what, err)
		}
	}
	nilClient := redis.New(nil)
	nilLeased := redis.NewLeased(nil, nil, 4, redis.LeaseOptions{})
	for what, err := range map[string]error{"New(nil).Apply": nilClient.Apply(ctx, checks, out), "NewLeased(nil, nil).Apply": nilLeased.Apply(ctx, checks, out)} {
		if !errors.Is(err, sluice.ErrStoreUnavailable) {
			t.Errorf("%s: %v, want ErrStoreUnavailable", what, err)
		}
	}
	if err := nilLeased.Close(); err != nil {
		t.Errorf("NewLeased(nil, nil).Close: %v", err)
	}
	if node := s.Node(&checks[0]); node != "" {
		t.Errorf("Store.Node: %q", node)
	}
	if masters, seen := g.Evicting(); masters != nil || seen != 0 {
		t.Errorf("Guarded.Evicting: %v, %d", masters, seen)
	}
	if losses := g.Losses(); losses != (redis.Losses{}) {
		t.Errorf("Guarded.Losses: %+v", losses)
	}
	_ = l.Stats()
	for what, err := range map[string]error{"Store.Close": s.Close(), "Guarded.Close": g.Close(), "Leased.Return": l.Return(ctx), "Leased.Close": l.Close()} {
		if err != nil {
			t.Errorf("%s: %v", what, err)
		}
	}
}
