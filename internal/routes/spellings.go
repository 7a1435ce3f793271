package routes

import (
	"iter"
	"maps"
	"net/http"
	"slices"
	"strings"
)

// Spellings of a path. Upstreams serve some requests whose paths differ
// as one resource: Express (not strict), Rails, Laravel and ASP.NET Core
// without a trailing slash (Unslashed); Tomcat, Jetty and Spring without
// path parameters (WithoutParams); Rails without a format suffix
// (Unformatted); Express (by default) and ASP.NET Core in any case;
// Django with a method in any case. What refuses or charges
// an endpoint counts them all (Spellings, MatchesAny), so that no client escapes it
// by respelling. Some read a path's segments otherwise: IIS (http.sys,
// and ASP.NET on it) takes a backslash for a slash (WithoutBackslashes),
// so that /public/..\api is /api there; a path is read that way too, and
// what excepts a request from a refusal must hold under that reading as
// well (MatchesAsWritten).

// WithoutParams returns the cleaned path p without its segments' path
// parameters (";" and what follows it in a segment), cleaned again, as
// Tomcat, Jetty and Spring route it: /v1/login;jsessionid=1 is /v1/login,
// and /v1/x/..;/login is /v1/login. It is p itself, allocating nothing,
// when p has none.
func WithoutParams(p string) string {
	if strings.IndexByte(p, ';') < 0 {
		return p
	}
	b := make([]byte, 0, len(p))
	for seg := range strings.SplitSeq(p[1:], "/") {
		seg, _, _ = strings.Cut(seg, ";")
		b = append(append(b, '/'), seg...)
	}
	return CleanPath(string(b))
}

// WithoutBackslashes returns the cleaned path p with each backslash ("\",
// written so or as "%5C") a slash, cleaned again, as IIS's http.sys routes
// it, and ASP.NET, URL Rewrite and ARR on IIS: /api\generate and
// /public/..\api/generate are /api/generate. It is p itself, allocating
// nothing, when p has none.
func WithoutBackslashes(p string) string {
	if strings.IndexByte(p, '\\') < 0 {
		return p
	}
	return CleanPath(strings.ReplaceAll(p, `\`, "/"))
}

// readings returns the readings of the cleaned decoded path p that
// upstreams route: p; p without its path parameters (see WithoutParams);
// p with its backslashes as slashes (see WithoutBackslashes); and that
// without its path parameters, as Tomcat with allowBackslash routes it.
// A reading that is an earlier one is "". It allocates nothing for a
// path without ";" or "\".
func readings(p string) [4]string {
	rs := [4]string{p, WithoutParams(p)}
	if bs := WithoutBackslashes(p); bs != p {
		rs[2], rs[3] = bs, WithoutParams(bs)
	}
	for i := 1; i < len(rs); i++ {
		if slices.Contains(rs[:i], rs[i]) {
			rs[i] = ""
		}
	}
	return rs
}

// Unslashed returns the cleaned path p without its trailing slash, and
// whether it had one ("/" has none to lose; "" when it has none): the
// path that Express (not strict), Rails, Laravel and ASP.NET Core serve p
// as.
func Unslashed(p string) (string, bool) {
	if len(p) > 1 && p[len(p)-1] == '/' {
		return p[:len(p)-1], true
	}
	return "", false
}

// Unformatted returns the cleaned path p without its last segment's
// format suffix (a dot and one or more ASCII letters or digits ending p,
// after a name that does not end in a dot), and whether it had one ("" when
// it has none): the path Rails routes p as, every route taking an
// optional (.:format) by default, so /v1/login.json and /v1/login.xml are
// /v1/login. A path ending in a slash has none.
func Unformatted(p string) (string, bool) {
	dot := strings.LastIndexByte(p, '.')
	if dot < 0 || dot == len(p)-1 || dot <= strings.LastIndexByte(p, '/')+1 || p[dot-1] == '.' {
		return "", false
	}
	for _, c := range []byte(p[dot+1:]) {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
			return "", false
		}
	}
	return p[:dot], true
}

// lowerPath returns the ServeMux pattern p with its path in lower case
// (its method and host as they are).
func lowerPath(p string) string {
	_, j := HostSpan(p)
	return p[:j] + strings.ToLower(p[j:])
}

// handleLower adds the registered pattern p to m.lower, in lower case,
// and records which patterns as configured each pattern there stands for
// (lowerOf). m.lower is made when a first pattern has an upper-case letter
// in its path; until then m.mux serves for it. Of patterns that ServeMux
// refuses to hold together in lower case, but for those of one route (see
// addLower), m.lower holds the first in the order of their text, whatever
// the order Handle was called in; the others are matched in their own case
// only.
func (m *Mux) handleLower(p string) {
	if m.lower == nil && lowerPath(p) == p {
		return
	}
	if m.lower == nil || !m.addLower(p) {
		m.buildLower()
	}
}

// buildLower makes m.lower anew from the registered patterns, in the order
// of their text, each added unless ServeMux refuses it beside one added
// before it.
func (m *Mux) buildLower() {
	m.lower, m.lowerOf, m.lowerAt = http.NewServeMux(), map[string][]string{}, map[string]string{}
	m.lower.Handle("/", http.NotFoundHandler())
	for _, q := range slices.Sorted(maps.Keys(m.registered)) {
		if !matchesEverything(q) {
			m.addLower(q)
		}
	}
}

// addLower adds the registered pattern p to m.lower in lower case, and
// reports whether m.lower took it. A pattern whose path in lower case is
// the route (see Normal) of one added before stands beside that one:
// "POST /Items/{id}" beside "POST /items/{key}", "/Bulk/" beside
// "/bulk/{rest...}". ServeMux may refuse another.
func (m *Mux) addLower(p string) bool {
	lp, c := lowerPath(p), m.asConfigured(p)
	route := Normal(lp)
	if at, ok := m.lowerAt[route]; ok {
		m.lowerOf[at] = append(m.lowerOf[at], c)
		return true
	}
	if handle(m.lower, lp) != nil {
		return false
	}
	m.lowerAt[route], m.lowerOf[lp] = lp, []string{c}
	return true
}

// asConfigured returns the registered pattern p as first handed to Handle.
func (m *Mux) asConfigured(p string) string {
	if c, ok := m.configured[p]; ok {
		return c
	}
	return p
}

// MatchesAny reports whether r matches a pattern under some spelling of it
// that an upstream serves as the same request (see Spellings): what may
// refuse a request, so that no spelling of it escapes a refusal.
func (m *Mux) MatchesAny(r *http.Request) bool {
	for p := range m.Spellings(r) {
		if p != "" {
			return true
		}
	}
	return false
}

// Spellings yields, for each spelling of r that an upstream serves as the
// same request, the pattern it matches as first handed to Handle, or ""
// when it matches none: what charges a request, so that no spelling of it
// costs less than another. The spellings are r's path as ServeMux reads
// it and decoded (see Decoded); the decoded path without path parameters
// (see WithoutParams), and with its backslashes as slashes, with and
// without path parameters (see WithoutBackslashes); each without a
// trailing slash (see Unslashed), and in lower case against the
// patterns' paths in lower case, where each pattern whose path in lower
// case is the route (see Normal) matched is yielded ("POST /Items/{id}"
// and "POST /items/{key}" for /ITEMS/7); r's method in any case. A
// spelling that is another's is not read again, so a request spelled as
// ServeMux routes it, its path clean and in lower case beside patterns in
// lower case, is read once. Last, the decoded spellings without a trailing
// slash and then without a format suffix (see Unformatted), in their case
// and in lower case, each yielding only a pattern that the suffix steps
// off (see stepsOff): /v1/login.json yields "POST /v1/login", while
// /v1/openapi.json yields no "/v1/" for it, which the path with its
// suffix is read under already. A pattern may be yielded more than once.
// The zero Mux yields nothing.
func (m *Mux) Spellings(r *http.Request) iter.Seq[string] {
	return func(yield func(string) bool) {
		if m == nil || m.mux == nil {
			return
		}
		m.spellings(r, yield)
	}
}

// spellings is Spellings' walk; it returns false when yield did.
func (m *Mux) spellings(r *http.Request, yield func(string) bool) bool {
	if up := strings.ToUpper(r.Method); up != r.Method {
		r2 := *r
		r2.Method = up
		r = &r2
	}
	if !yield(m.Pattern(r)) {
		return false
	}
	if r.URL == nil {
		return true
	}
	if d := Decoded(r); d != nil && !yield(m.Pattern(d)) {
		return false
	}
	rs := readings(CleanPath(r.URL.Path))
	for i, rp := range rs {
		if rp == "" {
			continue // an earlier reading again
		}
		if i > 0 && !yield(m.Pattern(withPath(r, rp))) {
			return false
		}
		if u, ok := Unslashed(rp); ok && !yield(m.Pattern(withPath(r, u))) {
			return false
		}
		lp := strings.ToLower(rp)
		if lp == rp && m.lower == nil {
			continue // read above, in the same case
		}
		if !m.lowerMatches(withPath(r, lp), yield) {
			return false
		}
		if u, ok := Unslashed(lp); ok && !m.lowerMatches(withPath(r, u), yield) {
			return false
		}
	}
	return m.unformattedSpellings(r, &rs, yield)
}

// unformattedSpellings is spellings' last step, for the readings rs of
// r's decoded and cleaned path (see readings): each, without a trailing
// slash, without its format suffix (see Unformatted), in its case and in
// lower case, yielding only the patterns that the suffix steps off (see
// stepsOff). It returns false when yield did.
func (m *Mux) unformattedSpellings(r *http.Request, rs *[4]string, yield func(string) bool) bool {
	for _, rp := range rs {
		if rp == "" {
			continue // an earlier reading again
		}
		if u, ok := Unslashed(rp); ok {
			rp = u
		}
		f, ok := Unformatted(rp)
		if !ok {
			continue
		}
		steppedOff := func(pattern string) bool { return !stepsOff(pattern, f) || yield(pattern) }
		if !steppedOff(m.Pattern(withPath(r, f))) {
			return false
		}
		lf := strings.ToLower(f)
		if lf == f && m.lower == nil {
			continue // read above, in the same case
		}
		if !m.lowerMatches(withPath(r, lf), steppedOff) {
			return false
		}
	}
	return true
}

// stepsOff reports whether pattern, which the path f matches, matches no
// path that is f with a format suffix on its last segment: its path ends
// in a literal segment ("/v1/login" for /v1/login, not /v1/login.json), or
// it matched f only by ServeMux's redirect of a subtree's root (see
// redirected). A pattern ending in a wildcard or a slash ("/v1/{name}",
// "/v1/") matches the path with its suffix as well, "" none.
func stepsOff(pattern, f string) bool {
	if pattern == "" {
		return false
	}
	if redirected(pattern, f) {
		return true
	}
	last := pattern[strings.LastIndexByte(pattern, '/')+1:]
	return last != "" && last[0] != '{'
}

// lowerMatches yields the patterns that the request r, whose path is in
// lower case, matches in lower case (see Spellings), or "" for none; it
// returns false when yield did.
func (m *Mux) lowerMatches(r *http.Request, yield func(string) bool) bool {
	if m.lower == nil {
		return yield(m.Pattern(r))
	}
	_, p := m.lower.Handler(m.hostMatched(r))
	switch {
	case p == "/":
		return yield(m.root)
	case p == "":
		return yield("")
	}
	for _, c := range m.lowerOf[p] {
		if !yield(c) {
			return false
		}
	}
	return true
}

// MatchesAsWritten reports whether r matches a pattern under every reading
// of its path that an upstream may route elsewhere: both of MatchesAll's,
// the decoded path without its path parameters (see WithoutParams), as
// Tomcat, Jetty and Spring route /health/..;/admin as /admin, and with its
// backslashes as slashes, with and without path parameters (see
// WithoutBackslashes), as IIS routes /health/..\admin as /admin. What
// excepts a request from a refusal: a spelling that is not the pattern's
// as written (/health/, /Health, get /health for "GET /health") loses the
// exception, and none gains it.
//
// Nor does a subtree's root written without its slash under any of them
// (/static, /static/x/..;, /static/x\.. for "GET /static/"), which
// ServeMux matches only by redirecting it to the subtree: an upstream may
// serve it as another endpoint.
func (m *Mux) MatchesAsWritten(r *http.Request) bool {
	if !m.MatchesAll(r) {
		return false
	}
	p := CleanPath(r.URL.Path)
	if redirected(m.Pattern(r), p) {
		return false
	}
	rs := readings(p)
	for _, rp := range rs[1:] {
		if rp == "" {
			continue // an earlier reading again
		}
		if pat := m.Pattern(withPath(r, rp)); pat == "" || redirected(pat, rp) {
			return false
		}
	}
	return true
}

// redirected reports whether pattern matched the cleaned path p only by
// ServeMux's redirect of a subtree's root to the subtree (p has fewer
// segments than pattern's path, which ends in a slash, {$} or a
// {name...} wildcard).
func redirected(pattern, p string) bool {
	if _, rest, ok := strings.Cut(pattern, " "); ok { // the method
		pattern = rest
	}
	if i := strings.IndexByte(pattern, '/'); i > 0 { // the host
		pattern = pattern[i:]
	}
	return strings.Count(p, "/") < strings.Count(pattern, "/")
}

// withPath returns r under the reading of its path p, decoded and
// cleaned: r itself when its path reads so already, else a copy whose
// path is p.
func withPath(r *http.Request, p string) *http.Request {
	if r.URL.Path == p && r.URL.RawPath == "" {
		return r
	}
	u := *r.URL
	u.Path, u.RawPath = p, ""
	r2 := *r
	r2.URL = &u
	return &r2
}
