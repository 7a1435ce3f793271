package main

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/httplimit"
)

// printSlots lists the concurrency limits and says where their slots are
// given back when a request ends: only where sluice or the program sees
// the end; forward-auth and the decision API hold each slot for its lease.
func printSlots(w io.Writer, cfg *config.Config) {
	lines := limitLines(cfg, func(where string, l sluice.Limit) string {
		if l.Algorithm() != sluice.AlgorithmConcurrency {
			return ""
		}
		return fmt.Sprintf("  %s (%s): %d at once, a slot never given back freed after %s",
			l.Name(), where, l.Quantity(), httplimit.FormatWindow(l.Window()))
	})
	if len(lines) == 0 {
		return
	}
	fmt.Fprintf(w, "Requests in progress (concurrency):\n%s\n", strings.Join(lines, "\n"))
	fmt.Fprintln(w, "Only the reverse proxy (upstream:) and programs that end their requests (httplimit, grpclimit) "+
		"give a slot back when the request ends: forward-auth and the decision API never see the end, and hold "+
		"each slot they admit until its lease ends.")
	fmt.Fprintln(w)
}

// limitLines returns the lines line writes of the configuration's limits
// (the plans', the global ones, the rules' and the API keys' own plans'),
// each told where it is; sorted, without repeats or empty lines.
func limitLines(cfg *config.Config, line func(where string, l sluice.Limit) string) []string {
	var lines []string
	add := func(where string, ls []sluice.Limit) {
		for _, l := range ls {
			if s := line(where, l); s != "" {
				lines = append(lines, s)
			}
		}
	}
	for _, p := range cfg.Policy.Plans {
		add("plan "+p.Name, p.Limits)
	}
	add("global", cfg.Policy.Global)
	for _, r := range cfg.Rules {
		add("rule "+r.Name, r.Limits)
	}
	for _, k := range cfg.Keys {
		if k.Plan != nil && cfg.Policy.Plan(k.Plan.Name) != k.Plan {
			where := "key " + k.Name
			if k.Name == "" {
				where = "a key's own"
			}
			add(where, k.Plan.Limits)
		}
	}
	slices.Sort(lines)
	return slices.Compact(lines)
}
