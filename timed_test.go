package sluice

import (
	"context"
	"testing"
	"time"
)

func TestEpochUnixMicroIsEpoch(t *testing.T) {
	if got := Epoch.UnixMicro(); got != epochUnixMicro {
		t.Errorf("Epoch.UnixMicro() = %d, epochUnixMicro = %d", got, epochUnixMicro)
	}
	for _, us := range []int64{0, 1, -1, 1_234_567, 1 << 53} {
		if got, want := timeFromMicros(us), TimeFromMicros(us); !got.Equal(want) {
			t.Errorf("timeFromMicros(%d) = %v, want %v", us, got, want)
		}
	}
	if got := timeFromMicros(1<<63 - 1); got.UnixMicro() != 1<<63-1 {
		t.Errorf("timeFromMicros(max) = %v, want it saturated at the largest µs", got)
	}
}

// plainStore admits everything and reports no time; timedStore does report one.
type plainStore struct{}

func (plainStore) Apply(_ context.Context, checks []Check, out []Status) error {
	for i := range out {
		out[i] = Status{Allowed: true, Remaining: 1}
	}
	return nil
}

type timedStore struct{ plainStore }

func (s timedStore) ApplyTimed(ctx context.Context, checks []Check, out []Status) (int64, error) {
	return 42_000_000, s.Apply(ctx, checks, out)
}

// A Limiter sets Decision.At from a TimedStore, and to the zero Time with
// any other store, even in a Decision that held a time before.
func TestDecisionAtComesFromTheStore(t *testing.T) {
	checks := []Check{{Key: "k", Limit: PerSecond(10), Cost: 1}}
	var d Decision
	if err := NewLimiter(timedStore{}).AllowInto(context.Background(), &d, checks); err != nil {
		t.Fatal(err)
	}
	if want := Epoch.Add(42 * time.Second); !d.At.Equal(want) {
		t.Errorf("At = %v, want %v", d.At, want)
	}
	if err := NewLimiter(plainStore{}).AllowInto(context.Background(), &d, checks); err != nil {
		t.Fatal(err)
	}
	if !d.At.IsZero() {
		t.Errorf("At = %v from a store that reports no time, want zero", d.At)
	}
}

// A Decision reused at the same store time keeps its At, and one whose At
// the caller changed, or set from another time, gets the store's time again:
// the Limiter's shortcut (Decision.setAt) never leaves a stale At.
func TestReusedDecisionAtIsTheStoresTime(t *testing.T) {
	ctx := context.Background()
	checks := []Check{{Key: "k", Limit: PerSecond(10), Cost: 1}}
	for _, us := range []int64{42_000_000, -1, 0, 43_000_000} {
		st := &clockedStore{us: us}
		lim := NewLimiter(st)
		want := timeFromMicros(us)
		var d Decision
		for i, change := range []func(){
			func() {},                               // fresh
			func() {},                               // reused, same time
			func() { d.At = time.Time{} },           // the caller cleared it
			func() { d.At = d.At.Add(time.Second) }, // the caller moved it
			func() { st.us++; want = timeFromMicros(st.us) }, // the store's time moved
		} {
			change()
			if err := lim.AllowInto(ctx, &d, checks); err != nil {
				t.Fatal(err)
			}
			if d.At != want {
				t.Errorf("store time %d µs, step %d: At = %v, want %v", st.us, i, d.At, want)
			}
		}
	}
}

// clockedStore is a TimedStore that decides at us and admits everything.
type clockedStore struct{ us int64 }

func (s *clockedStore) Apply(ctx context.Context, checks []Check, out []Status) error {
	_, err := s.ApplyTimed(ctx, checks, out)
	return err
}

func (s *clockedStore) ApplyTimed(_ context.Context, checks []Check, out []Status) (int64, error) {
	for i := range checks {
		out[i] = Status{Allowed: true, Remaining: 1}
	}
	return s.us, nil
}
