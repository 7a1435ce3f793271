package sim

import (
	"context"
	"strings"
	"testing"
)

// The anonymous plan is "the default plan's limits ÷ 10": a client known
// only by its address never sends more at once than a paying client of the
// default plan. A stated burst below 10 divided to 0, which Design reads as
// "no burst requirement" (the whole quantity at once): the anonymous plan
// got a sliding log of 100, admitting 100 at once where the free plan's
// clients may send 5. A stated burst stays a bound, at least 1.
func TestTheAnonymousPlanKeepsTheBurstBound(t *testing.T) {
	req, err := ReadAPIRequirements(strings.NewReader(`name: Acme API
identity: {api_keys: true}
plans:
  - name: free
    clients: 100
    limits: [{rate: 1000/1m, burst: 5}]
`), "api.yaml")
	if err != nil {
		t.Fatal(err)
	}
	a, err := DesignAPI(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	atOnce := func(rec Recommendation) int64 {
		switch rec.Algorithm {
		case "gcra", "token-bucket", "leaky-bucket":
			if rec.Burst > 0 {
				return rec.Burst
			}
		}
		return rec.Quantity // a window algorithm admits its whole quantity at once
	}
	var free, anon int64 = -1, -1
	for _, p := range a.Plans {
		switch p.Name {
		case "free":
			free = atOnce(p.Limits[0].Rec())
		case a.AnonymousPlan:
			if p.Anonymous {
				anon = atOnce(p.Limits[0].Rec())
			}
		}
	}
	if free < 0 || anon < 0 {
		t.Fatalf("plans not found: %+v", a.Plans)
	}
	if anon > free {
		t.Errorf("an anonymous client may send %d at once, a free-plan client %d: the stated burst of 5 must stay a bound\n%s", anon, free, a.Config)
	}
}
