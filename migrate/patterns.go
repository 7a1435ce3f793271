package migrate

import (
	"slices"
	"strings"
)

// prefixPatterns returns the ServeMux patterns of a path prefix matched
// element by element, as Kong routes, Kubernetes Prefix paths and Envoy's
// path_separated_prefix match: the path itself and the paths below it
// ("/api" → "/api" and "/api/"; "/api/" → "/api/"). A pattern ServeMux
// refuses is left out.
func prefixPatterns(p string) []string {
	var out []string
	for _, pat := range []string{p, strings.TrimSuffix(p, "/") + "/"} {
		if validPattern(pat) && !slices.Contains(out, pat) {
			out = append(out, pat)
		}
	}
	return out
}

// exactPattern returns the ServeMux pattern that matches path p alone: a
// pattern ending in a slash would match the paths below it too.
func exactPattern(p string) string {
	if strings.HasSuffix(p, "/") {
		return p + "{$}"
	}
	return p
}

// belowAny returns the patterns of ps that lie within one of own (all of
// ps when own is empty: every path).
func belowAny(ps, own []string) []string {
	if len(own) == 0 {
		return ps
	}
	var out []string
	for _, p := range ps {
		for _, o := range own {
			if p != o && below(p, o) {
				out = append(out, p)
				break
			}
		}
	}
	return out
}

// below reports whether ServeMux pattern q lies under the subtree pattern
// p: p ends in a slash and q is a longer path starting with it.
func below(q, p string) bool {
	return strings.HasSuffix(p, "/") && len(q) > len(p) && strings.HasPrefix(q, p)
}
