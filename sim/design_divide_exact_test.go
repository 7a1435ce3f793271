package sim

import (
	"context"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/config"
)

// A memory store's share of a bucket is its quantity and burst divided
// between the instances; a share whose rate cannot be kept exact in integer
// time (16666 per 30d: burst × W/gcd(W, Q) beyond 2^53 ticks) is lowered
// to one that can, so that the configuration Design calls ready loads.
func TestDesignDividedShareLoads(t *testing.T) {
	for _, req := range []Requirements{
		{Rate: "100000/30d", Precision: "strict", Instances: 3, Store: "memory", MaxArrivals: 3000},
		{Rate: "100000/365d", Precision: "strict", Instances: 3, Store: "memory", MaxArrivals: 3000},
	} {
		a, err := Design(context.Background(), req)
		if err != nil {
			t.Errorf("Design(%s, strict, 3 instances, memory): %v", req.Rate, err)
			continue
		}
		if _, err := config.Parse("design.yaml", []byte(a.Config)); err != nil {
			t.Errorf("Design(%s, strict, 3 instances, memory) wrote a configuration that does not load: %v\n%s", req.Rate, err, a.Config)
		}
		rec := a.Recommendation
		if bucketWorst(rec.Quantity, rec.Burst) > 100000/3 {
			t.Errorf("Design(%s): a share of %d + burst %d admits more than a third of 100000 in a window", req.Rate, rec.Quantity, rec.Burst)
		}
	}
}

// The same division, reached through a whole API's design.
func TestDesignAPIDividedShareLoads(t *testing.T) {
	y := `name: X
instances: 3
store: memory
plans:
  - name: free
    clients: 100
    limits: [{rate: 100000/30d, precision: strict}]
`
	req, err := ReadAPIRequirements(strings.NewReader(y), "api.yaml")
	if err != nil {
		t.Fatal(err)
	}
	req.MaxArrivals = 3000
	a, err := DesignAPI(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := config.Parse("api.yaml", []byte(a.Config)); err != nil {
		t.Errorf("DesignAPI wrote a configuration that does not load: %v", err)
	}
}
