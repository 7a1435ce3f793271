package httplimit

import (
	"net/url"
	"strings"

	"github.com/sluice-dev/sluice/internal/routes"
)

// pathPattern is a compiled ServeMux path pattern (no method, no host).
type pathPattern struct {
	text string
	// key is the pattern as a Rule's "route" key value (see routeValue).
	key  string
	segs []pathSeg
	// subtree: the pattern ends in "/" and matches every path below it.
	subtree bool
}

// pathSeg is one segment of a pattern: a literal, a wildcard ({name}),
// a rest wildcard ({name...}, last only) or the end marker ({$}, last only).
type pathSeg struct {
	lit    string
	wild   string
	rest   bool
	dollar bool
}

// maxWildcards bounds the wildcards of one pattern (routes.CheckPath).
const maxWildcards = routes.MaxWildcards

// parsePathPattern compiles s, refusing what routes.CheckPath refuses.
func parsePathPattern(s string) (pathPattern, error) {
	p := pathPattern{text: s}
	if err := routes.CheckPath(s); err != nil {
		return p, err
	}
	parts := strings.Split(s[1:], "/")
	for i, part := range parts {
		last := i == len(parts)-1
		name, wild := strings.CutPrefix(part, "{")
		switch {
		case !wild:
			p.subtree = p.subtree || last && part == ""
			// A literal is unescaped, as ServeMux reads it: "/a%2Fb" is
			// the one segment "a/b".
			p.segs = append(p.segs, pathSeg{lit: pathUnescape(part)})
		case part == "{$}":
			p.segs = append(p.segs, pathSeg{dollar: true})
		default:
			name = strings.TrimSuffix(name, "}")
			n, rest := strings.CutSuffix(name, "...")
			p.segs = append(p.segs, pathSeg{wild: n, rest: rest})
		}
	}
	return p, nil
}

// pathMatch holds, for a matched pattern, the path it matched and where
// in it each wildcard's value is.
type pathMatch struct {
	path string
	// escaped: path is escaped, read as ServeMux reads it (see match).
	escaped  bool
	from, to [maxWildcards + 1]int32
}

// match reports whether the cleaned path p (starting with "/") matches,
// recording in m where the wildcards' values are. A decoded p is split at
// every "/"; an escaped p (escaped set) is read as ServeMux reads a
// request's escaped path: split at its "/" and each segment unescaped, so
// that "%2F" stays inside its segment. It allocates nothing but to unescape
// a literal segment of an escaped path.
func (pp *pathPattern) match(p string, escaped bool, m *pathMatch) bool {
	m.path, m.escaped = p, escaped
	pos := 1 // start of the current path segment; len(p)+1: no segment left
	w := 0
	for i := range pp.segs {
		s := &pp.segs[i]
		if pos > len(p) {
			return false
		}
		rest := p[pos:]
		end := strings.IndexByte(rest, '/')
		if end < 0 {
			end = len(rest)
		}
		switch {
		case s.rest:
			if w < len(m.from) {
				m.from[w], m.to[w] = int32(pos), int32(len(p))
			}
			return true
		case s.dollar:
			// ServeMux takes a last segment that unescapes to "/" ("%2F")
			// for the trailing slash.
			return rest == "" || escaped && end == len(rest) && pathUnescape(rest) == "/"
		case s.wild != "":
			if end == 0 || escaped && pathUnescape(rest[:end]) == "/" {
				return false
			}
			if w < len(m.from) {
				m.from[w], m.to[w] = int32(pos), int32(pos+end)
				w++
			}
		case i == len(pp.segs)-1 && pp.subtree:
			return true
		default: // a literal: the whole segment
			if seg := rest[:end]; seg != s.lit && !(escaped && strings.IndexByte(seg, '%') >= 0 && pathUnescape(seg) == s.lit) {
				return false
			}
		}
		pos += end + 1
	}
	return pos > len(p)
}

// value returns the value of the k-th wildcard of the matched pattern,
// without its segments' parameters and a {name...} value without its
// trailing slash (see wildcardWithoutParams), unescaped when the path
// matched was escaped.
func (m *pathMatch) value(k int) string {
	v := m.path[m.from[k]:m.to[k]]
	if m.escaped {
		// Unescaped first: an escaped slash is a slash to an upstream that
		// decodes before it routes ("a%2F" is "a/", one count with "a").
		if v = pathUnescape(v); strings.ContainsAny(v, ";/") {
			v = wildcardWithoutParams(v)
		}
		return v
	}
	if strings.IndexByte(v, ';') >= 0 || strings.HasSuffix(v, "/") {
		v = wildcardWithoutParams(v)
	}
	return v
}

// wildcardWithoutParams returns the wildcard value v (one segment, or the
// rest of a path) without its segments' parameters (";" and what follows
// each), its dot segments then resolved: the value Tomcat, Jetty and
// Spring route it as ("acme;jsessionid=1" is "acme", "x/..;/y" is "y"), as
// the path's reading 4 and the "path" key read it; and the rest of a path
// then without its trailing slash ("a/b/" and "a/b/;x" are "a/b"), as the
// path's reading 3 and the "path" key read it. One tenant, one file, is
// one count, however its segment is spelled.
func wildcardWithoutParams(v string) string {
	if strings.IndexByte(v, '/') < 0 {
		v, _, _ = strings.Cut(v, ";")
		return v
	}
	v = withoutParams("/" + v)[1:]
	return strings.TrimSuffix(v, "/")
}

// pathUnescape returns s unescaped, or s itself when it is not a valid
// escaping, as ServeMux reads a segment.
func pathUnescape(s string) string {
	if strings.IndexByte(s, '%') < 0 {
		return s
	}
	u, err := url.PathUnescape(s)
	if err != nil {
		return s
	}
	return u
}

// Ranks of a pattern's segment at one position of a path it matches, by
// how few segments it matches there: a path that a pattern ends at, a
// literal or {$} match one; a wildcard any one; a {x...} or a trailing
// slash (a subtree) every rest of the path.
const (
	rankRest = iota + 1
	rankWild
	rankOne
)

// rank returns the rank of pp's segment at position i of a path it
// matches: that of its rest ({x...}, subtree) at i and after it.
func (pp *pathPattern) rank(i int) int {
	for j, s := range pp.segs {
		switch {
		case s.rest || j == len(pp.segs)-1 && pp.subtree:
			return rankRest
		case j < i:
			continue
		case s.wild != "":
			return rankWild
		}
		return rankOne
	}
	return rankOne // past its end
}

// moreSpecific reports whether pp is more specific than o on a path both
// match, as ServeMux ranks patterns: at no segment does pp match more
// than o, and at some it matches less ("/v1/uploads" is more specific
// than "/v1/", "/t/{id}/{$}" than "/t/{id}/", "/x/{b}" than "/{a}/{b}").
// Of two patterns neither is more specific than (ServeMux would refuse to
// hold both), neither is.
func (pp *pathPattern) moreSpecific(o *pathPattern) bool {
	less := false
	for i := range max(len(pp.segs), len(o.segs)) {
		a, b := pp.rank(i), o.rank(i)
		if a < b {
			return false
		}
		less = less || a > b
	}
	return less
}

// wildIndex returns the position of wildcard name among the pattern's
// wildcards (as pathMatch counts them), or -1.
func (pp *pathPattern) wildIndex(name string) int {
	k := 0
	for _, s := range pp.segs {
		if s.wild == "" {
			continue
		}
		if s.wild == name {
			return k
		}
		k++
	}
	return -1
}
