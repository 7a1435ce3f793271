package httplimit

import (
	"cmp"
	"net/http"
	"slices"
	"strings"
)

// What a rule's exceptions leave out. An ExceptPaths pattern, or an
// Except entry's paths, name a route that takes some of the rule's
// requests, and they leave out every reading of a request's path that
// the rule's own paths and a plan's costs read as that route: a reading
// that one matches is left out, and so is each reading it is a
// respelling of (see readingFlags). /v1/bulk/, /v1/bulk;x,
// /v1/bulk.json and /V1/BULK are all /v1/bulk, as /v1/bulk's cost
// charges them, so a rule of /v1/ that leaves out /v1/bulk counts none
// of them. A subtree's pattern (/api/admin/, or one ending in {$} or
// {name...}) does not leave out its root without the trailing slash:
// /api/admin stays the rule's. Upstreams differ on it (ServeMux redirects
// it to /api/admin/, Express and Rails serve it as a route of its own),
// and counting it leaves it unlimited on none. A reading that puts the
// path's segments otherwise (an escaped
// slash or dot segment, a ".." segment carrying parameters) is another
// upstream's route, not a respelling: an exception of it leaves out that
// reading alone, so that no client moves a request out of a rule by
// such a path.

// readingFlags say how a reading of a request's path is made from the
// path as cleaned: without its trailing slash, without its segments'
// parameters (see withoutParams), without its format suffix (see
// unformatted; from a reading without its trailing slash), in lower
// case. A reading whose flags include another's is a respelling of it,
// which an upstream serves as the same route: /v1/bulk (unslashed) of
// /v1/bulk/, not the other way round, so that an exception of /v1/bulk
// leaves out the request /v1/bulk/ and one of /v1/bulk/ does not leave
// out the request /v1/bulk. A request that ends in a slash is the route
// its path names, though: an exception that matches a reading of it
// leaves out that reading without its slash too (see respelled).
type readingFlags uint8

const (
	readUnslashed readingFlags = 1 << iota
	readPlain
	readUnformatted
	readLowered

	// readingKinds is the number of combinations of the flags.
	readingKinds = 1 << 4
)

// leftOut holds the readings of one request's path that an
// alternative's exceptions leave out, by their flags: decoded, bit f for
// the decoded reading of flags f; escaped, bit f for the escaped reading
// (ServeMux's, see pathPattern.match) of flags f, 0, readUnslashed or
// readUnslashed|readUnformatted, each also with readLowered.
type leftOut struct {
	decoded, escaped uint16
}

// has reports whether the reading of flags f, escaped or not, is left out.
func (lo *leftOut) has(escaped bool, f readingFlags) bool {
	if escaped {
		return lo.escaped&(1<<f) != 0
	}
	return lo.decoded&(1<<f) != 0
}

// leftOut returns the readings of rd that the alternative's ExceptPaths
// and the paths of its Except entries taking r leave out: each that one
// of them matches, and each that such a reading is a respelling of. The
// readings without parameters are respellings of the others only when
// rd.plainApart is false, and the escaped ones are the decoded ones only
// when rd.escapedApart is false; else each is left out only by what
// matches it or its own respellings.
func (a *alt) leftOut(r *http.Request, rd *pathReadings) leftOut {
	var lo leftOut
	if !a.exceptions {
		return lo
	}
	hit := a.hits(r, rd.p, rd.plain, 0)
	lp, le, lplain, lowered := a.lowered(rd)
	if lowered {
		hit |= a.lower.hits(r, lp, lplain, readLowered)
	}
	lo.decoded = respelled(hit, rd.plainApart)
	switch {
	case rd.escaped == "":
	case !rd.escapedApart:
		// Its segments are p's, unescaped: what matches the one matches
		// the other, and its respellings are the other's.
		lo.escaped = lo.decoded & (1<<readUnslashed | 1)
	default:
		hit := a.escapedHits(r, rd.escaped, 0)
		if lowered && le != "" {
			hit |= a.lower.escapedHits(r, le, readLowered)
		}
		lo.escaped = respelled(hit, false)
	}
	return lo
}

// respelled returns the readings that the readings hit leave out, bit f
// for the reading of flags f: each of them, and each that one of them is
// a respelling of (of flags its own include, readUnslashed aside: the
// request /api/admin/ that except /api/admin/ matches is left out
// whole, not read as /api/admin below /api/), across readPlain only when
// plainApart is false.
func respelled(hit uint16, plainApart bool) uint16 {
	var lo uint16
	if hit == 0 {
		return 0
	}
	for f := range readingFlags(readingKinds) {
		for g := range readingFlags(readingKinds) {
			if (g|readUnslashed)&f == f && hit&(1<<g) != 0 && (!plainApart || g&readPlain == f&readPlain) {
				lo |= 1 << f
				break
			}
		}
	}
	return lo
}

// hits returns the readings of the decoded path p and of p without its
// parameters plain ("" for none) that the alternative's exceptions
// match, bit f|base set for the reading of flags f (see exceptsAt): p and
// plain as they are, without a trailing slash, and then without a format
// suffix.
func (a *alt) hits(r *http.Request, p, plain string, base readingFlags) uint16 {
	var hit uint16
	for i, rp := range [...]string{p, plain} {
		if rp == "" {
			continue
		}
		f := base
		if i > 0 {
			f |= readPlain
		}
		hit |= a.exceptsAt(r, rp, false, f)
		u, _ := unslashed(rp)
		if u != "" {
			hit |= a.exceptsAt(r, u, false, f|readUnslashed)
		}
		if uf, ok := unformatted(cmp.Or(u, rp)); ok {
			hit |= a.exceptsAt(r, uf, false, f|readUnslashed|readUnformatted)
		}
	}
	return hit
}

// escapedHits returns the readings of the escaped path e that the
// alternative's exceptions match, bit f|base set for the reading of
// flags f (see exceptsAt): e as it is, without a trailing slash, and then
// without a format suffix.
func (a *alt) escapedHits(r *http.Request, e string, base readingFlags) uint16 {
	hit := a.exceptsAt(r, e, true, base)
	ue, _ := unslashed(e)
	if ue != "" {
		hit |= a.exceptsAt(r, ue, true, base|readUnslashed)
	}
	if uf, ok := unformatted(cmp.Or(ue, e)); ok {
		hit |= a.exceptsAt(r, uf, true, base|readUnslashed|readUnformatted)
	}
	return hit
}

// exceptsAt returns bit f when one of the alternative's exceptions
// matches the reading p of flags f, escaped or not (see excepts), else 0.
func (a *alt) exceptsAt(r *http.Request, p string, escaped bool, f readingFlags) uint16 {
	if a.excepts(r, p, escaped) {
		return 1 << f
	}
	return 0
}

// excepts reports whether one of the alternative's ExceptPaths, or the
// paths of an Except entry that takes r, match the cleaned path p,
// escaped or not.
func (a *alt) excepts(r *http.Request, p string, escaped bool) bool {
	return len(a.except) > 0 && a.excepted(p, escaped) || len(a.exc) > 0 && exceptedBy(a.exc, r, p, escaped)
}

// excepted reports whether one of the alternative's ExceptPaths matches
// the cleaned path p, escaped or not.
func (a *alt) excepted(p string, escaped bool) bool {
	var m pathMatch // its wildcards are not read
	for i := range a.except {
		if a.except[i].match(p, escaped, &m) {
			return true
		}
	}
	return false
}

// plainApart reports whether the cleaned path p without its segments'
// parameters (see withoutParams) puts its segments otherwise: a segment
// is empty, "." or ".." without its parameters, so that the path
// without them loses a segment (/a/..;/b is /b, /a/;x/b is /a/b).
func plainApart(p string) bool {
	for seg := range strings.SplitSeq(p[1:], "/") {
		if s, _, ok := strings.Cut(seg, ";"); ok && (s == "" || s == "." || s == "..") {
			return true
		}
	}
	return false
}

// escapedApart reports whether the cleaned escaped path e puts its
// segments otherwise than its decoded path: it has an escaped slash
// ("%2F", inside a segment to ServeMux), or a segment that unescapes to
// "." or ".." (a dot segment once decoded, a name to ServeMux).
func escapedApart(e string) bool {
	for seg := range strings.SplitSeq(e[1:], "/") {
		if strings.IndexByte(seg, '%') < 0 {
			continue
		}
		if strings.Contains(seg, "%2F") || strings.Contains(seg, "%2f") {
			return true
		}
		if dots(seg) {
			return true
		}
	}
	return false
}

// dots reports whether the segment seg unescapes to "." or "..".
func dots(seg string) bool {
	n := 0
	for ; seg != ""; n++ {
		switch {
		case seg[0] == '.':
			seg = seg[1:]
		case strings.HasPrefix(seg, "%2E") || strings.HasPrefix(seg, "%2e"):
			seg = seg[3:]
		default:
			return false
		}
	}
	return n == 1 || n == 2
}

// exceptEntry is one entry of a Rule's Except, compiled.
type exceptEntry struct {
	methods []string // as written
	hosts   []string // as alt's
	headers []HeaderMatch
	paths   []pathPattern // empty: any path
}

// takes reports whether the entry's methods, hosts and headers match r
// (its paths are the caller's): methods as written, a host without port
// or trailing dot, each header with a value carried once with it.
func (e *exceptEntry) takes(r *http.Request) bool {
	if len(e.methods) > 0 && !slices.Contains(e.methods, r.Method) {
		return false
	}
	if len(e.hosts) > 0 && (strings.ContainsAny(r.Host, ":[") || strings.HasSuffix(r.Host, ".") || !hostMatches(e.hosts, r.Host)) {
		return false
	}
	for i := range e.headers {
		hm := &e.headers[i]
		vs, ok := r.Header[hm.Name]
		if !ok || hm.Value != "" && (len(vs) != 1 || vs[0] != hm.Value) {
			return false
		}
	}
	return true
}

// exceptedBy reports whether an entry of exc with paths takes r and
// matches the cleaned path p, a reading of r's path, escaped or not.
func exceptedBy(exc []exceptEntry, r *http.Request, p string, escaped bool) bool {
	var m pathMatch // its wildcards are not read
	for i := range exc {
		e := &exc[i]
		if len(e.paths) == 0 || !e.takes(r) {
			continue
		}
		for j := range e.paths {
			if e.paths[j].match(p, escaped, &m) {
				return true
			}
		}
	}
	return false
}
