package migrate_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/migrate"
)

// Usage plans whose method throttles, all plans together, are more than
// MaxPlaces are refused saying the bound before any is translated: each is
// a rule, and one plan of 40,000 took the import 13 s of a core before
// Files refused it.
func TestAPIGatewayImportBoundsTheMethodThrottles(t *testing.T) {
	file := func(plans, throttles int) string {
		var b strings.Builder
		b.WriteString(`{"items": [`)
		for p := range plans {
			if p > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, `{"id": "p%d", "name": "plan%d", "throttle": {"rateLimit": 100, "burstLimit": 200}, "apiStages": [{"apiId": "a1", "stage": "prod", "throttle": {`, p, p)
			for i := range throttles {
				if i > 0 {
					b.WriteString(",")
				}
				fmt.Fprintf(&b, `"/r%d/GET": {"rateLimit": 10, "burstLimit": 20}`, i)
			}
			b.WriteString("}}]}")
		}
		b.WriteString("]}")
		return b.String()
	}
	for _, c := range []struct{ plans, throttles int }{{1, migrate.MaxPlaces + 1}, {2, migrate.MaxPlaces/2 + 1}} {
		start := time.Now()
		_, err := migrate.Import("aws-apigateway", file(c.plans, c.throttles), "plans.json")
		if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("more than the %d", migrate.MaxPlaces)) {
			t.Errorf("%d plans of %d method throttles: %v, want refused saying the bound", c.plans, c.throttles, err)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("%d plans of %d method throttles: refusing took %v", c.plans, c.throttles, d)
		}
	}
	if _, err := migrate.Import("aws-apigateway", file(2, 10), "plans.json"); err != nil {
		t.Errorf("2 plans of 10 method throttles: %v", err)
	}
}
