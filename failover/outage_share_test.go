package failover_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/failover"
	"github.com/sluice-dev/sluice/internal/storetest"
	"github.com/sluice-dev/sluice/memory"
)

// TestAnOutageSharesAtLeastOneUnitPerInstance: while the primary is out,
// each of n instances decides a limit of Q by its share s = max(⌊Q/n⌋, 1):
// rounded up to 1 when Q < n, so that no limit refuses everything, and
// the bound package redis states is written with that s. From a fresh key
// the n instances admit exactly n·s per window; a concurrency limit whose
// Q leases are held on the primary has exactly Q + n·s units in flight,
// the stated bound (Concurrency(1) on 4 instances: 5).
func TestAnOutageSharesAtLeastOneUnitPerInstance(t *testing.T) {
	for _, tc := range []struct {
		name string
		q, n int64
	}{
		{"one unit on four instances", 1, 4},
		{"three units on four instances", 3, 4},
		{"as many units as instances", 4, 4},
		{"seven units on three instances", 7, 3},
		{"ten units on four instances", 10, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := max(tc.q/tc.n, 1)
			for _, l := range []sluice.Limit{sluice.FixedWindow(tc.q, time.Minute), sluice.Concurrency(tc.q, time.Minute)} {
				if got := l.Scale(1, tc.n).Quantity(); got != s {
					t.Errorf("%s: share %d, want max(⌊%d/%d⌋, 1) = %d", l.Algorithm(), got, tc.q, tc.n, s)
				}
			}
			if got := admittedInAnOutage(t, sluice.FixedWindow(tc.q, time.Minute), tc.n, 0); got != tc.n*s {
				t.Errorf("fixed window: %d admitted in a window of the outage, want n·s = %d", got, tc.n*s)
			}
			if got := admittedInAnOutage(t, sluice.Concurrency(tc.q, time.Minute), tc.n, tc.q); got != tc.q+tc.n*s {
				t.Errorf("concurrency: %d in flight, want Q + n·s = %d", got, tc.q+tc.n*s)
			}
		})
	}
}

// admittedInAnOutage holds held units of l on a primary, takes it out,
// and returns those units plus all that n instances, each with a local
// store of its own, admit of l on the same key, each asked until it
// refuses: what the fleet admits in one window (or holds at once) while
// the primary is out.
func admittedInAnOutage(t *testing.T, l sluice.Limit, n, held int64) int64 {
	t.Helper()
	ctx := context.Background()
	remote := memory.New(memory.WithSweepInterval(0))
	t.Cleanup(func() { remote.Close() })
	checks := []sluice.Check{{Key: "client", Limit: l, Cost: 1}}
	var d sluice.Decision
	for range held {
		if err := sluice.NewLimiter(remote).Allow(ctx, checks, &d); err != nil || !d.Allowed {
			t.Fatalf("held on the primary: %v %+v", err, d)
		}
	}
	admitted := held
	for range n {
		primary := &storetest.Flaky{Next: remote}
		primary.Fail(storetest.ErrRedisDown)
		local := memory.New(memory.WithSweepInterval(0))
		t.Cleanup(func() { local.Close() })
		f, err := failover.New(primary, local, failover.Options{Instances: int(n), Timeout: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		lim := sluice.NewLimiter(f)
		for range l.Quantity() + 1 {
			if err := lim.Allow(ctx, checks, &d); err != nil {
				t.Fatal(err)
			}
			if !d.Allowed {
				break
			}
			admitted++
		}
	}
	return admitted
}

// TestRedisDocStatesTheOutageBoundWithTheRealShare holds package redis's
// statement of the bounds to the share measured above: s = max(⌊Q/n⌋, 1),
// and Q + n·s units of a concurrency limit in flight.
func TestRedisDocStatesTheOutageBoundWithTheRealShare(t *testing.T) {
	doc, err := os.ReadFile("../redis/doc.go")
	if err != nil {
		t.Fatal(err)
	}
	flat := strings.Join(strings.Fields(strings.ReplaceAll(string(doc), "//", "")), " ")
	for _, want := range []string{"each instance's share s = max(⌊Q/n⌋, 1)", "at most Q + n·s units are in flight"} {
		if !strings.Contains(flat, want) {
			t.Errorf("redis/doc.go does not say %q", want)
		}
	}
}
