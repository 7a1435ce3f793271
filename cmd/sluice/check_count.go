package main

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/httplimit"
)

// printCounts lists the limits that count requests by their answer
// (count:), and where that holds: only where sluice or the program sees the
// answer.
func printCounts(w io.Writer, cfg *config.Config) {
	var lines []string
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for name := range cfg.Count {
			if !yield(name) {
				return
			}
		}
	}) {
		switch c := cfg.Count[name]; {
		case strings.HasPrefix(c, httplimit.CountStatus):
			lines = append(lines, fmt.Sprintf("  %s counts only answers of status %s", name, c[len(httplimit.CountStatus):]))
		case strings.HasPrefix(c, httplimit.CountHeader):
			lines = append(lines, fmt.Sprintf("  %s counts what the answer's %s reports, at most the request's cost", name, c[len(httplimit.CountHeader):]))
		case c != httplimit.CountAll:
			lines = append(lines, fmt.Sprintf("  %s counts only %s", name, c))
		}
	}
	if len(lines) == 0 {
		return
	}
	fmt.Fprintf(w, "Counted by the answer (count:):\n%s\n", strings.Join(lines, "\n"))
	fmt.Fprintln(w, "Only the reverse proxy (upstream:), programs that report the answer (httplimit, grpclimit) and callers of "+
		"the decision API that settle (POST /v1/settle) see it: forward-auth and Envoy count every request they admit "+
		"against these limits, at its full cost.")
	fmt.Fprintln(w)
}
