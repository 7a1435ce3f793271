package sim

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/config"
)

// windowBound is the most one limit admits for one key in any span
// (t-W, t], from the algorithms' documented promises: a sliding log or a
// fixed window's quantity per aligned window, a bucket's burst plus what
// refills in less than W (bucketWorst).
func windowBound(l sluice.Limit) int64 {
	switch l.Algorithm() {
	case sluice.AlgorithmGCRA, sluice.AlgorithmTokenBucket, sluice.AlgorithmLeakyBucket:
		return bucketWorst(l.Quantity(), l.Burst())
	}
	return l.Quantity()
}

// With a memory store on several instances, each instance keeps its own
// count: their shares together must stay within the stated quantity for
// strict and approximate precision, or the design must be refused.
func TestDesignDividesTheQuotaWithoutExceedingIt(t *testing.T) {
	for _, tc := range []struct {
		name    string
		req     Requirements
		refused bool
	}{
		{"more instances than the quantity is refused",
			Requirements{Rate: "10/1m", Instances: 50, Store: "memory"}, true},
		{"one a day on three instances is refused",
			Requirements{Rate: "1/1d", Instances: 3, Store: "memory", Precision: "strict"}, true},
		{"a bucket's burst of 1 on ten instances keeps the total within the quantity",
			Requirements{Rate: "105/1m", Burst: 1, Precision: "strict", Instances: 10, Store: "memory"}, false},
		{"a split bucket on three instances keeps the total within the quantity",
			Requirements{Rate: "10/1m", Burst: 2, Precision: "strict", Instances: 3, Store: "memory"}, false},
		{"an even division stands",
			Requirements{Rate: "1000/24h", Instances: 4, Store: "memory"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.req.MaxArrivals = testBudget
			a, err := Design(context.Background(), tc.req)
			if tc.refused {
				if err == nil {
					t.Fatalf("designed %+v\n%s", a.Recommendation, a.Config)
				}
				if !strings.Contains(err.Error(), "store: redis") {
					t.Errorf("the error does not name the store that holds it: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			cfg, err := config.Parse("design.yaml", []byte(a.Config))
			if err != nil {
				t.Fatalf("config.Parse: %v\n%s", err, a.Config)
			}
			q, _, _ := ParseRate(tc.req.Rate)
			l := cfg.Policy.Plan("default").Limits[0]
			if total := int64(tc.req.Instances) * windowBound(l); total > q {
				t.Errorf("%d instances of %v admit up to %d in a window, above %d", tc.req.Instances, l, total, q)
			}
		})
	}
}

// A whole API on several instances with memory stores either gets a
// configuration the loader accepts (every limit's share still holds the
// costliest request) or is refused.
func TestDesignAPIPerInstanceSharesHoldTheCostliestRequest(t *testing.T) {
	req, err := ReadAPIRequirements(strings.NewReader(`
instances: 3
store: memory
plans:
  - name: free
    limits: [{rate: 20/1s, burst: 10}, {rate: 25/1m}]
endpoints:
  - {route: "POST /api/generate", cost: 10}
`), "api.yaml")
	if err != nil {
		t.Fatal(err)
	}
	req.MaxArrivals = testArrivals
	a, err := DesignAPI(context.Background(), req)
	if err == nil {
		if _, err := config.Parse("api.yaml", []byte(a.Config)); err != nil {
			t.Fatalf("the written configuration does not load: %v\n%s", err, a.Config)
		}
		return
	}
	if !strings.Contains(err.Error(), "store: redis") {
		t.Errorf("refused without naming the store that holds it: %v", err)
	}
}

// replayCommand is the `sluice simulate -trace …` command an analysis's
// next steps suggest.
func replayCommand(t *testing.T, markdown string) string {
	t.Helper()
	i := strings.Index(markdown, "`sluice simulate -trace")
	if i < 0 {
		t.Fatalf("no replay command in:\n%s", markdown)
	}
	cmd, _, _ := strings.Cut(markdown[i+1:], "`")
	return cmd
}

// Instances with their own memory stores divide one limit between them:
// the analysis simulates, and tells the user to replay, that undivided
// limit — the very one a Redis store shared by the same instances is given.
func TestDesignPerInstanceReplaysTheSharedLimit(t *testing.T) {
	for _, req := range []Requirements{
		{Rate: "100/1m", Burst: 20, Precision: "strict", Instances: 3},
		{Rate: "100/1m", Precision: "strict", Keys: 1e8, Instances: 3},
		{Rate: "10/1s", Burst: 3, Precision: "loose", Instances: 3},
		{Rate: "1000/24h", Instances: 4},
	} {
		mem, shared := req, req
		mem.Store, shared.Store = "memory", "redis"
		m, s := design(t, mem), design(t, shared)
		if !m.Recommendation.PerInstance {
			t.Fatalf("%+v: not divided between instances", mem)
		}
		if got, want := replayCommand(t, m.Markdown), replayCommand(t, s.Markdown); got != want {
			t.Errorf("%+v: replay\n  %s\nwant the shared limit's\n  %s", mem, got, want)
		}
		if m.Recommendation.Label != s.Recommendation.Label {
			t.Errorf("%+v: simulated %q, want the shared limit %q", mem, m.Recommendation.Label, s.Recommendation.Label)
		}
	}
}

// Instances with their own memory stores each hold a bucket of at least
// one request: when their buckets together take more at once than the
// stated burst, the analysis says how many, and which store keeps the
// burst.
func TestDesignPerInstanceBurstsAboveTheStatedOneAreStated(t *testing.T) {
	for _, req := range []Requirements{
		{Rate: "10/1m", Burst: 2, Precision: "strict", Instances: 3, Store: "memory"},
		{Rate: "105/1m", Burst: 1, Precision: "strict", Instances: 10, Store: "memory"},
		{Rate: "100/1s", Burst: 2, Precision: "loose", Instances: 4, Store: "memory"},
	} {
		a := design(t, req)
		cfg, err := config.Parse("design.yaml", []byte(a.Config))
		if err != nil {
			t.Fatalf("%+v: config.Parse: %v\n%s", req, err, a.Config)
		}
		l := cfg.Policy.Plan("default").Limits[0]
		total := int64(req.Instances) * l.Burst()
		if total <= req.Burst {
			t.Fatalf("%+v: %d instances of %v take %d at once: pick a case above the stated burst", req, req.Instances, l, total)
		}
		if want := fmt.Sprintf("may send %d at once, above the stated burst of %d", total, req.Burst); !strings.Contains(a.Markdown, want) || !strings.Contains(a.Markdown, "store: redis") {
			t.Errorf("%+v: %d instances of %v take %d at once; the analysis does not say %q:\n%s", req, req.Instances, l, total, want, a.Markdown)
		}
	}
	a := designAPI(t, `
instances: 3
store: memory
plans:
  - name: basic
    limits: [{rate: 30/1s, burst: 6}]
endpoints:
  - {route: "POST /y", cost: 3}
`)
	cfg, err := config.Parse("api.yaml", []byte(a.Config))
	if err != nil {
		t.Fatalf("config.Parse: %v\n%s", err, a.Config)
	}
	total := 3 * cfg.Policy.Plan("basic").Limits[0].Burst()
	if want := fmt.Sprintf("may send %d at once, above the stated burst of 6", total); total <= 6 || !strings.Contains(strings.Join(a.Warnings, "\n"), want) {
		t.Errorf("3 instances take %d at once; the warnings do not say %q: %q", total, want, a.Warnings)
	}
}

// The analysis states each instance's share against the stated quantity:
// for a split bucket, its burst and its refill together.
func TestDesignPerInstanceShareIsOfTheStatedQuota(t *testing.T) {
	share := regexp.MustCompile(`configured with 1/(\d+) of the quota \((\d+) of (\d+)\)`)
	for _, req := range []Requirements{
		{Rate: "10/1m", Burst: 2, Precision: "strict", Instances: 3, Store: "memory"},
		{Rate: "100/1m", Precision: "approximate", Keys: 1e8, Instances: 3, Store: "memory"},
		{Rate: "1000/24h", Instances: 4, Store: "memory"},
	} {
		a := design(t, req)
		cfg, err := config.Parse("design.yaml", []byte(a.Config))
		if err != nil {
			t.Fatalf("%+v: config.Parse: %v\n%s", req, err, a.Config)
		}
		l := cfg.Policy.Plan("default").Limits[0]
		q, _, _ := ParseRate(req.Rate)
		want := fmt.Sprintf("configured with 1/%d of the quota (%d of %d)", req.Instances, windowBound(l), q)
		if m := share.FindString(a.Markdown); m != want {
			t.Errorf("%+v: each instance holds %v; the analysis says %q, want %q", req, l, m, want)
		}
	}
}
