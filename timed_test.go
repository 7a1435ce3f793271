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

// A Decision reused by AllowInto names the limit of its latest call, in
// every field, whichever one field of the Limit changed since the call
// before; the caller's own change to d.Limit is overwritten too.
func TestReusedDecisionLimitIsTheCheck(t *testing.T) {
	ctx := context.Background()
	lim := NewLimiter(&clockedStore{us: 1})
	name := "otherx"
	l := GCRA(10, time.Second)
	var d Decision
	for i, change := range []func(Limit) Limit{
		func(l Limit) Limit { return l },                                 // fresh
		func(l Limit) Limit { return l },                                 // reused, same limit
		func(l Limit) Limit { return l.Named(name) },                     // another name
		func(l Limit) Limit { return l.Named(name[:5]) },                 // its prefix, at the same address
		func(l Limit) Limit { return l.Named(string([]byte(name[:5]))) }, // equal, at another address
		func(l Limit) Limit { return l.Named("abcde") },                  // another, of the same length
		func(l Limit) Limit { return l.WithBurst(20) },                   // burst
		func(l Limit) Limit { return l.Using(AlgorithmLeakyBucket) },     // algorithm
		func(l Limit) Limit { return l.WithShadow(true) },                // shadow
		func(l Limit) Limit { return l.WithMaxWait(time.Second) },        // max wait
		func(l Limit) Limit {
			return NewLimit(l.alg, 20, l.Window()).Named(l.name).WithBurst(20).WithShadow(true).WithMaxWait(time.Second)
		}, // quantity
		func(l Limit) Limit {
			return NewLimit(l.alg, 20, 2*l.Window()).Named(l.name).WithBurst(20).WithShadow(true).WithMaxWait(time.Second)
		}, // window
		func(l Limit) Limit { d.Limit = Limit{}; return l },              // the caller's
		func(l Limit) Limit { d.Limit = d.Limit.WithBurst(1); return l }, // the caller's, valid
	} {
		before := l
		if l = change(l); i != 0 && i != 1 && i != 4 && i < 12 && l == before {
			t.Fatalf("step %d changed nothing", i)
		}
		if err := l.Err(); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		checks := []Check{{Key: "k", Limit: l, Cost: 1}}
		if err := lim.AllowInto(ctx, &d, checks); err != nil {
			t.Fatal(err)
		}
		if d.Limit != l {
			t.Errorf("step %d: Decision.Limit %v, want the check's %v", i, d.Limit, l)
		}
	}
}
