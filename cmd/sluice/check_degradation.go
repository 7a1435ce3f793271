package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/httplimit"
)

// printDegradation prints the DEGRADATION line when the configuration has
// a degradation section: what each level sheds, the endpoint classes it
// spares, and the Retry-After of its 503s.
func printDegradation(w io.Writer, cfg *config.Config) {
	g := cfg.Degradation
	if !g.Enabled {
		return
	}
	level1 := fmt.Sprintf("level 1: every quantity and burst of a window up to %s × %g (no burst below its plan's costliest request; longer quotas whole)",
		httplimit.FormatWindow(g.FactorMaxWindow), g.Factor)
	if len(g.Expensive) > 0 {
		level1 += ", 503 to " + strings.Join(g.Expensive, ", ")
	}
	level2 := "level 2: writes refused"
	if len(g.Critical) > 0 {
		level2 += " but " + strings.Join(g.Critical, ", ")
	}
	if cfg.Upstream != "" && g.StaleFor > 0 {
		level2 += ", GET answers served from copies up to " + httplimit.FormatWindow(g.StaleFor) + " old"
	}
	level3 := "level 3: every request refused"
	if len(g.Health) > 0 {
		level3 = "level 3: only " + strings.Join(g.Health, ", ") + " served"
	}
	retry := max(g.RetryAfter.Round(time.Second), time.Second)
	fmt.Fprintf(w, "DEGRADATION  %s; %s; %s; 503s with Retry-After %s\n", level1, level2, level3, httplimit.FormatWindow(retry))
}
