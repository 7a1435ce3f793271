package sim

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/storetest"
)

// simulate runs req and fails the test on error.
func simulate(t testing.TB, req Request) *Result {
	t.Helper()
	resp, err := Simulate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	return resp.Result
}

func row(t testing.TB, res *Result, label string) AlgorithmResult {
	t.Helper()
	for _, a := range res.Algorithms {
		if a.Label == label {
			return a
		}
	}
	t.Fatalf("no row %q in %+v", label, res.Algorithms)
	return AlgorithmResult{}
}

// The boundary burst is the textbook failure of the fixed window: a full
// quota just before a boundary and another just after it are both admitted,
// twice the limit within one window's span. The simulator must measure it
// itself, and measure that the exact log never goes above the limit.
func TestBoundaryBurstFixedWindowAdmitsTwiceTheLimitTheLogNever(t *testing.T) {
	for _, limit := range []string{"100/1m", "10/1s", "1000/1h"} {
		t.Run(limit, func(t *testing.T) {
			res := simulate(t, Request{Pattern: &Pattern{Name: PatternBoundaryBurst}, Limit: limit})
			q := res.Quantity
			fw := row(t, res, "fixed-window")
			if fw.WorstWindow < 19*q/10 || fw.WorstWindow > 2*q {
				t.Errorf("fixed window: worst window %d, want about 2×%d", fw.WorstWindow, q)
			}
			if fw.OvershootPct < 90 {
				t.Errorf("fixed window: overshoot %.1f%%, want about 100%%", fw.OvershootPct)
			}
			if fw.Rejected != 0 {
				t.Errorf("fixed window refused %d requests of a pattern that fills each window exactly", fw.Rejected)
			}
			log := row(t, res, "sliding-window-log")
			if log.WorstWindow != q || log.OvershootPct != 0 {
				t.Errorf("sliding log: worst window %d (overshoot %.1f%%), want exactly the limit %d", log.WorstWindow, log.OvershootPct, q)
			}
			if log.Disagreements != 0 || log.StateBytesMax != 16*q {
				t.Errorf("sliding log: %d disagreements with itself, state %d bytes (want 0, %d)", log.Disagreements, log.StateBytesMax, 16*q)
			}
			// Half the fixed window's admissions are those the exact log
			// refuses.
			if fw.FalseAllows != fw.Admitted-log.Admitted || fw.FalseDenials != 0 {
				t.Errorf("fixed window: %d false allows, %d false denials; want %d and 0", fw.FalseAllows, fw.FalseDenials, fw.Admitted-log.Admitted)
			}
		})
	}
}

// Run must decide with sluice's own Decide, one State per key: replaying a
// trace by hand through Decide gives the same counts.
func TestRunDecidesWithTheRealAlgorithms(t *testing.T) {
	tr, err := Generate(Pattern{Name: PatternManyKeys, Keys: 20, Seed: 7}, 10, time.Second, 0)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := Contenders(sluice.Algorithms(), 10, time.Second, 4, 0)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), tr, Config{Quantity: 10, Window: time.Second, Contenders: cs})
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range cs {
		states := map[int32]sluice.State{}
		var admitted int64
		for _, a := range tr.Arrivals {
			next, st := storetest.Decided(c.Limit.Decide(states[a.Key], a.At, a.Cost))
			if st.Allowed {
				states[a.Key] = next
				admitted++
			}
		}
		if got := res.Algorithms[i]; got.Admitted != admitted || got.Decisions != int64(len(tr.Arrivals)) {
			t.Errorf("%s: Run admitted %d of %d, Decide by hand %d of %d", c.Limit, got.Admitted, got.Decisions, admitted, len(tr.Arrivals))
		}
	}
}

// The bucket algorithms promise at most burst + ⌊d·Q/W⌋ in any span d; the
// measured worst window must respect it, and the designer's strict GCRA
// (quantity Q-B+1, burst B) must stay within Q.
func TestWorstWindowsKeepEachAlgorithmsPromise(t *testing.T) {
	for _, p := range []string{PatternSteady, PatternSpike, PatternDiurnal, PatternManyKeys} {
		res := simulate(t, Request{Pattern: &Pattern{Name: p, Seed: 3}, Limit: "60/10s", Burst: 15, MaxWait: new(Duration)})
		for _, a := range res.Algorithms {
			bound := res.Quantity
			switch a.Algorithm {
			case "fixed-window", "sliding-window-counter":
				bound = 2 * res.Quantity
			case "token-bucket", "leaky-bucket", "gcra":
				bound = 15 + res.Quantity
			}
			if a.WorstWindow > bound {
				t.Errorf("%s, %s: worst window %d above its promise %d", p, a.Label, a.WorstWindow, bound)
			}
		}
		strict := simulate(t, Request{Pattern: &Pattern{Name: p, Seed: 3}, Limit: "46/10s", Burst: 15, Reference: "60/10s", Algorithms: []string{"gcra"}})
		if g := strict.Algorithms[0]; g.WorstWindow > 60 {
			t.Errorf("%s: gcra 46/10s burst 15 admitted %d in one window, above 60", p, g.WorstWindow)
		}
	}
}

// The leaky bucket as a queue admits what fits within MaxWait with a
// delay; as a meter it decides exactly as the token bucket.
func TestLeakyBucketQueueDelaysAndMeterMatchesTokenBucket(t *testing.T) {
	wait := Duration(2 * time.Second)
	res := simulate(t, Request{Pattern: &Pattern{Name: PatternSpike}, Limit: "10/1s", MaxWait: &wait,
		Algorithms: []string{"leaky-bucket", "token-bucket"}})
	lb, tb := row(t, res, "leaky-bucket"), row(t, res, "token-bucket")
	if lb.Delayed == 0 || lb.MaxDelay.D() > 2*time.Second || lb.MeanDelay <= 0 || lb.MeanDelay > lb.MaxDelay {
		t.Errorf("queue: %d delayed, mean %v, max %v (max wait 2s)", lb.Delayed, lb.MeanDelay, lb.MaxDelay)
	}
	if lb.Admitted <= tb.Admitted {
		t.Errorf("the queue admitted %d, no more than the meter-like token bucket's %d", lb.Admitted, tb.Admitted)
	}
	meter := simulate(t, Request{Pattern: &Pattern{Name: PatternSpike}, Limit: "10/1s", MaxWait: new(Duration),
		Algorithms: []string{"leaky-bucket", "token-bucket"}})
	if a, b := meter.Algorithms[0], meter.Algorithms[1]; a.Admitted != b.Admitted || a.Delayed != 0 || a.FalseAllows != b.FalseAllows {
		t.Errorf("leaky meter %+v and token bucket %+v decided differently", a, b)
	}
}

// Refused clients that retry multiply the traffic; each algorithm sees the
// retries its own refusals cause, and is compared with an exact log fed the
// very same requests.
func TestRetryStormAmplifiesTraffic(t *testing.T) {
	res := simulate(t, Request{Pattern: &Pattern{Name: PatternRetryStorm}, Limit: "100/1m"})
	if res.Retry == nil || res.Retry.Max != DefaultRetryStorm().Max {
		t.Fatalf("retry policy %+v", res.Retry)
	}
	for _, a := range res.Algorithms {
		if a.Retries == 0 || a.Decisions != int64(res.Requests)+a.Retries {
			t.Errorf("%s: %d decisions for %d requests and %d retries", a.Label, a.Decisions, res.Requests, a.Retries)
		}
		if a.Label == "sliding-window-log" && (a.Disagreements != 0 || a.WorstWindow > res.Quantity) {
			t.Errorf("sliding log under retries: %d disagreements, worst %d", a.Disagreements, a.WorstWindow)
		}
	}
	calm := simulate(t, Request{Pattern: &Pattern{Name: PatternRetryStorm}, Limit: "100/1m", Retry: &RetryPolicy{}})
	if calm.Algorithms[0].Retries != 0 || calm.Retry != nil {
		t.Errorf("a zero retry policy retried: %+v", calm.Algorithms[0])
	}
}

func TestSimulateIsDeterministic(t *testing.T) {
	req := Request{Pattern: &Pattern{Name: PatternRetryStorm, Keys: 5}, Limit: "20/1s", Seed: 42}
	a, b := simulate(t, req), simulate(t, req)
	for i := range a.Algorithms {
		if a.Algorithms[i] != b.Algorithms[i] {
			t.Fatalf("two runs differ:\n%+v\n%+v", a.Algorithms[i], b.Algorithms[i])
		}
	}
	req.Seed = 43
	if c := simulate(t, req); c.Requests == a.Requests && c.Algorithms[0] == a.Algorithms[0] {
		t.Fatal("another seed gave the same traffic")
	}
}

func TestRunStopsWhenTheContextIsDone(t *testing.T) {
	tr, err := Generate(Pattern{Name: PatternSteady, Keys: 100}, 1000, time.Second, 0)
	if err != nil {
		t.Fatal(err)
	}
	cs, _ := Contenders(sluice.Algorithms(), 1000, time.Second, 0, 0)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Run(ctx, tr, Config{Quantity: 1000, Window: time.Second, Contenders: cs}); err != context.Canceled {
		t.Fatalf("Run on a done context: %v", err)
	}
}

func TestSimulateRejectsBadRequests(t *testing.T) {
	for name, req := range map[string]Request{
		"no traffic":          {Limit: "1/1s"},
		"pattern and trace":   {Pattern: &Pattern{Name: "steady"}, Trace: "1,a,1\n", Limit: "1/1s"},
		"an unknown pattern":  {Pattern: &Pattern{Name: "tsunami"}, Limit: "1/1s"},
		"a bad limit":         {Pattern: &Pattern{Name: "steady"}, Limit: "fast"},
		"an unknown algo":     {Pattern: &Pattern{Name: "steady"}, Limit: "1/1s", Algorithms: []string{"magic"}},
		"burst on no bucket":  {Pattern: &Pattern{Name: "steady"}, Limit: "1/1s", Burst: -1},
		"a chart format":      {Pattern: &Pattern{Name: "steady"}, Limit: "1/1s", Chart: "gif"},
		"too much traffic":    {Pattern: &Pattern{Name: "steady", Keys: 1000, Rate: 1e6}, Limit: "1/1s", MaxArrivals: 1000},
		"boundary, too short": {Pattern: &Pattern{Name: "boundary-burst", Duration: Duration(time.Second)}, Limit: "1/1s"},
	} {
		if _, err := Simulate(context.Background(), req); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// Without retries keys are replayed one after another; replaying them
// interleaved in time order gives the very same result, worst window and
// its key and time included, for every algorithm.
func TestReplayByKeyDecidesAsInTimeOrder(t *testing.T) {
	for _, p := range []Pattern{
		{Name: PatternManyKeys, Keys: 300, Seed: 7},
		{Name: PatternBoundaryBurst, Keys: 5, Seed: 2},
		{Name: PatternSpike, Keys: 3, Seed: 3},
	} {
		tr, err := Generate(p, 20, time.Second, 0)
		if err != nil {
			t.Fatal(err)
		}
		cs, err := Contenders(sluice.Algorithms(), 20, time.Second, 5, 100*time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		cfg := Config{Quantity: 20, Window: time.Second, Contenders: cs}
		byKey, err := Run(t.Context(), tr, cfg)
		if err != nil {
			t.Fatal(err)
		}
		cfg.interleaved = true
		inOrder, err := Run(t.Context(), tr, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(byKey, inOrder) {
			for i := range byKey.Algorithms {
				if a, b := byKey.Algorithms[i], inOrder.Algorithms[i]; !reflect.DeepEqual(a, b) {
					t.Errorf("%s, %s:\nby key   %+v\nin order %+v", p.Name, a.Label, a, b)
				}
			}
			t.Errorf("%s: results differ", p.Name)
		}
	}
}

// A quota per calendar month is simulated through the calendar window
// (the real kernel) as the fixed window, the other algorithms over 31
// days; the boundary bursts cross the starts of months, and each row
// measures the most admitted in one month beside the most in any 31 days.
func TestSimulateCalendarQuota(t *testing.T) {
	res := simulate(t, Request{Pattern: &Pattern{Name: PatternBoundaryBurst}, Limit: "100/month"})
	if res.Limit != "100/month" || res.Period != "month" || res.Window.D() != 31*24*time.Hour || res.Reference != "sliding-window-log 100/31d" {
		t.Fatalf("result %s per %s (%v), reference %s", res.Limit, res.Period, res.Window, res.Reference)
	}
	cal := row(t, res, "fixed-window (month)")
	if cal.Limit != sluice.Calendar(100, sluice.Month).String() || cal.Rejected != 0 {
		t.Fatalf("the calendar window: %+v", cal)
	}
	// 2020: bursts across Feb 1, Apr 1, Jun 1, Aug 1 and Oct 1 (Nov 6 ends
	// the 310 days), each a month's quota on either side.
	if cal.Admitted != 1000 || cal.WorstPeriod != 100 || cal.WorstWindow != 200 {
		t.Errorf("the calendar window admitted %d, %d in one month, %d within 31 days; want 1000, 100, 200", cal.Admitted, cal.WorstPeriod, cal.WorstWindow)
	}
	at := sluice.TimeFromMicros(int64(cal.WorstAt.D() / time.Microsecond))
	if at.Day() != 1 || at.Month()%2 != 0 {
		t.Errorf("the worst 31 days end at %v, not just after the start of an even month", at)
	}
	log := row(t, res, "sliding-window-log")
	if log.WorstWindow != 100 || log.WorstPeriod != 100 || log.Admitted != 500 {
		t.Errorf("the exact log of 100 per 31 days: %+v", log)
	}
	var b strings.Builder
	if err := WriteTable(&b, res); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "worst month  worst 31d") || !strings.Contains(strings.Join(strings.Fields(b.String()), " "), "fixed-window (month) 1000 0 100/100 200/100 +100%") {
		t.Errorf("table:\n%s", b.String())
	}
	// Tested against a stated quota, and through a trace of its own.
	res = simulate(t, Request{Trace: "2020-01-31T23:00:00Z,a\n2020-01-31T23:30:00Z,a\n2020-02-01T00:00:00Z,a\n2020-02-01T00:00:00Z,a\n2020-02-01T01:00:00Z,a\n",
		Limit: "2/month", Reference: "3/month", Algorithms: []string{"fixed-window"}})
	if f := res.Algorithms[0]; res.Tested != "2/month" || f.Admitted != 4 || f.WorstPeriod != 2 || f.WorstWindow != 4 {
		t.Errorf("tested %q: %+v", res.Tested, f)
	}
}

// A zone shifts a calendar quota's periods in a simulation as in the
// configuration: three requests late on a UTC day are two on one Tokyo day
// and one on the next; a month from the 15th in Tokyo is the configured
// limit's.
func TestSimulateCalendarQuotaInAZone(t *testing.T) {
	trace := "2026-03-10T14:00:00Z,a\n2026-03-10T14:30:00Z,a\n2026-03-10T15:30:00Z,a\n"
	utc := simulate(t, Request{Trace: trace, Limit: "2/day", Algorithms: []string{"fixed-window"}})
	tokyo := simulate(t, Request{Trace: trace, Limit: "2/day", Zone: "+09:00", Algorithms: []string{"fixed-window"}})
	if u, k := utc.Algorithms[0], tokyo.Algorithms[0]; u.Admitted != 2 || k.Admitted != 3 || tokyo.Period != "day" {
		t.Errorf("admitted %d by UTC days, %d by Tokyo's (period %q); want 2 and 3", u.Admitted, k.Admitted, tokyo.Period)
	}
	res := simulate(t, Request{Pattern: &Pattern{Name: PatternBoundaryBurst}, Limit: "100/month", Zone: "+09:00", Starts: "15",
		Reference: "120/month", Algorithms: []string{"fixed-window"}})
	want := sluice.Calendar(100, sluice.Month).WithOffset(14*24*time.Hour - 9*time.Hour)
	if res.Offset.D() != want.Offset() || res.Algorithms[0].Limit != want.String() {
		t.Errorf("periods offset by %v, limit %s; want %v, %s", res.Offset, res.Algorithms[0].Limit, want.Offset(), want)
	}
	for name, bad := range map[string]Request{
		"a zone on a minute": {Pattern: &Pattern{Name: PatternSteady}, Limit: "100/1m", Zone: "+09:00"},
		"starts on a day":    {Pattern: &Pattern{Name: PatternSteady}, Limit: "100/day", Starts: "3"},
		"a named zone":       {Pattern: &Pattern{Name: PatternSteady}, Limit: "100/month", Zone: "Asia/Tokyo"},
	} {
		if err := bad.Validate(); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// A concurrency limit keeps a log of leases, 16 bytes each, like the
// sliding log: its state per key is measured at each key's peak, not
// reported as a fixed 16 bytes.
func TestConcurrencyStateIsMeasuredAsALog(t *testing.T) {
	const s = int64(time.Second / time.Microsecond)
	tr := &Trace{Source: "t", Keys: []string{"a", "b"}, End: 3 * s, Arrivals: []Arrival{
		{At: 0, Key: 0, Cost: 1}, {At: 0, Key: 1, Cost: 1}, {At: s, Key: 0, Cost: 1}, {At: 2 * s, Key: 0, Cost: 1},
	}}
	res, err := Run(context.Background(), tr, Config{Quantity: 3, Window: 10 * time.Second,
		Contenders: []Contender{{Limit: sluice.NewLimit(sluice.AlgorithmConcurrency, 3, 10*time.Second)}}})
	if err != nil {
		t.Fatal(err)
	}
	// Key a holds 3 leases (48 B), key b 1 (16 B): 48 at most, 32 on average.
	r := res.Algorithms[0]
	if r.Admitted != 4 || r.StateBytesMax != 48 || r.StateBytesMean != 32 {
		t.Errorf("admitted %d, state %d B max, %v B mean; want 4, 48 and 32", r.Admitted, r.StateBytesMax, r.StateBytesMean)
	}
	var b strings.Builder
	if err := WriteTable(&b, res); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "48 B max, 32 B mean") {
		t.Errorf("table:\n%s", b.String())
	}
}

// A pattern too thin to draw one request is refused as the pattern it is,
// with what to change: the caller gave no trace.
func TestSimulateNamesAPatternThatDrewNoRequest(t *testing.T) {
	for _, p := range []Pattern{
		{Name: PatternDiurnal, Rate: 0.001},
		{Name: PatternSteady, Duration: Duration(time.Millisecond)},
	} {
		_, err := Simulate(context.Background(), Request{Pattern: &p, Limit: "10/1s"})
		if err == nil || !strings.HasPrefix(err.Error(), "pattern "+p.Name+": ") || strings.Contains(err.Error(), "trace") ||
			!strings.Contains(err.Error(), "raise the rate, keys or duration") {
			t.Errorf("%+v: %v, want the pattern named with what to raise", p, err)
		}
	}
}

// An algorithm that admitted nothing has no worst window to place: its
// WorstAt is 0 and WorstKey empty, not the trace's start before sluice's
// epoch (-54036h for a trace of 2026).
func TestNothingAdmittedHasNoWorstPlace(t *testing.T) {
	res := simulate(t, Request{Trace: "2026-03-01T12:00:00Z,a,5\n2026-03-01T12:00:01Z,a,5\n", Limit: "3/1s", Algorithms: []string{"fixed-window"}})
	if r := res.Algorithms[0]; r.Admitted != 0 || r.WorstWindow != 0 || r.WorstAt != 0 || r.WorstKey != "" {
		t.Errorf("admitted %d, worst %d for %q at %v; want nothing, at 0", r.Admitted, r.WorstWindow, r.WorstKey, r.WorstAt)
	}
}
