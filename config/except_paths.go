package config

import (
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/sluice-dev/sluice/internal/routes"
)

// exceptPathsOverlap refuses each except_paths pattern of a rule that none
// of the rule's paths can match (routes.PathsOverlap): it leaves nothing
// out.
func (d *decoder) exceptPathsOverlap(c *Config, raw *rawConfig) {
	for i, r := range c.Rules {
		if len(r.Paths) == 0 || !validPaths(r.Paths) {
			continue
		}
		for j, e := range r.ExceptPaths {
			loc, ok := raw.locs[fmt.Sprintf("Rules[%d].ExceptPaths[%d]", i, j)]
			if !ok || !validPaths([]string{e}) || anyOverlaps(r.Paths, e) {
				continue
			}
			d.Errorf(loc.node, loc.path, "%q leaves out nothing: none of the rule's paths (%s) matches a path it matches",
				e, strings.Join(r.Paths, ", "))
		}
	}
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
