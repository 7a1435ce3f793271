package routes

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// Covering returns the pattern of m, as first handed to Handle, that a
// request of the valid ServeMux pattern p matches, when every request p
// matches, spelled as p writes it, matches a pattern of m under
// MatchesAsWritten: p's requests are then all m's, and an exempt list m
// leaves a limit on p none to apply to. It returns "" when some request of
// p matches no pattern of m so: "GET /x/{id}" beside "GET /x/y" in m, for
// one, which leaves it GET /x/z; "GET /docs/" beside "GET /docs/{$}",
// "GET /docs/{page}" and "GET /docs/{section}/{page}", which leave it
// GET /docs/a/ and GET /docs/a/b/c.
//
// Every request of p is judged by representatives: p's method, with HEAD
// for GET (which a GET pattern matches as well), or without one GET, HEAD,
// each method m names and one it names not; p's host, or one m names not;
// p's path with each wildcard a segment that no pattern of m writes as a
// literal, and a subtree ("/x/", "/x/{rest...}") at its root and then one
// such segment more at a time, without and with a trailing slash, until
// the path has more segments than any pattern of m, past which m's
// patterns take every depth alike. A request that ServeMux matches only
// by redirecting it to a subtree, {$} or {name...} pattern of m is a
// representative too, with that pattern's host: "GET /x/y/" beside "GET
// /x/{rest...}" in m leaves "GET /x/{id}" GET /x/y. A wildcard's segment
// is judged plain, without an escape, ";" or "\" that an upstream may
// read otherwise. The zero Mux covers nothing.
//
// Covering takes time in the representatives and in m's patterns ending
// in a subtree, {$} or {name...}, not in all of m's patterns; it must not
// be called concurrently with Handle.
func (m *Mux) Covering(p string) string {
	if m == nil || len(m.registered) == 0 {
		return ""
	}
	w := &m.parts
	method, host, path := splitPattern(p)
	methods := []string{method}
	switch method {
	case http.MethodGet:
		methods = append(methods, http.MethodHead)
	case "":
		methods = []string{http.MethodGet, http.MethodHead, w.method.name}
		for name := range w.methods {
			if name != http.MethodGet && name != http.MethodHead {
				methods = append(methods, name)
			}
		}
	}
	anyHost := host == ""
	if anyHost {
		host = w.host.name
	}
	segs, fill := literalSegments(path), w.fill.name
	reps := representativePaths(segs, fill, w.depth)
	hosts := make([]string, len(reps))
	for i := range hosts {
		hosts[i] = host
	}
	for _, root := range w.roots {
		rm, rh, rp := splitPattern(root)
		if rh != "" && rh != host && !anyHost {
			continue // another host's
		}
		if rm != "" && !coversMethod(methods, rm) {
			continue // redirects no request of p's methods
		}
		if u := redirectedPath(segs, literalSegments(rp), fill); u != nil {
			h := host
			if rh != "" {
				h = rh
			}
			reps, hosts = append(reps, u), append(hosts, h)
		}
	}
	covering := ""
	for i, path := range reps {
		for _, method := range methods {
			r := &http.Request{Method: method, Host: hosts[i], URL: path}
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

// parts is what the patterns of a Mux write, gathered as Handle adds each
// so that Covering need not read them all again.
type parts struct {
	methods map[string]bool // the methods named
	hosts   map[string]bool // the hosts named, in lower case, without the root dot
	lits    map[string]bool // the literal path segments, as ServeMux reads them
	depth   int             // the most segments of a path (slashes)
	// roots are the patterns, as registered, whose path ends in a slash,
	// {$} or {name...}: those ServeMux redirects a path without its
	// trailing slash to.
	roots []string
	// method, host and fill are a method, a host and a path segment that
	// no pattern names.
	method, host, fill freshName
}

// add records the registered pattern p.
func (w *parts) add(p string) {
	if w.methods == nil {
		w.methods, w.hosts, w.lits = map[string]bool{}, map[string]bool{}, map[string]bool{}
		w.method, w.host, w.fill = freshName{prefix: "X"}, freshName{prefix: "x", suffix: ".invalid"}, freshName{prefix: "x"}
	}
	method, host, path := splitPattern(p)
	if method != "" {
		w.methods[method] = true
	}
	if host != "" {
		w.hosts[host] = true
	}
	segs := literalSegments(path)
	for _, s := range segs {
		if !s.rest && !s.wild && s.text != "" {
			w.lits[s.lit] = true
		}
	}
	w.method.avoid(w.methods)
	w.host.avoid(w.hosts)
	w.fill.avoid(w.lits)
	w.depth = max(w.depth, strings.Count(path, "/"))
	if last := segs[len(segs)-1]; last.rest || !last.wild && last.text == "" {
		w.roots = append(w.roots, p)
	}
}

// freshName is a name none of a set holds: prefix+suffix, or prefix, a
// number and suffix.
type freshName struct {
	prefix, suffix string
	n              int    // the number of name, 0 for none
	name           string // the name
}

// avoid makes f.name one that taken does not hold. The number only grows,
// so that avoiding a set as it grows takes time in its size, however its
// names are crafted ("x", "xx", "x1", "x2"…).
func (f *freshName) avoid(taken map[string]bool) {
	if f.name == "" {
		f.name = f.prefix + f.suffix
	}
	for taken[f.name] {
		f.n++
		f.name = f.prefix + strconv.Itoa(f.n) + f.suffix
	}
}

// splitPattern returns the ServeMux pattern p's method ("" for none), its
// host in lower case without the root dot ("" for none), and its path.
func splitPattern(p string) (method, host, path string) {
	p = LowerHost(p)
	i, j := HostSpan(p)
	return strings.TrimRight(p[:i], " \t"), p[i:j], p[j:]
}

// coversMethod reports whether a request of one of methods matches a
// pattern naming method (HEAD with GET).
func coversMethod(methods []string, method string) bool {
	for _, m := range methods {
		if m == method || m == http.MethodHead && method == http.MethodGet {
			return true
		}
	}
	return false
}

// representativePaths returns request URLs for the path pattern of
// segments segs: each literal segment as ServeMux reads it (escaped where
// a path segment needs it: "a%2Fb" stays one segment), each wildcard fill,
// and a subtree or {name...} at its root, then below it fill, fill/,
// fill/fill, fill/fill/ and so on, until the path has more than depth
// segments.
func representativePaths(segs []litSeg, fill string, depth int) []*url.URL {
	var decoded, raw []string
	var out []*url.URL
	for _, s := range segs {
		switch {
		case s.rest:
			out = append(out, segmentsURL(append(decoded, ""), append(raw, "")))
			for n := len(decoded) + 1; ; n++ {
				decoded, raw = append(decoded, fill), append(raw, fill)
				out = append(out, segmentsURL(decoded, raw), segmentsURL(append(decoded, ""), append(raw, "")))
				if n > depth {
					return out
				}
			}
		case s.wild:
			decoded, raw = append(decoded, fill), append(raw, fill)
		default:
			decoded, raw = append(decoded, s.lit), append(raw, url.PathEscape(s.lit))
		}
	}
	return append(out, segmentsURL(decoded, raw))
}

// redirectedPath returns the request URL, if any, that both the path
// pattern of segments segs matches and ServeMux may redirect to the
// pattern of segments root (which ends in a subtree, {$} or {name...}):
// root's path without its last segment, each literal of either, fill
// where both have a wildcard, and past segs' rest root's segments (fill
// for a wildcard). It is nil when no path without a trailing slash is of
// both.
func redirectedPath(segs, root []litSeg, fill string) *url.URL {
	root = root[:len(root)-1]
	if len(root) == 0 {
		return nil
	}
	var decoded, raw []string
	for i, y := range root {
		if !y.wild && y.text == "" {
			return nil // an empty segment, which no cleaned path has
		}
		if i >= len(segs) {
			return nil
		}
		x := segs[i]
		switch {
		case x.rest:
			for _, y := range root[i:] {
				if !y.wild && y.text == "" {
					return nil
				}
				lit := y.lit
				if y.wild {
					lit = fill
				}
				decoded, raw = append(decoded, lit), append(raw, url.PathEscape(lit))
			}
			return segmentsURL(decoded, raw)
		case x.wild && y.wild:
			decoded, raw = append(decoded, fill), append(raw, fill)
		case x.wild:
			decoded, raw = append(decoded, y.lit), append(raw, url.PathEscape(y.lit))
		case x.text == "":
			return nil // {$}, which asks for a trailing slash
		case y.wild || x.lit == y.lit:
			decoded, raw = append(decoded, x.lit), append(raw, url.PathEscape(x.lit))
		default:
			return nil
		}
	}
	if len(segs) != len(root) {
		return nil
	}
	return segmentsURL(decoded, raw)
}

// segmentsURL returns the URL of the path of the segments decoded, as
// raw writes them escaped.
func segmentsURL(decoded, raw []string) *url.URL {
	u := &url.URL{Path: "/" + strings.Join(decoded, "/")}
	if r := "/" + strings.Join(raw, "/"); r != u.EscapedPath() {
		u.RawPath = r
	}
	return u
}
