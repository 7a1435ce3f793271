package routes

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// Covering returns the pattern of m, as first handed to Handle, that a
// request of the valid ServeMux pattern p matches, when every request p
// matches, spelled as p writes it, matches a pattern of m under
// MatchesAsWritten: p's requests are then all m's, and an exempt list m
// leaves a limit on p none to apply to. It returns "" when some request of
// p matches no pattern of m so: "GET /x/{id}" beside "GET /x/y" in m, for
// one, which leaves it GET /x/z.
//
// Every request of p is judged by representatives: p's method, with HEAD
// for GET (which a GET pattern matches as well), or without one GET, HEAD,
// each method m names and one it names not; p's host, or one m names not;
// p's path with each wildcard a segment that no pattern of m writes as a
// literal, and a subtree ("/x/", "/x/{rest...}") at its root and one and
// two segments below it. The zero Mux covers nothing.
func (m *Mux) Covering(p string) string {
	if m == nil || m.mux == nil {
		return ""
	}
	method, host, path := splitPattern(p)
	var names, hosts, lits []string
	for q := range m.registered {
		qm, qh, qp := splitPattern(q)
		names, hosts = append(names, qm), append(hosts, qh)
		for _, s := range literalSegments(qp) {
			lits = append(lits, s.lit)
		}
	}
	methods := []string{method}
	switch method {
	case http.MethodGet:
		methods = append(methods, http.MethodHead)
	case "":
		methods = append([]string{http.MethodGet, http.MethodHead, fresh("X", "", names)}, names...)
	}
	if host == "" {
		host = fresh("x", ".invalid", hosts)
	}
	fill := fresh("x", "", lits)
	covering := ""
	for _, path := range representativePaths(path, fill) {
		for _, method := range methods {
			if method == "" {
				continue // a pattern without a method, which names none
			}
			r := &http.Request{Method: method, Host: host, URL: path}
			if !m.MatchesAsWritten(r) {
				return ""
			}
			if covering == "" {
				covering = m.Pattern(r)
			}
		}
	}
	return covering
}

// splitPattern returns the ServeMux pattern p's method ("" for none), its
// host in lower case without the root dot ("" for none), and its path.
func splitPattern(p string) (method, host, path string) {
	p = LowerHost(p)
	i, j := HostSpan(p)
	return strings.TrimRight(p[:i], " \t"), p[i:j], p[j:]
}

// fresh returns name+suffix, name repeated as often as it takes for that
// to be none of taken.
func fresh(name, suffix string, taken []string) string {
	s := name
	for slices.Contains(taken, s+suffix) {
		s += name
	}
	return s + suffix
}

// representativePaths returns request URLs for the path pattern p: each
// literal segment as ServeMux reads it (escaped where a path segment needs
// it: "a%2Fb" stays one segment), each wildcard fill,
// and a subtree or {name...} at its root and fill and fill/fill below it.
func representativePaths(p, fill string) []*url.URL {
	var decoded, raw []string
	var out []*url.URL
	add := func(decoded, raw []string) {
		u := &url.URL{Path: "/" + strings.Join(decoded, "/")}
		if r := "/" + strings.Join(raw, "/"); r != u.EscapedPath() {
			u.RawPath = r
		}
		out = append(out, u)
	}
	for _, s := range literalSegments(p) {
		switch {
		case s.rest:
			for _, below := range [][]string{{""}, {fill}, {fill, fill}} {
				add(append(slices.Clip(decoded), below...), append(slices.Clip(raw), below...))
			}
			return out
		case s.wild:
			decoded, raw = append(decoded, fill), append(raw, fill)
		default:
			decoded, raw = append(decoded, s.lit), append(raw, url.PathEscape(s.lit))
		}
	}
	add(decoded, raw)
	return out
}
