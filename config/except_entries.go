package config

import (
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/sluice-dev/sluice/httplimit"
)

// exceptMeets refuses each except entry of a rule that can match none of
// the rule's requests, as far as that is decided cheaply: for every
// alternative, the entry's hosts meet none of the alternative's, its
// methods none of the alternative's, or its paths overlap none of the
// alternative's (routes.PathsOverlap). Headers are not weighed, nor the
// alternatives' except_paths: such an entry is left alone.
func (d *decoder) exceptMeets(c *Config, raw *rawConfig) {
	for i, r := range c.Rules {
		for k, e := range r.Except {
			loc, ok := raw.locs[fmt.Sprintf("Rules[%d].Except[%d]", i, k)]
			if !ok || !validPaths(e.Paths) {
				continue
			}
			var why string
			for _, m := range r.Alternatives() {
				if !validPaths(m.Paths) {
					why = ""
					break
				}
				w := exceptMisses(e, m)
				if w == "" {
					why = ""
					break
				}
				if why == "" {
					why = w
				} else if why != w {
					why = "no alternative of the rule matches what it matches"
				}
			}
			if why != "" {
				d.Errorf(loc.node, loc.path, "leaves out nothing: %s", why)
			}
		}
	}
}

// exceptMisses says why the except entry e matches none of the requests
// of m, a rule's alternative, or returns "" when it may match some.
func exceptMisses(e, m httplimit.Match) string {
	switch {
	case !hostsMeet(e.Hosts, m.Hosts):
		return fmt.Sprintf("none of its hosts (%s) is one of the rule's (%s)", strings.Join(e.Hosts, ", "), strings.Join(m.Hosts, ", "))
	case len(e.Methods) > 0 && len(m.Methods) > 0 && !slices.ContainsFunc(e.Methods, func(em string) bool {
		return slices.ContainsFunc(m.Methods, func(am string) bool {
			return strings.EqualFold(am, em) || am == http.MethodGet && em == http.MethodHead
		})
	}):
		return fmt.Sprintf("none of its methods (%s) is one of the rule's (%s)", strings.Join(e.Methods, ", "), strings.Join(m.Methods, ", "))
	case len(e.Paths) > 0 && len(m.Paths) > 0 && !slices.ContainsFunc(e.Paths, func(ep string) bool { return anyOverlaps(m.Paths, ep) }):
		return fmt.Sprintf("none of the rule's paths (%s) matches a path its own (%s) match", strings.Join(m.Paths, ", "), strings.Join(e.Paths, ", "))
	}
	return ""
}

// hostsMeet reports whether some host name may match both a and b, lists
// of a rule's hosts ("api.example.com", "*.example.com"; empty: any).
func hostsMeet(a, b []string) bool {
	if len(a) == 0 || len(b) == 0 {
		return true
	}
	norm := func(h string) string { return strings.TrimSuffix(strings.ToLower(h), ".") }
	for _, x := range a {
		for _, y := range b {
			x, y := norm(x), norm(y)
			xs, xw := strings.CutPrefix(x, "*.")
			ys, yw := strings.CutPrefix(y, "*.")
			switch {
			case x == y,
				xw && strings.HasSuffix(y, "."+xs),
				yw && strings.HasSuffix(x, "."+ys),
				xw && yw && (xs == ys || strings.HasSuffix(xs, "."+ys) || strings.HasSuffix(ys, "."+xs)):
				return true
			}
		}
	}
	return false
}
