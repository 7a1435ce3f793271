package redis

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/conformance"
	"github.com/sluice-dev/sluice/internal/redistest"
)

// Charge takes what is left and never refuses, under every algorithm: after
// 6 of 10 admitted, a charge of 7 takes 4 and leaves nothing, a charge of 0
// takes nothing, and the next check of 1 is refused. The clock stands still
// 17 s into a minute: Redis's own clock could cross a window's end between
// two calls.
func TestChargeTakesWhatIsLeftAndNeverRefuses(t *testing.T) {
	srv := redistest.Standalone(t)
	clock := conformance.NewClock(conformance.DefaultStart.Add(17 * time.Second))
	s := New(srv.Client(t), WithTimeout(time.Second), WithTimeForTesting(clock.Now))
	ctx := context.Background()
	for _, l := range []sluice.Limit{
		sluice.FixedWindow(10, time.Minute), sluice.SlidingLog(10, time.Minute), sluice.SlidingCounter(10, time.Minute),
		sluice.TokenBucket(10, time.Hour), sluice.LeakyBucket(10, time.Hour), sluice.GCRA(10, time.Hour),
	} {
		t.Run(l.Algorithm().String(), func(t *testing.T) {
			key := "charge-" + l.Algorithm().String()
			out := make([]sluice.Status, 1)
			if err := s.Apply(ctx, []sluice.Check{{Key: key, Limit: l, Cost: 6}}, out); err != nil || !out[0].Allowed {
				t.Fatalf("spending 6: %+v, %v", out[0], err)
			}
			taken := make([]int64, 2)
			if err := s.charge(ctx, []sluice.Check{{Key: key, Limit: l, Cost: 7}, {Key: key + "-none", Limit: l}}, nil, taken); err != nil {
				t.Fatal(err)
			}
			if taken[0] != 4 || taken[1] != 0 {
				t.Errorf("taken %v, want [4 0]", taken)
			}
			if err := s.Apply(ctx, []sluice.Check{{Key: key, Limit: l, Cost: 1}}, out); err != nil || out[0].Allowed || out[0].Remaining != 0 {
				t.Errorf("after the charge: %+v, %v; want refused, nothing left", out[0], err)
			}
		})
	}
}

func TestHistoryTellsLostWritesAndEmptyRestarts(t *testing.T) {
	master := func(id, id2 string, off, second int64) replication {
		return replication{role: "master", replid: id, replid2: id2, offset: off, secondOff: second}
	}
	var h history
	steps := []struct {
		name      string
		addr      string
		r         replication
		lost      int64
		restarted bool
	}{
		{"a master first seen", "m1", master("A", "", 100, 0), 0, false},
		{"its offset grows", "m1", master("A", "", 500, 0), 0, false},
		{"a replica seen is not a master", "m2", replication{role: "slave", replid: "A", offset: 450}, 0, false},
		{"its replica promoted with all of it", "m2", master("B", "A", 520, 501), 0, false},
		{"the old master again, demoted, says nothing", "m1", replication{role: "slave", replid: "B"}, 0, false},
		{"B grows", "m2", master("B", "A", 900, 501), 0, false},
		{"C took over from B at 700: 200 bytes B acknowledged are gone", "m1", master("C", "B", 710, 701), 200, false},
		{"m1 back with a history of its own", "m1", master("D", "", 0, 0), 0, true},
		{"a new address's first history is not a restart", "m3", master("E", "", 5, 0), 0, false},
	}
	for _, st := range steps {
		lost, restarted := h.observe(st.addr, st.r)
		if lost != st.lost || restarted != st.restarted {
			t.Errorf("%s: lost %d, restarted %v; want %d, %v", st.name, lost, restarted, st.lost, st.restarted)
		}
	}
}

// Under WithReplicas a write no replica acknowledges is an error, never a
// decision; with the replica attached, the same call is decided.
func TestWithReplicasTurnsAnUnreplicatedWriteIntoAnError(t *testing.T) {
	master, replica := redistest.Standalone(t), redistest.Standalone(t)
	check := []sluice.Check{{Key: "durable", Limit: sluice.PerMinute(10), Cost: 1}}
	out := make([]sluice.Status, 1)
	// Without a replica no wait is long enough: 250 ms.
	err := New(master.Client(t), WithTimeout(time.Second), WithReplicas(1, 250*time.Millisecond)).
		Apply(context.Background(), check, out)
	if err == nil || !errors.Is(err, sluice.ErrStoreUnavailable) {
		t.Fatalf("without a replica: %v, want an error wrapping ErrStoreUnavailable", err)
	}
	replica.MustDo("REPLICAOF", "127.0.0.1", itoa(master.Port))
	// The replica's link is up before the master counts it online (Redis
	// waits for the replica's first acknowledgement); WAIT answering 1 is
	// the master's own word that the replica acknowledges writes.
	deadline := time.Now().Add(10 * time.Second)
	for {
		if n, err := master.Do("WAIT", "1", "100"); err == nil && n == int64(1) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the replica did not sync")
		}
		time.Sleep(20 * time.Millisecond)
	}
	// 5 s for the replica's acknowledgement: a machine running every test
	// package at once has taken more than 250 ms.
	s := New(master.Client(t), WithTimeout(testTimeout), WithReplicas(1, 5*time.Second))
	if err := s.Apply(context.Background(), check, out); err != nil || !out[0].Allowed || out[0].Remaining != 8 {
		t.Fatalf("with the replica: %+v, %v; want admitted with 8 left (the refused call's write stayed)", out[0], err)
	}
	if v, err := replica.Do("EXISTS", Key("durable", "per-minute")); err != nil || v != int64(1) {
		t.Errorf("the replica lacks the state: %v, %v", v, err)
	}
}

// Under WithReplicas a charge (units a fallback admitted, told to Redis) is
// held to what every decision is: a charge no replica acknowledges is an
// error, so that the failover keeps owing it rather than trusting a write
// a failover can forget.
func TestWithReplicasTurnsAnUnreplicatedChargeIntoAnError(t *testing.T) {
	t.Parallel()
	master := redistest.Standalone(t) // no replica: no wait is long enough
	s := New(master.Client(t), WithTimeout(testTimeout), WithReplicas(1, 50*time.Millisecond))
	check := []sluice.Check{{Key: "owed", Limit: sluice.PerMinute(10), Cost: 3}}
	err := s.Charge(context.Background(), check)
	if err == nil || !errors.Is(err, sluice.ErrStoreUnavailable) {
		t.Fatalf("Charge = %v, want an error wrapping ErrStoreUnavailable", err)
	}
}
