package config_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/config"
)

// Whether an exempt route takes every request of a cost first is judged
// without a ServeMux for each cost of each plan and each route: 20 plans
// of 200 costs beside 200 exempt routes (160 KB) took 15 s of a core to
// load (sluice check, serve and every reload).
func TestCostsBesideManyExemptRoutesLoadQuickly(t *testing.T) {
	var b strings.Builder
	b.WriteString("exempt:\n  - \"health.example.com/\"\n")
	for i := range 200 {
		fmt.Fprintf(&b, "  - \"GET /internal/probe-%d\"\n", i)
	}
	b.WriteString("plans:\n")
	for p := range 20 {
		fmt.Fprintf(&b, "  plan-%d:\n    limits: [{name: m, algorithm: gcra, quantity: 100, window: 1s}]\n    costs:\n", p)
		b.WriteString("      \"GET health.example.com/v1/health\": 1\n")
		for i := range 200 {
			fmt.Fprintf(&b, "      \"GET /internal/probe-%d/items\": 2\n", i)
		}
	}
	start := time.Now()
	_, err := config.Parse("t.yaml", []byte(b.String()))
	took := time.Since(start)
	if got := len(config.Errors(err)); got != 20 {
		t.Fatalf("%d errors, want the cost exempt by exempt[0] refused in each of 20 plans: %v", got, err)
	}
	for _, e := range config.Errors(err) {
		if !strings.Contains(e.Msg, `"GET health.example.com/v1/health" never applies: every request it matches is exempt (exempt[0] "health.example.com/", line 2)`) {
			t.Errorf("unexpected error %v", e)
		}
	}
	// Under the race detector on a loaded 2-core machine this Parse takes
	// up to about 3.5s; the ServeMux for each cost, plan and route took
	// 15s of a core without it.
	if took > 10*time.Second {
		t.Errorf("Parse took %v, want under 10s", took)
	}
}
