package client_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/client"
)

func TestLimiterGateOverConcurrencyWaitsForASlot(t *testing.T) {
	t.Parallel()
	gate := client.NewLocalGate(sluice.Concurrency(2, time.Minute))
	ctx := context.Background()
	a, err := gate.Acquire(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := gate.Acquire(ctx, 1); err != nil {
		t.Fatal(err)
	}
	// Both slots held: a third waits for one, not for the minute of the
	// lease the refusal names, and gets it when a is released.
	go func() {
		time.Sleep(100 * time.Millisecond)
		a()
		a() // a second release gives nothing more back
	}()
	begin := time.Now()
	wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if _, err := gate.Acquire(wctx, 1); err != nil {
		t.Fatalf("third: %v after %v", err, time.Since(begin))
	}
	// (Far less than the lease's minute; a loaded machine may take a
	// while to run the releasing goroutine.)
	if took := time.Since(begin); took < 90*time.Millisecond || took > 5*time.Second {
		t.Errorf("the third slot came after %v, want when the first was released (100ms)", took)
	}
	// a's double release freed one slot only: a fourth waits until its
	// deadline.
	dctx, cancel := context.WithTimeout(ctx, 150*time.Millisecond)
	defer cancel()
	begin = time.Now()
	_, err = gate.Acquire(dctx, 1)
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(begin) < 140*time.Millisecond {
		t.Errorf("fourth: %v after %v, want the deadline's error at the deadline", err, time.Since(begin))
	}
}

// A Transport whose Gate is a concurrency limit of 3 holds a slot from
// each attempt until its response's body is closed: never more than 3
// requests at the server, and the batch does not stall on leases.
func TestTransportHoldsAConcurrencyGateUntilTheBodyIsClosed(t *testing.T) {
	t.Parallel()
	var inflight, most atomic.Int64
	api := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		n := inflight.Add(1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		time.Sleep(10 * time.Millisecond)
		inflight.Add(-1)
	}))
	t.Cleanup(api.Close)
	wire := newWire(t)
	tr := &client.Transport{Base: wire, Gate: client.NewLocalGate(sluice.Concurrency(3, time.Minute))}
	begin := time.Now()
	statuses := batch(t, &http.Client{Transport: tr}, api.URL, 60, 8)
	if statuses[200] != 60 {
		t.Errorf("statuses %v", statuses)
	}
	if m := most.Load(); m > 3 || m < 2 {
		t.Errorf("at most %d requests at once at the server, want 3 (at least 2)", m)
	}
	// 60 requests of 10 ms, 3 at a time: about 200 ms.
	if took := time.Since(begin); took > 5*time.Second {
		t.Errorf("the batch took %v: slots were not given back", took)
	}
}

// A gate of a concurrency limit and a leaky-bucket queue whose caller waits
// for a slot, then gets one whose queue turn starts after its deadline,
// fails at once with ErrWaitTooLong (as a queue turn past the deadline
// does without the slot), and gives the slot back.
func TestLimiterGateSlotWhoseQueueTurnIsTooLateIsErrWaitTooLong(t *testing.T) {
	t.Parallel()
	gate := client.NewLocalGate(sluice.Concurrency(1, time.Minute),
		sluice.LeakyBucket(1, time.Hour).WithBurst(1).WithMaxWait(10*time.Hour))
	ctx := context.Background()
	a, err := gate.Acquire(ctx, 1) // the slot, and the queue's one turn now
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		time.Sleep(50 * time.Millisecond)
		a()
	}()
	wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	begin := time.Now()
	_, err = gate.Acquire(wctx, 1) // the slot frees; the queue's next turn is an hour away
	if !errors.Is(err, client.ErrWaitTooLong) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err %v, want ErrWaitTooLong wrapping the deadline", err)
	}
	if took := time.Since(begin); took > 4*time.Second {
		t.Errorf("failed after %v, want at once once the slot freed", took)
	}
	// The slot was given back: the next caller is not held waiting for
	// one, but told at once that its queue turn (two hours away: the late
	// turn's slot stays spent) is too late.
	nctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	begin = time.Now()
	_, err = gate.Acquire(nctx, 1)
	if !errors.Is(err, client.ErrWaitTooLong) || time.Since(begin) > time.Second {
		t.Errorf("after the late turn: %v after %v, want ErrWaitTooLong at once (the slot free)", err, time.Since(begin))
	}
}
