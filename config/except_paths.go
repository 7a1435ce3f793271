package config

import (
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/internal/routes"
)

// exceptPathsOverlap refuses each except_paths pattern of a rule's
// alternative that none of the alternative's paths can match
// (routes.PathsOverlap): it leaves nothing out; and each except entry
// that leaves nothing out (see exceptMeets).
func (d *decoder) exceptPathsOverlap(c *Config, raw *rawConfig) {
	defer d.exceptMeets(c, raw)
	for i, r := range c.Rules {
		for k, m := range r.Alternatives() {
			if len(m.Paths) == 0 || !validPaths(m.Paths) {
				continue
			}
			for j, e := range m.ExceptPaths {
				loc, ok := raw.locs[fmt.Sprintf("%s.ExceptPaths[%d]", alternativeField(i, r, k), j)]
				if !ok || !validPaths([]string{e}) || anyOverlaps(m.Paths, e) {
					continue
				}
				whose := "rule's"
				if len(r.Any) > 0 {
					whose = "alternative's"
				}
				d.Errorf(loc.node, loc.path, "%q leaves out nothing: none of the %s paths (%s) matches a path it matches",
					e, whose, strings.Join(m.Paths, ", "))
			}
		}
	}
}

// alternativeField returns the field path of the k-th alternative of r,
// the i-th rule: "Rules[i].Any[k]", or "Rules[i]" for a rule without Any.
func alternativeField(i int, r httplimit.Rule, k int) string {
	if len(r.Any) > 0 {
		return fmt.Sprintf("Rules[%d].Any[%d]", i, k)
	}
	return fmt.Sprintf("Rules[%d]", i)
}

// validPaths reports whether ServeMux takes each of paths as a pattern.
func validPaths(paths []string) bool {
	for _, p := range paths {
		if !strings.HasPrefix(p, "/") || !handles(http.NewServeMux(), p) {
			return false
		}
	}
	return true
}

// anyOverlaps reports whether any of paths overlaps e (routes.PathsOverlap).
func anyOverlaps(paths []string, e string) bool {
	return slices.ContainsFunc(paths, func(p string) bool { return routes.PathsOverlap(p, e) })
}
