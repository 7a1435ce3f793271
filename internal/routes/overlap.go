package routes

import (
	"net/url"
	"slices"
	"strings"
)

// PathsOverlap reports whether some request path could match both path
// patterns p and q (ServeMux patterns' paths, "/a/", "/a/{id}", "/a/{$}"),
// read generously: they overlap unless a literal segment of one differs,
// in any case, from the other's at the same place, or one ends where the
// other goes on past a segment. Requests are matched in more readings than
// one (without a trailing slash, in any case; see Mux.MatchesAny), so
// anything closer is taken to overlap.
func PathsOverlap(p, q string) bool {
	return overlaps(segments(p), segments(q))
}

// pathSeg is a segment of a path pattern: a literal (unescaped, as
// ServeMux reads a pattern's literal segments, and lower case), one
// segment of any text (wild), or any rest (rest).
type pathSeg struct {
	lit        string
	wild, rest bool
}

// segments splits the ServeMux path pattern p: "/a/" is a then any rest,
// "/a/{$}" a then an empty literal.
func segments(p string) []pathSeg {
	parts := strings.Split(strings.TrimPrefix(p, "/"), "/")
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
			if u, err := url.PathUnescape(s); err == nil {
				s = u
			}
			out = append(out, pathSeg{lit: strings.ToLower(s)})
		}
	}
	return out
}

// overlaps reports whether some path could match both a and b, read
// generously (see PathsOverlap).
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
