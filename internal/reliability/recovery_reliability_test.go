package reliability_test

import (
	"context"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/redistest"
	"github.com/sluice-dev/sluice/internal/reliability"
	"github.com/sluice-dev/sluice/memory"
	"github.com/sluice-dev/sluice/redis"
)

// Two instances (on_store_error local, instances 2, as `sluice serve`
// opens its store, with a 250 ms timeout) decide 100 per second on four
// keys, each asking four times its share, while Redis fails for 1.2 s in
// one of three ways. From the second Redis returns in on, no second admits
// more than the promise: what each instance admitted locally is charged to
// Redis before Redis decides the key again, and until every instance has
// charged (the return period) each decides by its share and by Redis
// together (without the charge: 84, 97 and 6 over). Before that, the
// second the fault strikes admits at most the promise and one instance's
// share (each instance starts from its share of what Redis last said).
// Each admission is counted in the window its decision names (see
// reliability.Fleet); the few calls slow enough to leave two windows
// possible are counted where the promise holds if it can.
func TestRecoveryChargesWhatWasAdmittedLocally(t *testing.T) {
	for _, fault := range []struct {
		name        string
		start, stop func(*redistest.Server)
	}{
		{"killed and restarted empty", (*redistest.Server).Kill, (*redistest.Server).Restart},
		{"SIGSTOP then SIGCONT", (*redistest.Server).Pause, (*redistest.Server).Resume},
		{"out of memory (maxmemory 1 byte)",
			func(s *redistest.Server) { s.MustDo("CONFIG", "SET", "maxmemory", "1") },
			func(s *redistest.Server) { s.MustDo("CONFIG", "SET", "maxmemory", "0") }},
	} {
		t.Run(fault.name, func(t *testing.T) {
			srv := redistest.Standalone(t)
			var stores []sluice.Store
			for range 2 {
				// 250 ms rather than the default 50: on a machine busy with
				// other tests a probe can miss 50 ms several times in a row
				// and leave an instance out past the return period, whose
				// share is then beyond the promise (measured: 1 to 30 units,
				// up to 15 s late, in 1 of 3 runs); that is the timeout's
				// doing, not the charge's, which this test is about.
				// The local store reads the exact time: its default clock,
				// a ticker, lags by up to ~100 ms on a machine this busy,
				// and a lagging clock puts a local decision in the window
				// before its own (memory.Stats.ClockMaxLag says by how much).
				local := memory.New(memory.WithClockResolution(0))
				t.Cleanup(func() { local.Close() })
				g, err := redis.Open(context.Background(), redis.Options{Addrs: []string{srv.Addr}, Instances: 2,
					Timeout: 250 * time.Millisecond, Local: local})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { g.Close() })
				// Connected (a dial may miss the 50 ms timeout on a busy
				// machine; Open then connects in the background).
				for deadline := time.Now().Add(10 * time.Second); g.Ping(context.Background()) != nil; time.Sleep(20 * time.Millisecond) {
					if time.Now().After(deadline) {
						t.Fatal("not connected to Redis after 10 s")
					}
				}
				stores = append(stores, g)
			}
			promise := sluice.FixedWindow(100, time.Second)
			fleet := reliability.StartFleet(stores, []string{"a", "b", "c", "d"}, promise, 5*time.Millisecond)
			time.Sleep(1500 * time.Millisecond)
			struck := time.Now()
			fault.start(srv)
			time.Sleep(1200 * time.Millisecond)
			back := time.Now()
			fault.stop(srv)
			if !fleet.WaitRedis(1500*time.Millisecond, 15*time.Second) {
				t.Errorf("decisions still local 15 s after Redis's return")
			}
			// A return period's calls are Redis's decisions, within the
			// instance's share: count on until both have ended, and a second.
			for deadline := time.Now().Add(15 * time.Second); returning(stores); time.Sleep(50 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Errorf("still returning 15 s after Redis's return")
					break
				}
			}
			time.Sleep(time.Second)
			seen := fleet.Stop()

			second := func(t time.Time) time.Time { return t.Truncate(time.Second) }
			struckKey, struckWorst := seen.Worst(second(struck), second(struck).Add(time.Second))
			t.Logf("%d calls, %d errors, %d admissions in calls slow enough to leave two windows possible; "+
				"the second of the fault: at most %d admitted (%s, %d of them locally)",
				seen.Calls, seen.Errors, seen.Ambiguous, struckWorst.Admitted, struckKey, struckWorst.Local)
			key, worst := seen.Worst(second(back), time.Time{})
			t.Logf("from the second of the return on: at most %d admitted (%s at %+d ms after the return, %d of them locally); last local admission %+d ms after it",
				worst.Admitted, key, worst.Start.Sub(back).Milliseconds(), worst.Local, fleet.LastLocal().Sub(back).Milliseconds())
			t.Logf("windows (ms after the fault; Redis returned %d ms after it):%s", back.Sub(struck).Milliseconds(), seen.Table(struck))
			if seen.Errors != 0 {
				t.Errorf("%d calls failed: %v", seen.Errors, seen.Errs)
			}
			if over := worst.Admitted - promise.Quantity(); over > 0 {
				t.Errorf("%s admitted %d units in the second from %+d ms after Redis's return: %d over the promise; its admissions:%s",
					key, worst.Admitted, worst.Start.Sub(back).Milliseconds(), over, seen.Timeline(key, worst.Start))
			}
			if struckWorst.Admitted > promise.Quantity() {
				t.Logf("%s's admissions in the second of the fault:%s", struckKey, seen.Timeline(struckKey, struckWorst.Start))
			}
			if struckWorst.Admitted > promise.Quantity()+promise.Quantity()/2 {
				t.Errorf("%s admitted %d units in the second of the fault: more than the promise and one share", struckKey, struckWorst.Admitted)
			}
		})
	}
}

// returning reports whether a store opened by redis.Open is in a return
// period (failover.Stats.Returning).
func returning(stores []sluice.Store) bool {
	for _, st := range stores {
		if st.(*redis.Guarded).Failover().Stats().Returning > 0 {
			return true
		}
	}
	return false
}
