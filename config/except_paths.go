package config

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
)

// exceptPathsOverlap refuses each except_paths pattern of a rule that none
// of the rule's paths can match: it leaves nothing out. Two patterns are
// judged to overlap unless a literal segment of one differs, in any case,
// from the other's at the same place, or one ends where the other goes on
// past a segment: requests are matched in more readings than one (without
// a trailing slash, in any case; see httplimit), so anything closer is
// taken to overlap.
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

// anyOverlaps reports whether any of paths overlaps e.
func anyOverlaps(paths []string, e string) bool {
	for _, p := range paths {
		if overlaps(segments(p), segments(e)) {
			return true
		}
	}
	return false
}

// pathSeg is a segment of a path pattern: a literal (lower case), one
// segment of any text (wild), or any rest (rest).
type pathSeg struct {
	lit        string
	wild, rest bool
}

// segments splits the ServeMux path pattern p: "/a/" is a then any rest,
// "/a/{$}" a then an empty literal.
func segments(p string) []pathSeg {
	parts := strings.Split(p[1:], "/")
	var out []pathSeg
	for i, s := range parts {
		last := i == len(parts)-1
		switch {
		case last && s == "":
			out = append(out, pathSeg{rest: true})
		case s == "{$}":
			out = append(out, pathSeg{lit: ""})
		case strings.HasPrefix(s, "{") && strings.HasSuffix(s, "...}"):
			out = append(out, pathSeg{rest: true})
		case strings.HasPrefix(s, "{") && strings.HasSuffix(s, "}"):
			out = append(out, pathSeg{wild: true})
		default:
			out = append(out, pathSeg{lit: strings.ToLower(s)})
		}
	}
	return out
}

// overlaps reports whether some path could match both a and b, read
// generously (see exceptPathsOverlap).
func overlaps(a, b []pathSeg) bool {
	for len(a) > 0 && len(b) > 0 {
		x, y := a[0], b[0]
		switch {
		case x.rest || y.rest:
			return true
		case !x.wild && !y.wild && x.lit != y.lit:
			return false
		}
		a, b = a[1:], b[1:]
	}
	// One ends: the other may go on only by a trailing slash or a rest.
	rest := slices.Concat(a, b)
	return len(rest) == 0 || len(rest) == 1 && (rest[0].rest || !rest[0].wild && rest[0].lit == "")
}
