package sim

import (
	"context"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/memory"
)

// designedLimit designs req (quickly) and returns the limit its
// configuration loads as.
func designedLimit(t *testing.T, req Requirements) sluice.Limit {
	t.Helper()
	req.MaxArrivals = 3000
	a, err := Design(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Parse("design.yaml", []byte(a.Config))
	if err != nil {
		t.Fatalf("config.Parse: %v\n%s", err, a.Config)
	}
	return cfg.Policy.Plan("default").Limits[0]
}

// decideOneKey decides one request of cost 1 of one key under l at each of
// times (µs from sluice.Epoch, ascending) on a memory store, and returns
// the times of those admitted.
func decideOneKey(t *testing.T, l sluice.Limit, times []int64) []int64 {
	t.Helper()
	cur := sluice.Epoch
	st := memory.New(memory.WithClock(func() time.Time { return cur }), memory.WithClockResolution(0))
	defer st.Close()
	lim := sluice.NewLimiter(st)
	var admitted []int64
	for _, at := range times {
		cur = sluice.TimeFromMicros(at)
		var d sluice.Decision
		if err := lim.Allow(context.Background(), []sluice.Check{{Key: "client", Limit: l, Cost: 1}}, &d); err != nil {
			t.Fatal(err)
		}
		if d.Statuses[0].Allowed {
			admitted = append(admitted, at)
		}
	}
	return admitted
}

// every returns the times of one request every step for n steps, in µs.
func every(step time.Duration, n int) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = int64(time.Duration(i) * step / time.Microsecond)
	}
	return out
}

// worstSpan is the most of ascending times in any span (t−w, t], w in µs.
func worstSpan(times []int64, w int64) int64 {
	var worst int64
	first := 0
	for i, at := range times {
		for times[first] <= at-w {
			first++
		}
		worst = max(worst, int64(i-first+1))
	}
	return worst
}

// A design of "Q per W, bursts of at most B" for strict or approximate
// precision is a bucket that admits at most Q in any window and no less:
// a client that keeps that requirement exactly, one request at a time
// every W/Q (never more than Q in a window, never 2 at once), is refused
// nothing — also by an instance's share of a quota divided between
// instances, at the share's rate.
func TestSplitBucketAdmitsAClientAtTheStatedRateOneAtATime(t *testing.T) {
	for _, tc := range []struct {
		name  string
		req   Requirements
		rate  int64 // the client's requests per window, at one instance
		every time.Duration
	}{
		{"10/1s, bursts ≤ 1", Requirements{Rate: "10/1s", Burst: 1, Precision: PrecisionStrict}, 10, 100 * time.Millisecond},
		{"3/6s, bursts ≤ 1", Requirements{Rate: "3/6s", Burst: 1, Precision: PrecisionStrict}, 3, 2 * time.Second},
		{"10/1s, bursts ≤ 1, approximate", Requirements{Rate: "10/1s", Burst: 1}, 10, 100 * time.Millisecond},
		{"10/1m, bursts ≤ 2, on 3 instances' own memory: 3/1m each",
			Requirements{Rate: "10/1m", Burst: 2, Precision: PrecisionStrict, Instances: 3, Store: "memory"}, 3, 20 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := designedLimit(t, tc.req)
			_, w, _ := ParseRate(tc.req.Rate)
			times := every(tc.every, int(10*w/tc.every))
			if got := worstSpan(times, int64(w/time.Microsecond)); got > tc.rate {
				t.Fatalf("the client sends %d in one window, above %d", got, tc.rate)
			}
			if refused := len(times) - len(decideOneKey(t, l, times)); refused > 0 {
				t.Errorf("designed as %v, it refused %d of %d requests of a client at exactly %d per %s, one at a time",
					l, refused, len(times), tc.rate, FormatDuration(w))
			}
		})
	}
}

// A bucket the designer sizes to keep every window within Q (a stated
// burst cap below Q, or no room for the exact log) admits exactly Q in
// the worst window of a client that takes every unit as soon as it is
// there, never more; an instance's share of a quota divided between n
// instances admits its burst plus its refill less one (bucketWorst), and
// n of them together at most Q.
func TestSplitBucketFillsTheWorstWindowToTheQuantityAndNoMore(t *testing.T) {
	for _, tc := range []struct {
		name string
		req  Requirements
	}{
		{"100/1m, bursts ≤ 20, strict", Requirements{Rate: "100/1m", Burst: 20, Precision: PrecisionStrict}},
		{"10/1s, bursts ≤ 3, approximate", Requirements{Rate: "10/1s", Burst: 3}},
		{"7/3s, bursts ≤ 2, strict", Requirements{Rate: "7/3s", Burst: 2, Precision: PrecisionStrict}},
		{"100/1m, strict, no room for a log", Requirements{Rate: "100/1m", Precision: PrecisionStrict, Keys: 1e9, Instances: 2}},
		{"2000/1m, approximate, a log too long", Requirements{Rate: "2000/1m", Keys: 1}},
		{"11/1s, strict, no room for a log", Requirements{Rate: "11/1s", Precision: PrecisionStrict, Keys: 1e9, Instances: 2}},
		{"100/1m, bursts ≤ 20, on 3 instances' own memory",
			Requirements{Rate: "100/1m", Burst: 20, Precision: PrecisionStrict, Instances: 3, Store: "memory"}},
		{"10/1m, bursts ≤ 2, on 3 instances' own memory",
			Requirements{Rate: "10/1m", Burst: 2, Precision: PrecisionStrict, Instances: 3, Store: "memory"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := designedLimit(t, tc.req)
			q, w, _ := ParseRate(tc.req.Rate)
			n := int64(max(tc.req.Instances, 1))
			if tc.req.Store != "memory" {
				n = 1
			}
			// Greedy: four tries per unit of the limit's refill, for three windows.
			step := w / time.Duration(4*l.Quantity())
			worst := worstSpan(decideOneKey(t, l, every(step, int(3*w/step))), int64(w/time.Microsecond))
			switch {
			case worst != bucketWorst(l.Quantity(), l.Burst()):
				t.Errorf("%v admitted %d in its worst window, not burst + rate − 1 = %d", l, worst, bucketWorst(l.Quantity(), l.Burst()))
			case n == 1 && worst != q:
				t.Errorf("designed as %v, it admits at most %d in a window: the requirement is %s", l, worst, tc.req.Rate)
			case n*worst > q:
				t.Errorf("%d instances of %v admit up to %d in a window, above %d", n, l, n*worst, q)
			}
		})
	}
}
