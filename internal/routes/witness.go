package routes

import (
	"net/url"
	"strings"
)

// OverlapPaths returns request paths that the path pattern p matches as
// ServeMux reads them, or without their trailing slash or format suffix,
// and that the path
// pattern q may match under a reading Spellings weighs: as written,
// without a trailing slash, in lower case, or without a format suffix.
// Each is built segment by segment: p's literal where p has one (q's
// there equal in any case, a wildcard, or its rest), q's literal where
// only q has one, "x" where both have a wildcard; past a rest of one, the
// other's segments; where q ends and p asks for a trailing slash
// ("/bulk/" or "/bulk/{$}" beside "/bulk"), the path with it; where p ends
// and q goes on by a trailing slash ("/bulk" beside "/bulk/"), the path
// without it and with it; p's last literal may be q's last with a format
// suffix ("/bulk.json" beside "/bulk"), and q's p's ("/bulk" beside
// "/bulk.json": the path with the suffix, which p matches without it).
// None when a literal of one differs
// from the other's otherwise, or one ends where the other goes on past a
// segment. The paths are witnesses to try, not a proof that q charges
// them: that is the caller's to ask (Spellings).
func OverlapPaths(p, q string) []string {
	a, b := literalSegments(p), literalSegments(q)
	var out []string
	for len(a) > 0 && len(b) > 0 {
		x, y := a[0], b[0]
		switch {
		case x.rest:
			return []string{joinSegments(append(out, filled(b)...))}
		case y.rest:
			return []string{joinSegments(append(out, filled(a)...))}
		case x.wild && y.wild:
			out = append(out, "x")
		case x.wild && y.lit != "":
			out = append(out, y.text)
		case y.wild && x.lit != "":
			out = append(out, x.text)
		case !x.wild && !y.wild && (strings.EqualFold(x.lit, y.lit) || len(a) == 1 && len(b) == 1 && formatOf(x.lit, y.lit)):
			out = append(out, x.text)
		case !x.wild && !y.wild && len(a) == 1 && len(b) == 1 && formatOf(y.lit, x.lit):
			out = append(out, y.text)
		default:
			return nil
		}
		a, b = a[1:], b[1:]
	}
	switch {
	case len(a) == 0 && len(b) == 0:
		return []string{joinSegments(out)}
	case len(a) == 0 && endsBySlash(b):
		return []string{joinSegments(out), joinSegments(append(out, ""))}
	case len(b) == 0 && endsBySlash(a):
		return []string{joinSegments(append(out, ""))}
	}
	return nil
}

// PathWithin reports whether every path that the path pattern p matches
// as ServeMux reads it, q matches so too: at each segment q has p's
// literal (as ServeMux unescapes it, in the same case), or a wildcard
// where p has a literal or a wildcard, or a rest ("/v1/", "{x...}") from
// where on it takes whatever p has; p's rest is within q's rest only, and
// neither ends where the other goes on.
func PathWithin(p, q string) bool {
	a, b := literalSegments(p), literalSegments(q)
	for len(a) > 0 && len(b) > 0 {
		x, y := a[0], b[0]
		switch {
		case y.rest:
			return true
		case x.rest:
			return false
		case y.wild && (x.wild || x.lit != ""):
		case !x.wild && !y.wild && x.lit == y.lit:
		default:
			return false
		}
		a, b = a[1:], b[1:]
	}
	return len(a) == 0 && len(b) == 0
}

// litSeg is a segment of a path pattern with its literal in its own case:
// the literal as ServeMux reads it (unescaped; "" for {$}) and as written,
// one segment of any text (wild), or any rest (rest).
type litSeg struct {
	lit, text  string
	wild, rest bool
}

// literalSegments splits the ServeMux path pattern p as segments does,
// keeping its literals' case and spelling.
func literalSegments(p string) []litSeg {
	parts := strings.Split(strings.TrimPrefix(p, "/"), "/")
	out := make([]litSeg, 0, len(parts))
	for i, s := range parts {
		last := i == len(parts)-1
		switch {
		case last && s == "":
			out = append(out, litSeg{rest: true})
		case s == "{$}":
			out = append(out, litSeg{})
		case strings.HasPrefix(s, "{") && strings.HasSuffix(s, "...}"):
			out = append(out, litSeg{rest: true})
		case strings.HasPrefix(s, "{") && strings.HasSuffix(s, "}"):
			out = append(out, litSeg{wild: true})
		default:
			lit := s
			if u, err := url.PathUnescape(s); err == nil {
				lit = u
			}
			out = append(out, litSeg{lit: lit, text: s})
		}
	}
	return out
}

// filled returns a path's segments that the pattern segments segs match:
// a literal as written, "x" for a wildcard, "" for {$} or a rest (a
// trailing slash, ending them).
func filled(segs []litSeg) []string {
	out := make([]string, 0, len(segs))
	for _, s := range segs {
		switch {
		case s.rest:
			return append(out, "")
		case s.wild:
			out = append(out, "x")
		default:
			out = append(out, s.text)
		}
	}
	return out
}

// endsBySlash reports whether segs, what is left of a pattern where the
// other ended, take a trailing slash alone: a rest or {$}.
func endsBySlash(segs []litSeg) bool {
	return len(segs) == 1 && (segs[0].rest || !segs[0].wild && segs[0].lit == "")
}

// formatOf reports whether the last segment lit is last with a format
// suffix (see Unformatted), in any case.
func formatOf(lit, last string) bool {
	f, ok := Unformatted("/" + lit)
	return ok && strings.EqualFold(f[1:], last)
}

// joinSegments returns the rooted path of segs.
func joinSegments(segs []string) string { return "/" + strings.Join(segs, "/") }
