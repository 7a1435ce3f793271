package server_test

import (
	"context"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/failover"
	"github.com/sluice-dev/sluice/memory"
	"github.com/sluice-dev/sluice/server"
)

// lateStore is a primary that answers every call, correctly, after delay:
// a Redis under load (or across a region) that answers well within
// store.redis.timeout.
type lateStore struct {
	next  sluice.Store
	delay time.Duration
}

func (s lateStore) Apply(ctx context.Context, checks []sluice.Check, out []sluice.Status) error {
	t := time.NewTimer(s.delay)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
		return ctx.Err()
	}
	return s.next.Apply(ctx, checks, out)
}

// histogramQuantile is Prometheus's histogram_quantile over one histogram:
// the bucket the rank falls in, interpolated linearly; in the +Inf bucket,
// the upper bound of the highest finite bucket.
func histogramQuantile(q float64, bounds []float64, cumulative []uint64, count uint64) float64 {
	rank := q * float64(count)
	lower, below := 0.0, uint64(0)
	for i, ub := range bounds {
		if float64(cumulative[i]) >= rank {
			return lower + (ub-lower)*(rank-float64(below))/float64(cumulative[i]-below)
		}
		lower, below = ub, cumulative[i]
	}
	return bounds[len(bounds)-1]
}

// failoverServer is a server on cfgYAML (its upstream answering 200)
// whose store is a failover of primary over a memory store, with its
// metrics in the registry it returns.
func failoverServer(t *testing.T, cfgYAML string, primary sluice.Store, opts failover.Options) (*server.Server, *failover.Store, *prometheus.Registry) {
	t.Helper()
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	t.Cleanup(upstream.Close)
	cfg, err := config.Parse("t.yaml", []byte("upstream: "+upstream.URL+"\n"+cfgYAML))
	if err != nil {
		t.Fatal(err)
	}
	local := memory.New(memory.WithSweepInterval(0))
	t.Cleanup(func() { local.Close() })
	f, err := failover.New(primary, local, opts)
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	srv, err := server.New(server.Options{Config: cfg, Store: f, Failover: f, Registry: reg,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv, f, reg
}

// totals gathers reg: each counter's value summed over its labels, and
// each histogram's count as name_count.
func totals(t *testing.T, reg *prometheus.Registry) map[string]float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			switch {
			case m.GetCounter() != nil:
				got[mf.GetName()] += m.GetCounter().GetValue()
			case m.GetHistogram() != nil:
				got[mf.GetName()+"_count"] += float64(m.GetHistogram().GetSampleCount())
			}
		}
	}
	return got
}

// sluice_decision_seconds's buckets reach 5 s, past the decisions a
// store's timeout lets wait: decisions of 200 ms (a Redis answering late,
// within a 1 s timeout) read in histogram_quantile — the recorded
// job:sluice_decision_seconds:p99_rate5m and p50, the dashboard's Decision
// latency panel, SluiceDecisionLatencyHigh's summary — within the bucket
// that holds 200 ms, not as the highest bound below it. No request of a primary that answers is counted
// as decided by on_store_error.
func TestDecisionLatencyAbove50msIsReportedAsIs(t *testing.T) {
	const took = 200 * time.Millisecond
	mem := memory.New(memory.WithSweepInterval(0))
	defer mem.Close()
	srv, f, reg := failoverServer(t,
		"plans:\n  free: {limits: [{name: m, algorithm: gcra, quantity: 1000, window: 1m}]}\ndefault_plan: free\n",
		lateStore{next: mem, delay: took}, failover.Options{Timeout: time.Second, Instances: 1})
	h := srv.PublicHandler()
	for i := range 5 {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/x", nil))
		if rec.Code != http.StatusOK {
			t.Fatalf("request %d: %d %s", i, rec.Code, rec.Body)
		}
	}
	if st := f.Stats(); st.StoreErrors != 0 || st.FallbackDecisions != 0 {
		t.Fatalf("the primary failed: %+v", st)
	}
	if n := totals(t, reg)["sluice_fallback_requests_total"]; n != 0 {
		t.Errorf("sluice_fallback_requests_total = %v, with every request decided by the primary", n)
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "sluice_decision_seconds" {
			continue
		}
		h := mf.GetMetric()[0].GetHistogram()
		var bounds []float64
		var cum []uint64
		for _, b := range h.GetBucket() {
			if math.IsInf(b.GetUpperBound(), 1) {
				continue
			}
			bounds, cum = append(bounds, b.GetUpperBound()), append(cum, b.GetCumulativeCount())
		}
		if h.GetSampleCount() != 5 || h.GetSampleSum() < 5*took.Seconds() {
			t.Fatalf("the histogram holds %d decisions of %.3f s in all; want 5 of at least %v each", h.GetSampleCount(), h.GetSampleSum(), took)
		}
		if last := bounds[len(bounds)-1]; last < 5 {
			t.Errorf("the highest finite bucket is %g s: any slower decision reads as %g s", last, last)
		}
		// A quantile is exact to its buckets: it must fall above the
		// bucket below the decisions' least time and within the bucket
		// that holds them all (a busy machine adds to the store's
		// delay, so the slowest may reach a bucket above it).
		i := slices.IndexFunc(bounds, func(ub float64) bool { return ub >= took.Seconds() })
		all := slices.IndexFunc(cum, func(n uint64) bool { return n == h.GetSampleCount() })
		if i < 0 || all < 0 {
			t.Fatalf("no finite bucket holds the decisions of %v or more (the highest is %g s): histogram_quantile reads them as %g s", took, bounds[len(bounds)-1], bounds[len(bounds)-1])
		}
		lower, upper := 0.0, bounds[all]
		if i > 0 {
			lower = bounds[i-1]
		}
		for _, q := range []float64{0.5, 0.99} {
			if v := histogramQuantile(q, bounds, cum, h.GetSampleCount()); v <= lower || v > upper {
				t.Errorf("every decision took %v or more, all within %g s, but histogram_quantile(%g) over sluice_decision_seconds reads %.3f s, outside (%g s, %g s]",
					took, upper, q, v, lower, upper)
			}
		}
		return
	}
	t.Fatal("no sluice_decision_seconds")
}

// sluice_fallback_requests_total counts requests, as
// sluice_decision_seconds_count does, so that job:sluice_fallback_ratio:rate5m
// (the one over the other) is a share of requests, at most 1: with Redis
// down, every one of 10 requests decided by on_store_error local counts
// once, though a penalty box's refusal makes a second store call (its
// count of the refusal) and a status_path GET (a peek, no request of
// sluice_decision_seconds_count) makes calls of its own — all of them
// fallback calls, which sluice_fallback_decisions_total counts.
func TestFallbackShareCountsRequestsNotStoreCalls(t *testing.T) {
	for _, tc := range []struct{ name, extra, peek string }{
		{"a penalty box's count of a refusal, a second fallback call, is no second request", "penalty: {refusals: 20, within: 1m, for: 10m}\n", ""},
		{"a status_path peek, a fallback call, is no request", "response: {status_path: /rate_limit}\n", "/rate_limit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, _, reg := failoverServer(t,
				"plans:\n  free: {limits: [{name: m, algorithm: fixed-window, quantity: 2, window: 1m}]}\ndefault_plan: free\n"+tc.extra,
				unreachableStore{}, failover.Options{Instances: 1}) // Redis down
			h := srv.PublicHandler()
			codes := map[int]int{}
			for range 10 {
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/x", nil))
				codes[rec.Code]++
				if tc.peek != "" {
					rec := httptest.NewRecorder()
					h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, tc.peek, nil))
					if rec.Code != http.StatusOK {
						t.Fatalf("GET %s: %d %s", tc.peek, rec.Code, rec.Body)
					}
				}
			}
			got := totals(t, reg)
			requests, fellBack, calls := got["sluice_decision_seconds_count"], got["sluice_fallback_requests_total"], got["sluice_fallback_decisions_total"]
			if requests != 10 {
				t.Fatalf("sluice_decision_seconds_count = %v after 10 requests (answers %v)", requests, codes)
			}
			if calls <= requests {
				t.Fatalf("sluice_fallback_decisions_total = %v: want more fallback calls than the %v requests", calls, requests)
			}
			if fellBack != requests {
				t.Errorf("10 requests (answers %v), each decided by on_store_error local in %v fallback calls: sluice_fallback_requests_total = %v, "+
					"so job:sluice_fallback_ratio:rate5m reads %.0f%% of requests decided without the store, want 100%%",
					codes, calls, fellBack, 100*fellBack/requests)
			}
		})
	}
}

// A status_path GET is a peek: it decides no request. Under
// on_store_error: deny with the store down it is answered 503, as every
// request is refused by deny, yet it is no request left undecided (the
// policy held: SluiceUndecided, critical, must not fire) nor a decision
// in sluice_decision_seconds_count.
func TestStatusReadsUnderDenyAreNoUndecidedRequests(t *testing.T) {
	srv, _, reg := failoverServer(t,
		"plans:\n  free: {limits: [{name: m, algorithm: fixed-window, quantity: 2, window: 1m}]}\ndefault_plan: free\n"+
			"response: {status_path: /rate_limit}\n",
		unreachableStore{}, failover.Options{Instances: 1, OnError: failover.Deny}) // Redis down, deny
	h := srv.PublicHandler()
	for range 5 {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/rate_limit", nil))
		if rec.Code != http.StatusServiceUnavailable {
			t.Fatalf("GET /rate_limit with the store down under deny: %d, want 503", rec.Code)
		}
	}
	got := totals(t, reg)
	if n := got["sluice_undecided_total"]; n != 0 {
		t.Errorf("5 status_path reads under deny: sluice_undecided_total = %v, want 0", n)
	}
	if n := got["sluice_decision_seconds_count"]; n != 0 {
		t.Errorf("5 status_path reads (peeks): sluice_decision_seconds_count = %v, want 0", n)
	}
}

// A decision API check of cost 0 peeks, as a status_path GET does: it
// spends nothing and no limit refuses it (docs/api.md), so it is no
// admission. Peeks at a client out of quota leave
// sluice_decisions_total{result="allowed"} and sluice_near_limit_total
// as they were: a caller that peeks before acting neither halves the
// refusal ratio SluiceHighRefusalRatio reads nor makes near-limit
// admissions.
func TestDecisionAPIPeeksAreNoAdmissions(t *testing.T) {
	f := newFixture(t, `
plans:
  free: {limits: [{name: per-minute, algorithm: fixed-window, quantity: 2, window: 1m}]}
default_plan: free
anonymous_plan: free
`+testAdmin)
	for i, want := range []string{`"allowed":true`, `"allowed":true`, `"allowed":false`} {
		if _, _, raw := postCheck(t, f, `{"subject":"acme"}`); !strings.Contains(raw, want) {
			t.Fatalf("check %d: %s, want %s", i+1, raw, want)
		}
	}
	before := scrape(t, f.admin.URL)
	for range 5 {
		if st, _, raw := postCheck(t, f, `{"subject":"acme","cost":0}`); st != 200 {
			t.Fatalf("a peek: %d %s", st, raw)
		}
	}
	after := scrape(t, f.admin.URL)
	allowed := `sluice_decisions_total{limit="per-minute",policy="free",result="allowed"}`
	for _, name := range []string{allowed, "sluice_near_limit_total", "sluice_decision_seconds_count"} {
		if d := after[name] - before[name]; d != 0 {
			t.Errorf("5 peeks (cost 0) at a client out of quota: %s rose by %v, want 0", name, d)
		}
	}
}
