package sim

import (
	"fmt"
	"testing"
	"time"
)

// validateEndpoints asks whether the exempt routes take a route only for
// the endpoints with a limit, limits or cost, each question over what the
// exempt routes write, gathered once: validating four times the exempt
// and limited endpoints (500 and then 2,000 of either) takes about four
// times as long, far from the sixteen times of asking every endpoint over
// every exempt route again. Best of 3 of each, for a loaded machine.
func TestValidatingExemptAndLimitedEndpointsScalesLinearly(t *testing.T) {
	took := func(n int) time.Duration {
		var eps []APIEndpoint
		for i := range n {
			eps = append(eps, APIEndpoint{Route: fmt.Sprintf("GET /e%d/s%d/{id}", i, i), Exempt: true})
		}
		for i := range n {
			eps = append(eps, APIEndpoint{Route: fmt.Sprintf("GET /l%d/{id}/{b}/", i), Limit: "10/1m"})
		}
		r := APIRequirements{Plans: []APIPlan{{Name: "free"}}, Endpoints: eps}
		best := time.Duration(1<<63 - 1)
		for range 3 {
			start := time.Now()
			if err := r.validateEndpoints(); err != nil {
				t.Fatal(err)
			}
			best = min(best, time.Since(start))
		}
		return best
	}
	small, large := took(500), took(2000)
	t.Logf("500 of each: %v; 2,000: %v", small, large)
	if large > 8*small {
		t.Errorf("validating 2,000 exempt and 2,000 limited endpoints took %v, 500 of each %v: want far less than 16 times as long", large, small)
	}
}
