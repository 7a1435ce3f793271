package sim

import (
	"fmt"
	"testing"
	"time"
)

// Validating costs on routes that are distinct to ServeMux and clash only
// in lower case ("POST /R7/{x}/b" beside "POST /r7/b/{y}": neither is more
// specific than the other as "/r7/{x}/b" and "/r7/b/{y}") takes about as
// long as validating as many routes that do not clash ("POST /R7/c/{x}"):
// linear in the routes, within the designer's 5,000. The test judges the
// time against that control, 1,000 pairs of each, best of 3, so that a
// loaded machine slows both alike: a clash costs ServeMux's refusal, some
// twice the control's time in all, while a lower-case table built anew at
// each clash takes a hundred times as long and more.
func TestValidatingCostsClashingInLowerCaseTakesAboutAsLongAsWithoutClashes(t *testing.T) {
	took := func(n int, first string) time.Duration {
		var eps []APIEndpoint
		one := int64(2)
		for i := range n {
			eps = append(eps, APIEndpoint{Route: fmt.Sprintf(first, i), Cost: &one},
				APIEndpoint{Route: fmt.Sprintf("POST /r%d/b/{y}", i), Cost: &one})
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
	calm, clashing := took(1000, "POST /R%d/c/{x}"), took(1000, "POST /R%d/{x}/b")
	t.Logf("1,000 pairs of costs without clashes: %v; clashing in lower case: %v", calm, clashing)
	if clashing > 10*calm {
		t.Errorf("validating 1,000 pairs of costs clashing in lower case took %v, without clashes %v: want about as long", clashing, calm)
	}
}
