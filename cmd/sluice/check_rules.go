package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/httplimit"
)

// printRules prints the rules in order, one row per limit: what each
// matches, what it is keyed by and what it costs.
func printRules(w io.Writer, cfg *config.Config) {
	if len(cfg.Rules) == 0 {
		return
	}
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "RULE\tMATCH\tKEY\tLIMIT\tALGORITHM\tQUANTITY\tWINDOW\tBURST\tCOST")
	for _, r := range cfg.Rules {
		key := strings.Join(r.Key, "+")
		if key == "" {
			key = httplimit.KeyClient
		}
		if strings.Contains(key, httplimit.KeyHeader) && r.HeaderFrom != httplimit.HeaderFromAny {
			key += " (from trusted proxies)"
		}
		if r.Fallback != "" && r.Fallback != httplimit.FallbackIP {
			key += ", else " + r.Fallback
		}
		cost := "request's"
		if r.Cost != nil {
			cost = strconv.FormatInt(*r.Cost, 10)
		}
		for i, l := range r.Limits {
			name, match, k := r.Name, ruleMatch(r), key
			if i > 0 {
				name, match, k = "", "", ""
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s.%s\t%s\t%d\t%s\t%d\t%s\n", name, match, k, r.Name, l.Name(), l.Algorithm(),
				l.Quantity(), httplimit.WindowOf(l), l.Burst(), cost)
		}
	}
	tw.Flush()
	fmt.Fprintln(w)
}

// ruleMatch says what a rule matches: "POST /v1/reports on api.example.com
// with Content-Type=application/json for free,pro", each alternative of a
// rule's Any so and joined by "or", what its Except leaves out after them
// ("except OPTIONS or /health on b.example"), its plans last.
func ruleMatch(r httplimit.Rule) string {
	var alts, except []string
	for _, m := range r.Alternatives() {
		alts = append(alts, matchText(m, true))
	}
	for _, m := range r.Except {
		except = append(except, matchText(m, false))
	}
	s := strings.Join(alts, " or ")
	if len(except) > 0 {
		s += " except " + strings.Join(except, " or ")
	}
	if len(r.Plans) > 0 {
		s += " for " + strings.Join(r.Plans, ",")
	}
	return s
}

// matchText says what one alternative of a rule matches: "POST
// /v1/reports on api.example.com with Content-Type=application/json"; an
// entry of Except, without anyPath, says no "any path".
func matchText(m httplimit.Match, anyPath bool) string {
	var parts []string
	if len(m.Methods) > 0 {
		parts = append(parts, strings.Join(m.Methods, ","))
	}
	switch {
	case len(m.Paths) > 0:
		parts = append(parts, strings.Join(m.Paths, " "))
	case anyPath:
		parts = append(parts, "any path")
	}
	if len(m.ExceptPaths) > 0 {
		parts = append(parts, "except "+strings.Join(m.ExceptPaths, " "))
	}
	if len(m.Hosts) > 0 {
		parts = append(parts, "on "+strings.Join(m.Hosts, ","))
	}
	for i, h := range m.Headers {
		word := "and"
		if i == 0 {
			word = "with"
		}
		if h.Value == "" {
			parts = append(parts, word+" "+h.Name)
		} else {
			parts = append(parts, word+" "+h.Name+"="+h.Value)
		}
	}
	return strings.Join(parts, " ")
}

// printPenalty prints the PENALTY line when the configuration keeps a
// penalty box: the refusals that fill it and how long it holds a client.
func printPenalty(w io.Writer, cfg *config.Config) {
	p := cfg.Penalty
	if p.Refusals == 0 {
		return
	}
	fmt.Fprintf(w, "PENALTY  after %s within %s, every request of the client is refused for %s\n",
		count(int(p.Refusals), "refusal"), httplimit.FormatWindow(p.Within), httplimit.FormatWindow(p.For))
}
