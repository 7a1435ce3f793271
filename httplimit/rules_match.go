package httplimit

import (
	"cmp"
	"net/http"
	"net/netip"
	"strings"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/routes"
)

// rule is a Rule compiled for matching and keying.
type rule struct {
	name string
	// alts are the rule's alternatives (Rule.Alternatives), at least one.
	alts []alt
	// paths are the patterns of every alternative, in order: a pattern's
	// position here is the one matches returns, which keys read.
	paths []pathPattern
	plans []string // empty: every plan
	// exc are the rule's Except entries, compiled; those without paths
	// are tried before the alternatives, the others under each reading
	// (see alt.exc).
	exc   []exceptEntry
	parts []keyPart
	// clientOnly: the key is the client alone, whose store key the plan's
	// limits already use (the rule's limits have IDs of their own).
	clientOnly bool
	anyHeader  bool // HeaderFrom is HeaderFromAny
	fallback   string
	limits     []sluice.Limit // named "<rule>.<limit>"
	cost       int64          // < 0: the request's cost
	// keyPrefix starts every store key of the rule: the scope prefix,
	// "rule:", the name and "/".
	keyPrefix string
	policy    policyHeaders
}

// alt is one alternative of a rule (a Match) compiled for matching.
type alt struct {
	methods []string
	// paths are the alternative's patterns, first the position of
	// paths[0] among the rule's.
	paths   []pathPattern
	first   int
	except  []pathPattern
	hosts   []string // lower case; "*.example.com" kept as ".example.com"
	headers []HeaderMatch
	// exc are the rule's Except entries, shared by its alternatives (in
	// lower, with their paths' literals in lower case): an entry with
	// paths leaves out each reading of the path they match, as except
	// does, of a request its other fields match.
	exc []exceptEntry
	// lower holds the alternative's Paths and ExceptPaths with their
	// literals in lower case, matched against a path in lower case:
	// Express (by default) and ASP.NET Core route /V1/LOGIN as /v1/login,
	// so a client changing a path's case escapes no rule. nil without
	// Paths, ExceptPaths and paths of exc. upperLits: some literal of
	// them has an upper-case letter.
	lower     *alt
	upperLits bool
	// exceptions: the alternative has ExceptPaths, or exc an entry with
	// paths (see alt.leftOut).
	exceptions bool
}

// keyPart is one attribute of a rule's key.
type keyPart struct {
	kind string // KeyClient, KeyAPIKey, …, KeyHeader, KeyPath
	// header is the canonical header name of KeyHeader, and the name of
	// KeyQuery, KeyCookie and KeyClaim.
	header string
	// wild is, per pattern of the rule, the position of KeyPath's wildcard.
	wild []int
	// v4, v6 are KeyIP's prefix lengths.
	v4, v6 int
}

// pathReadings are the readings of one request's cleaned path that rules
// match (see rule.matches): p, decoded; escaped, when the path has
// escapes, as ServeMux reads it; plain, when p has path parameters, p
// without them (see withoutParams); slashed, when p has a backslash, p
// with its backslashes as slashes (see withoutBackslashes), and
// slashedPlain, when that has path parameters, it without them; and, once
// a rule asks for them, p, plain, slashed and slashedPlain in lower case,
// and escaped in lower case when it puts the path's segments otherwise
// (le; else its segments are p's). plainApart and escapedApart: plain,
// escaped, puts the path's segments otherwise than p (see plainApart,
// escapedApart). slashed puts them otherwise always: its readings are
// weighed apart from p's (see alt.matches).
type pathReadings struct {
	p, escaped, plain        string
	plainApart, escapedApart bool
	slashed, slashedPlain    string
	lowered                  bool
	lp, le, lplain           string
	ls, lsPlain              string
}

// newPathReadings returns the readings of the cleaned decoded path p of a
// request whose path has escapes (twoReadings) or not.
func newPathReadings(r *http.Request, p string) pathReadings {
	rd := pathReadings{p: p}
	if twoReadings(r) {
		rd.escaped = routes.CleanPath(r.URL.EscapedPath())
		rd.escapedApart = escapedApart(rd.escaped)
	}
	if plain := withoutParams(p); plain != p {
		rd.plain, rd.plainApart = plain, plainApart(p)
	}
	if s := withoutBackslashes(p); s != p {
		rd.slashed = s
		if plain := withoutParams(s); plain != s {
			rd.slashedPlain = plain
		}
	}
	return rd
}

// lower returns p, escaped when it puts the path's segments otherwise
// ("" else) and plain in lower case; it lowers them, slashed and
// slashedPlain once per request.
func (rd *pathReadings) lower() (lp, le, lplain string) {
	if !rd.lowered {
		rd.lp, rd.lplain, rd.lowered = strings.ToLower(rd.p), strings.ToLower(rd.plain), true
		if rd.escapedApart {
			rd.le = strings.ToLower(rd.escaped)
		}
		rd.ls, rd.lsPlain = strings.ToLower(rd.slashed), strings.ToLower(rd.slashedPlain)
	}
	return rd.lp, rd.le, rd.lplain
}

// matches reports whether r is one of the rule's requests, and which of
// its patterns matched (its position in ru.paths; -1 when the alternative
// that matched has none), recording the pattern's wildcards in m. The
// alternatives are tried in order, the first that matches taken.
func (ru *rule) matches(r *http.Request, rd *pathReadings, m *pathMatch) (int, bool) {
	for i := range ru.exc {
		if e := &ru.exc[i]; len(e.paths) == 0 && e.takes(r) {
			return 0, false
		}
	}
	for i := range ru.alts {
		a := &ru.alts[i]
		if pat, ok := a.matches(r, rd, m); ok {
			if pat >= 0 {
				pat += a.first
			}
			return pat, true
		}
	}
	return 0, false
}

// matches reports whether r is one of the alternative's requests, and
// which of its patterns matched (-1 when it has none), recording the
// pattern's wildcards in m. It applies when any reading of rd is its: its
// Paths match it and its exceptions do not leave it out (see
// alt.leftOut). The decoded reading is tried first, then the escaped one,
// then each without a trailing slash (see unslashed), then plain, with
// and without its trailing slash, then the decoded ones, and the escaped
// one where it puts the segments otherwise, without a format suffix (see
// matchesUnformatted); then slashed and slashedPlain so,
// under exceptions of their own (see alt.slashedLeftOut); last, the
// decoded ones in lower case, and the escaped one where it puts the
// segments otherwise (see alt.lower), then slashed and slashedPlain in
// lower case.
func (a *alt) matches(r *http.Request, rd *pathReadings, m *pathMatch) (int, bool) {
	if len(a.methods) > 0 && !methodMatches(a.methods, r.Method) {
		return 0, false
	}
	if len(a.hosts) > 0 && !hostMatches(a.hosts, r.Host) {
		return 0, false
	}
	for i := range a.headers {
		if !headerMatches(r.Header, &a.headers[i]) {
			return 0, false
		}
	}
	lo := a.leftOut(r, rd)
	if pat, ok := a.matchesReadings(rd.p, rd.escaped, rd.plain, rd.escapedApart, 0, &lo, m); ok {
		return pat, ok
	}
	var los leftOut
	if rd.slashed != "" {
		los = a.slashedLeftOut(r, rd)
		if pat, ok := a.matchesReadings(rd.slashed, "", rd.slashedPlain, false, 0, &los, m); ok {
			return pat, ok
		}
	}
	if a.lower == nil {
		return 0, false
	}
	if lp, le, lplain, ok := a.lowered(rd); ok {
		if pat, ok := a.lower.matchesReadings(lp, le, lplain, le != "", readLowered, &lo, m); ok {
			return pat, ok
		}
	}
	if ls, lsPlain, ok := a.loweredSlashed(rd); ok {
		return a.lower.matchesReadings(ls, "", lsPlain, false, readLowered, &los, m)
	}
	return 0, false
}

// slashedLeftOut is leftOut for the readings of rd.slashed (see
// alt.leftOut), which are weighed apart from p's: as a reading that puts
// the path's segments otherwise, an exception of slashed or slashedPlain
// leaves out that reading and its own respellings alone, and one of p's
// readings none of them, so that no client moves a request out of a rule
// or into one by writing a slash as a backslash. rd has a slashed
// reading.
func (a *alt) slashedLeftOut(r *http.Request, rd *pathReadings) leftOut {
	if !a.exceptions {
		return leftOut{}
	}
	hit := a.hits(r, rd.slashed, rd.slashedPlain, 0)
	if ls, lsPlain, ok := a.loweredSlashed(rd); ok {
		hit |= a.lower.hits(r, ls, lsPlain, readLowered)
	}
	return leftOut{decoded: respelled(hit, plainApart(rd.slashed))}
}

// loweredSlashed returns rd's slashed and slashedPlain in lower case, and
// whether the alternative's patterns in lower case are to be tried on
// them (see alt.lowered): rd has a slashed reading, and they or the
// patterns differ from those in their own case.
func (a *alt) loweredSlashed(rd *pathReadings) (ls, lsPlain string, ok bool) {
	if rd.slashed == "" || a.lower == nil {
		return "", "", false
	}
	rd.lower()
	return rd.ls, rd.lsPlain, rd.ls != rd.slashed || rd.lsPlain != rd.slashedPlain || a.upperLits
}

// lowered returns rd's readings in lower case, p, escaped ("" unless it
// puts the segments otherwise) and plain, and whether the alternative's
// patterns in lower case are to be tried on them: they or the patterns
// differ from those in their own case. (An escaped path has a letter
// outside its escapes only where p has it too.)
func (a *alt) lowered(rd *pathReadings) (lp, le, lplain string, ok bool) {
	lp, le, lplain = rd.lower()
	return lp, le, lplain, lp != rd.p || lplain != rd.plain || a.upperLits
}

// matchesReadings is matches for the decoded path p, the escaped path
// escaped ("" for none) and p without its parameters plain ("" for
// none), each with and without a trailing slash, of r; last, p and plain,
// and escaped where it puts the path's segments otherwise (apart: see
// escapedApart), without a trailing slash and then without a format
// suffix (see matchesUnformatted): /projects/group%2Fproj/export.json is
// /projects/group%2Fproj/export, one segment group/proj. A reading of
// flags base and its own that lo holds is not tried.
func (a *alt) matchesReadings(p, escaped, plain string, apart bool, base readingFlags, lo *leftOut, m *pathMatch) (int, bool) {
	u, _ := unslashed(p)
	ue, _ := unslashed(escaped)
	up, _ := unslashed(plain)
	readings := [...]struct {
		path    string
		escaped bool
		f       readingFlags
	}{{p, false, 0}, {escaped, true, 0}, {u, false, readUnslashed}, {ue, true, readUnslashed},
		{plain, false, readPlain}, {up, false, readPlain | readUnslashed}}
	for _, rd := range readings {
		if rd.path == "" || lo.has(rd.escaped, base|rd.f) {
			continue
		}
		if pat, ok := a.matchesPath(rd.path, rd.escaped, m); ok {
			return pat, ok
		}
	}
	for _, b := range [...]struct {
		path string
		f    readingFlags
	}{{cmp.Or(u, p), 0}, {cmp.Or(up, plain), readPlain}} {
		if lo.has(false, base|b.f|readUnslashed|readUnformatted) {
			continue
		}
		if pat, ok := a.matchesUnformatted(b.path, false, m); ok {
			return pat, ok
		}
	}
	if apart && !lo.has(true, base|readUnslashed|readUnformatted) {
		return a.matchesUnformatted(cmp.Or(ue, escaped), true, m)
	}
	return 0, false
}

// matchesUnformatted is matchesPath for the reading b, decoded or
// escaped (see pathPattern.match), without its format suffix (see
// unformatted), where the pattern it matches is one that the suffix steps
// off: a pattern that b matches as well ("/v1/", "/v1/{name}", or none:
// any path) weighed b already, so that the reading gains no request but
// those of a pattern naming the path without its suffix ("/v1/login" of
// /v1/login.json).
func (a *alt) matchesUnformatted(b string, escaped bool, m *pathMatch) (int, bool) {
	f, ok := unformatted(b)
	if !ok {
		return 0, false
	}
	pat, ok := a.matchesPath(f, escaped, m)
	if !ok || pat < 0 {
		return 0, false
	}
	var bm pathMatch // its wildcards are not read
	if a.paths[pat].match(b, escaped, &bm) {
		return 0, false
	}
	return pat, true
}

// withoutParams is routes.WithoutParams: /v1/login;jsessionid=1 and
// /v1/x/..;/login are /v1/login to Tomcat, Jetty and Spring.
func withoutParams(p string) string { return routes.WithoutParams(p) }

// withoutBackslashes is routes.WithoutBackslashes: IIS (http.sys) routes
// /api\generate and /public/..\api/generate as /api/generate.
func withoutBackslashes(p string) string { return routes.WithoutBackslashes(p) }

// unslashed is routes.Unslashed: a client adding a slash to a path escapes
// no rule of it.
func unslashed(p string) (string, bool) { return routes.Unslashed(p) }

// unformatted is routes.Unformatted: Rails routes /v1/login.json and
// /v1/login.xml as /v1/login.
func unformatted(p string) (string, bool) { return routes.Unformatted(p) }

// matchesPath reports whether the cleaned path p, escaped or not (see
// pathPattern.match), a reading of a request's path, matches the
// alternative's Paths, and which of its patterns matched (-1 when it has
// none): of several, the most specific, which ServeMux would route p to
// (see pathPattern.moreSpecific), the first of those that no other is
// more specific than.
func (a *alt) matchesPath(p string, escaped bool, m *pathMatch) (int, bool) {
	if len(a.paths) == 0 {
		return -1, true
	}
	best, last := -1, -1
	for i := range a.paths {
		if !a.paths[i].match(p, escaped, m) {
			continue
		}
		last = i
		if best < 0 || a.paths[i].moreSpecific(&a.paths[best]) {
			best = i
		}
	}
	switch {
	case best < 0:
		return 0, false
	case best != last: // m holds the wildcards of a later pattern
		a.paths[best].match(p, escaped, m)
	}
	return best, true
}

// appliesTo reports whether the rule applies to clients of the plan of
// that name.
func (ru *rule) appliesTo(plan string) bool { return plansInclude(ru.plans, plan) }

// methodMatches reports whether method is one of methods, in any case (GET
// also matching HEAD): an upstream that folds the case of a method (Django
// reads it upper-cased) serves "post" as POST, so a rule for POST limits
// it too.
func methodMatches(methods []string, method string) bool {
	for _, m := range methods {
		if strings.EqualFold(m, method) || m == http.MethodGet && strings.EqualFold(method, http.MethodHead) {
			return true
		}
	}
	return false
}

// hostOnly returns host without its port, if it has one, and without the
// dot of a fully qualified name ("api.example.com." is api.example.com, as
// DNS and the servers behind sluice take it) or any further trailing dots
// (which name no other host). An IPv6 address is a host with a port only
// in brackets ("[2001:db8::1]:8080"): a text that is an IP address whole,
// as net/url's Hostname gives one ("2001:db8::1"), has none.
func hostOnly(host string) string {
	if i := strings.LastIndexByte(host, ':'); i >= 0 && !strings.HasSuffix(host, "]") && !bareIPv6(host, i) {
		host = host[:i]
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	for len(host) > 1 && host[len(host)-1] == '.' {
		host = host[:len(host)-1]
	}
	return host
}

// bareIPv6 reports whether host, whose last ':' is at i, is an IP address
// whole. Only a text of two colons or more, not in brackets, may be one, so
// that a name or a bracketed address and its port are read without
// allocating.
func bareIPv6(host string, i int) bool {
	if host[0] == '[' || strings.IndexByte(host, ':') == i {
		return false
	}
	_, err := netip.ParseAddr(host)
	return err == nil
}

func hostMatches(hosts []string, host string) bool {
	h := hostOnly(host)
	for _, want := range hosts {
		if want[0] == '.' {
			if len(h) > len(want) && strings.EqualFold(h[len(h)-len(want):], want) {
				return true
			}
		} else if strings.EqualFold(h, want) {
			return true
		}
	}
	return false
}

// headerMatches reports whether h carries the header hm names, and, when
// hm has a value, one value equal to it but for the whitespace around it
// (see trimValue): a value that reaches sluice over HTTP/2 as " 1" or
// "1\t" reaches an upstream over HTTP/1.1 as 1 (RFC 9110 §5.5), so a
// client adding whitespace escapes no rule written for its requests. It
// allocates nothing.
func headerMatches(h http.Header, hm *HeaderMatch) bool {
	vs, ok := h[hm.Name]
	if !ok {
		return false
	}
	if hm.Value == "" {
		return true
	}
	for _, v := range vs {
		if trimValue(v) == hm.Value {
			return true
		}
	}
	return false
}
