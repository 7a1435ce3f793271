package config_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/config"
)

// A degradation class of many patterns loads in a time that grows with
// their number: each pattern was checked against every one listed before
// it, a ServeMux built for each pair, so a class of 1,000 (22 KB) took 9 s
// of a core (sluice check, serve, every reload). A conflict is still
// refused naming the pattern listed before.
func TestManyDegradationPatternsLoadQuickly(t *testing.T) {
	var b strings.Builder
	b.WriteString("plans:\n  free: {limits: [{name: m, algorithm: gcra, quantity: 10, window: 1m}]}\n")
	b.WriteString("degradation:\n  classes:\n    expensive:\n")
	for i := range 1000 {
		fmt.Fprintf(&b, "      - \"POST /reports/r-%d/run\"\n", i)
	}
	b.WriteString("      - \"POST /reports/{id}/run\"\n      - \"/reports/r-7/{action}\"\n")
	start := time.Now()
	_, err := config.Parse("d.yaml", []byte(b.String()))
	took := time.Since(start)
	want := `d.yaml:1007:9: degradation.classes.expensive[1001]: "/reports/r-7/{action}" conflicts with "POST /reports/{id}/run", listed before it: a ServeMux cannot hold both`
	if err == nil || err.Error() != want {
		t.Errorf("error:\n%v\nwant exactly:\n%s", err, want)
	}
	// Under the race detector on a loaded 2-core machine this Parse takes
	// up to about 1.5s; a ServeMux for each pair took 9s of a core without
	// it.
	if took > 6*time.Second {
		t.Errorf("Parse took %v, want under 6s", took)
	}
}
