package sluice

import (
	"context"
	"errors"
	"testing"
)

// failingStore decides nothing: every call fails with its error.
type failingStore struct{ err error }

func (s failingStore) Apply(context.Context, []Check, []Status) error { return s.err }

// AllowOne asks a store that reports no time through Apply, and an error
// from the store is no decision, wrapped so that errors.Is finds it.
func TestAllowOneOnAnyStore(t *testing.T) {
	ctx := context.Background()
	c := Check{Key: "k", Limit: PerSecond(1), Cost: 1}
	var st Status
	ok, err := NewLimiter(plainStore{}).AllowOne(ctx, &st, &c)
	if !ok || err != nil || st != (Status{Allowed: true, Remaining: 1}) {
		t.Errorf("plain store: AllowOne = %v, %v, %+v; want true, nil, its Status", ok, err, st)
	}
	ok, err = NewLimiter(failingStore{ErrStoreUnavailable}).AllowOne(ctx, &st, &c)
	if ok || !errors.Is(err, ErrStoreUnavailable) {
		t.Errorf("failing store: AllowOne = %v, %v; want false and ErrStoreUnavailable", ok, err)
	}
	// A store that cannot release leases says so; no lease, nothing to do.
	if err := NewLimiter(plainStore{}).ReleaseOne(ctx, &Status{Allowed: true, Lease: 7}, &c); err == nil {
		t.Error("ReleaseOne through a store that is no Releaser gave no error")
	}
	if err := NewLimiter(plainStore{}).ReleaseOne(ctx, &Status{Allowed: true}, &c); err != nil {
		t.Errorf("ReleaseOne without a lease: %v", err)
	}
}
