package routes

import (
	"iter"
	"maps"
	"net/http"
	"net/url"
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

// lowerPath returns the ServeMux pattern p with the literal segments of
// its path in lower case as ServeMux reads them (see lowerSegment): its
// method, host and wildcards' names as they are. A wildcard's name is no
// part of what a pattern matches, and names that differ only in case
// would be one name lowered ("/bulk/{A}/{a}"). It is p itself when its
// literals are in lower case so read.
func lowerPath(p string) string {
	_, j := HostSpan(p)
	if strings.IndexByte(p[j:], '%') < 0 && strings.ToLower(p[j:]) == p[j:] {
		return p
	}
	segs, lowered := strings.Split(p[j:], "/"), false
	for i, seg := range segs {
		if !strings.HasPrefix(seg, "{") { // ServeMux takes "{" only at a wildcard's start
			if l := lowerSegment(seg); l != seg {
				segs[i], lowered = l, true
			}
		}
	}
	if !lowered {
		return p
	}
	return p[:j] + strings.Join(segs, "/")
}

// lowerSegment returns the segment seg of an escaped path (a request's,
// or a pattern's literal) in lower case as ServeMux reads it, one segment
// unescaped: where seg has escapes, unescaped, lowered and escaped again
// ("%41pi" is "api", "Admin%2FY" "admin%2Fy", "caf%C3%89" "caf%C3%A9"),
// else its text lowered. It is seg itself when seg so read is in lower
// case.
func lowerSegment(seg string) string {
	if strings.IndexByte(seg, '%') >= 0 {
		if u, err := url.PathUnescape(seg); err == nil {
			if l := strings.ToLower(u); l != u {
				return url.PathEscape(l)
			}
			return seg
		}
	}
	return strings.ToLower(seg)
}

// lowerEscaped returns the cleaned escaped path e with each segment in
// lower case as ServeMux reads it (see lowerSegment).
func lowerEscaped(e string) string {
	segs := strings.Split(e, "/")
	for i, seg := range segs {
		segs[i] = lowerSegment(seg)
	}
	return strings.Join(segs, "/")
}

// lowered is a pattern of m.lower: the patterns, as configured, whose
// paths in lower case are its route (see Normal), and its method, host and
// path's segments, which ServeMux judges its precedence by (see precedes).
type lowered struct {
	configured   []string
	method, host string
	segs         []pathSeg
}

// handleLower adds the registered pattern p to m.lower, in lower case.
// m.lower is made when a first pattern has an upper-case letter, written
// or escaped, in its path's literals (see lowerPath); until then m.mux
// serves for it.
func (m *Mux) handleLower(p string) {
	if m.lower != nil {
		m.addLower(p)
		return
	}
	if lowerPath(p) == p {
		return
	}
	m.lowerOf, m.lowerAt = map[string]*lowered{}, map[string]string{}
	for _, q := range slices.Sorted(maps.Keys(m.registered)) {
		if !matchesEverything(q) {
			m.addLower(q)
		}
	}
}

// addLower adds the registered pattern p to m.lower in lower case. A
// pattern whose path in lower case is the route (see Normal) of one added
// before stands beside that one: "POST /Items/{id}" beside "POST
// /items/{key}", "/Bulk/" beside "/bulk/{rest...}". Another goes into the
// first ServeMux of m.lower that takes it beside the patterns there, or
// into one made for it: "POST /API/{version}/bulk" and "POST /api/v2/{op}",
// which no ServeMux holds together in lower case, are in two. It takes time
// in the ServeMuxes tried, not in the patterns added before.
func (m *Mux) addLower(p string) {
	lp, c := lowerPath(p), m.asConfigured(p)
	route := Normal(lp)
	if at, ok := m.lowerAt[route]; ok {
		m.lowerOf[at].configured = append(m.lowerOf[at].configured, c)
		return
	}
	i := slices.IndexFunc(m.lower, func(l lowerMux) bool { return handle(l.mux, lp) == nil })
	if i < 0 {
		l := lowerMux{mux: http.NewServeMux(), lits: map[litAt]bool{}}
		l.mux.Handle("/", http.NotFoundHandler())
		if handle(l.mux, lp) != nil {
			return // not so: m.mux took p beside "/"
		}
		i, m.lower = len(m.lower), append(m.lower, l)
	}
	method, host, path := splitPattern(lp)
	w := &lowered{configured: []string{c}, method: method, host: host, segs: segments(path)}
	m.lowerAt[route], m.lowerOf[lp] = lp, w
	m.lower[i].add(w.segs)
}

// lowerMux is a ServeMux of m.lower, with where the paths of its patterns
// (but its catch-all "/") have a first literal segment, so that a path
// none of them may match is not read there: lits holds, for each pattern
// with one, that segment (its index among the path's segments, and its
// text unescaped and in lower case, "" for {$}), and upTo the largest
// index there; anyPath is whether a pattern has none ("/{a}/{b}").
type lowerMux struct {
	mux     *http.ServeMux
	lits    map[litAt]bool
	upTo    int
	anyPath bool
}

// litAt is a literal segment of a path at its index among the segments.
type litAt struct {
	at  int
	lit string
}

// add records where the path of a pattern of l, its segments segs (see
// segments), has its first literal segment.
func (l *lowerMux) add(segs []pathSeg) {
	for i, s := range segs {
		if !s.wild && !s.rest {
			l.lits[litAt{i, s.lit}], l.upTo = true, max(l.upTo, i)
			return
		}
	}
	l.anyPath = true
}

// mayMatch reports whether some pattern of l but its catch-all may match
// the path of u as ServeMux reads it, or with a trailing slash added (its
// redirect to a subtree or {$}): the path's segment at the index of a
// pattern's first literal segment is that literal, as each segment before
// it fills a wildcard. A ServeMux matched only by its catch-all allocates,
// to try the path with that slash. It allocates nothing, and is true for
// an escaped path (u.RawPath set), whose segments are not u.Path's.
func (l *lowerMux) mayMatch(u *url.URL) bool {
	if l.anyPath || u.RawPath != "" {
		return true
	}
	rest := u.Path[1:]
	for i := 0; i <= l.upTo; i++ {
		seg, next, more := strings.Cut(rest, "/")
		if l.lits[litAt{i, seg}] {
			return true
		}
		if !more {
			return l.lits[litAt{i + 1, ""}] // {$}, with the slash added
		}
		rest = next
	}
	return false
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
// trailing slash (see Unslashed), and in lower case with and without
// one, ServeMux's reading too where it puts the path's segments otherwise
// than the decoded path ("/API/admin%2Fy/" is one segment admin/y below
// /api/). In lower case a path is read against the patterns' paths with
// their literals in lower case as ServeMux reads them, unescaped
// ("/%41pi/bulk" is /api/bulk; their wildcards' names as written), not
// against the patterns as written. There each pattern whose path in lower
// case is the route (see Normal) matched is yielded ("POST /Items/{id}"
// and "POST /items/{key}" for /ITEMS/7): of the patterns in lower case
// that the path matches, the one ServeMux would route it to ("GET
// /api/Health", not "GET /api/", for /api/health), or where ServeMux
// cannot hold them together, each that no other takes precedence over
// ("POST /API/{version}/bulk" and "POST /Api/v2/{op}" for /api/v2/bulk).
// A spelling that is another's is not read again, so a request spelled
// as ServeMux routes it, its path clean and in lower case beside patterns
// in lower case, is read once. Last, the decoded spellings, and
// ServeMux's reading where it puts the path's segments otherwise, without
// a trailing slash and then without a format suffix (see Unformatted), in
// their case and in lower case, each yielding only a pattern that the
// suffix steps off (see stepsOff): /v1/login.json yields "POST
// /v1/login", while /v1/openapi.json yields no "/v1/" for it, which the
// path with its suffix is read under already. Methods are case-sensitive
// (RFC 9110 §9.1), as ServeMux matches them, and some upstreams (Django)
// take a method in any case: r is read with its method as sent, then,
// where that is not in upper case, with it in upper case ("purge /cache"
// for purge /cache; "POST /bulk" for post /bulk). A pattern may be
// yielded more than once. The zero Mux yields nothing.
func (m *Mux) Spellings(r *http.Request) iter.Seq[string] {
	return func(yield func(string) bool) {
		if m == nil || m.mux == nil {
			return
		}
		m.spellings(r, yield)
	}
}

// spellings is Spellings' walk, of r's method as sent and then, where it
// is not, in upper case; it returns false when yield did.
func (m *Mux) spellings(r *http.Request, yield func(string) bool) bool {
	if up := strings.ToUpper(r.Method); up != r.Method {
		if !m.spellingsOf(r, yield) {
			return false
		}
		r2 := *r
		r2.Method = up
		r = &r2
	}
	return m.spellingsOf(r, yield)
}

// spellingsOf is Spellings' walk of r's path, for r's method as it is; it
// returns false when yield did.
func (m *Mux) spellingsOf(r *http.Request, yield func(string) bool) bool {
	if !yield(m.Pattern(r)) {
		return false
	}
	if r.URL == nil {
		return true
	}
	if d := Decoded(r); d != nil && (!yield(m.Pattern(d)) || !m.escapedSpellings(r, yield)) {
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
		if !m.lowerSpellings(r, rp, yield) {
			return false
		}
	}
	return m.unformattedSpellings(r, &rs, yield)
}

// unformattedSpellings is spellings' last step, for the readings rs of
// r's decoded and cleaned path (see readings), and ServeMux's reading of
// its escaped path where it puts the path's segments otherwise (see
// segmentsApart): each, without a trailing slash, without its format
// suffix (see Unformatted), in its case and in lower case, yielding only
// the patterns that the suffix steps off (see stepsOff). It returns false
// when yield did.
func (m *Mux) unformattedSpellings(r *http.Request, rs *[4]string, yield func(string) bool) bool {
	for _, rp := range rs {
		if rp == "" {
			continue // an earlier reading again
		}
		if !m.unformatted(r, rp, false, yield) {
			return false
		}
	}
	if r.URL.RawPath == "" {
		return true
	}
	if e := CleanPath(r.URL.EscapedPath()); segmentsApart(e, r.URL.Path) {
		return m.unformatted(r, e, true, yield)
	}
	return true
}

// unformatted is unformattedSpellings' step for the reading p of r's
// path, decoded or (escaped) ServeMux's reading of the escaped path: p
// without a trailing slash and without its format suffix, in its case and
// in lower case ("/projects/group%2Fproj/export.json" is
// /projects/group%2Fproj/export, one segment group/proj). It returns false
// when yield did.
func (m *Mux) unformatted(r *http.Request, p string, escaped bool, yield func(string) bool) bool {
	if u, ok := Unslashed(p); ok {
		p = u
	}
	f, ok := Unformatted(p)
	if !ok {
		return true
	}
	at, lower := withPath, strings.ToLower
	if escaped {
		at, lower = withEscapedPath, lowerEscaped
	}
	steppedOff := func(pattern string) bool { return !stepsOff(pattern, f) || yield(pattern) }
	if !steppedOff(m.Pattern(at(r, f))) {
		return false
	}
	lf := lower(f)
	return lf == f && m.lower == nil || m.inLowerCase(at(r, lf), steppedOff)
}

// lowerSpellings is spellings' step for the reading rp of r's path in
// lower case, with and without a trailing slash (see inLowerCase; but
// where rp and the patterns are in lower case already, and read so
// before). It returns false when yield did.
func (m *Mux) lowerSpellings(r *http.Request, rp string, yield func(string) bool) bool {
	lp := strings.ToLower(rp)
	if lp == rp && m.lower == nil {
		return true // read above, in the same case
	}
	if !m.inLowerCase(withPath(r, lp), yield) {
		return false
	}
	u, ok := Unslashed(lp)
	return !ok || m.inLowerCase(withPath(r, u), yield)
}

// escapedSpellings is spellings' step for ServeMux's reading of r's
// escaped path where it puts the path's segments otherwise than the
// decoded path does (see segmentsApart): without a trailing slash, and in
// lower case with and without one ("/API/admin%2Fy/" is one segment
// admin/y below /api/). It returns false when yield did.
func (m *Mux) escapedSpellings(r *http.Request, yield func(string) bool) bool {
	e := CleanPath(r.URL.EscapedPath())
	if !segmentsApart(e, r.URL.Path) {
		return true // its segments are the decoded path's, read so
	}
	if u, ok := Unslashed(e); ok && !yield(m.Pattern(withEscapedPath(r, u))) {
		return false
	}
	le := lowerEscaped(e)
	if le == e && m.lower == nil {
		return true // read above, in the same case
	}
	if !m.inLowerCase(withEscapedPath(r, le), yield) {
		return false
	}
	u, ok := Unslashed(le)
	return !ok || m.inLowerCase(withEscapedPath(r, u), yield)
}

// segmentsApart reports whether ServeMux reads the cleaned escaped path e
// by other segments than the decoded path, decoded, has once cleaned: a
// segment of e keeps an escaped slash ("admin%2Fy"), or is an escaped dot
// segment ("%2E%2E"), which cleaning the decoded path resolves, or
// cleaning e removed one ("/x%2Fy/../bulk/" is "/bulk/" escaped, but
// "/x/bulk/" decoded).
func segmentsApart(e, decoded string) bool {
	if u, err := url.PathUnescape(e); err == nil && u != CleanPath(decoded) {
		return true
	}
	for seg := range strings.SplitSeq(e[1:], "/") {
		if strings.IndexByte(seg, '%') < 0 {
			continue
		}
		if u, err := url.PathUnescape(seg); err == nil && (strings.IndexByte(u, '/') >= 0 || u == "." || u == "..") {
			return true
		}
	}
	return false
}

// inLowerCase yields the patterns, as configured, that the request r,
// whose path is in lower case, matches against the patterns' paths with
// their literals in lower case, or "" for none: m.mux's where those are
// the patterns as written, else m.lower's (see lowerMatches). It returns
// false when yield did.
func (m *Mux) inLowerCase(r *http.Request, yield func(string) bool) bool {
	if m.lower == nil {
		return yield(m.Pattern(r))
	}
	return m.lowerMatches(r, yield)
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

// lowerMatches yields the patterns, as configured, that the request r,
// whose path is in lower case, matches in lower case (see Spellings), or
// "" for none; it returns false when yield did. Of m.lower's ServeMuxes,
// each routes r to the most specific of its patterns that r matches, and
// of those, each that no other takes precedence over (see precedes) is
// yielded: the pattern ServeMux would route r to, were they all in one,
// or each of those that it cannot hold together.
func (m *Mux) lowerMatches(r *http.Request, yield func(string) bool) bool {
	r = m.hostMatched(r)
	var buf [4]*lowered
	held, miss := buf[:0], ""
	for i := range m.lower {
		l := &m.lower[i]
		if i > 0 && !l.mayMatch(r.URL) {
			continue
		}
		_, p := l.mux.Handler(r)
		if w := m.lowerOf[p]; w != nil {
			held = append(held, w)
		} else if i == 0 {
			miss = p
		}
	}
	if len(held) == 0 {
		switch miss {
		case "/":
			return yield(m.root)
		case "":
			return yield("")
		}
		return true
	}
	for _, w := range held {
		if len(held) > 1 && slices.ContainsFunc(held, func(v *lowered) bool { return precedes(v, w) }) {
			continue
		}
		for _, c := range w.configured {
			if !yield(c) {
				return false
			}
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

// withEscapedPath returns a copy of r whose path is the escaped path e,
// which ServeMux reads by its segments, each unescaped.
func withEscapedPath(r *http.Request, e string) *http.Request {
	u := *r.URL
	u.RawPath = e
	if p, err := url.PathUnescape(e); err == nil {
		u.Path = p
	}
	r2 := *r
	r2.URL = &u
	return &r2
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
