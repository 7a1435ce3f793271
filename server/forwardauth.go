package server

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/degrade"
	"github.com/sluice-dev/sluice/httplimit"
)

// handleForwardAuth decides a request that a front proxy describes
// (describe): Traefik and Caddy send X-Forwarded-Method/-Uri/-Host/-For,
// nginx's auth_request X-Original-Method/-URI (set in its config),
// ingress-nginx's auth-url X-Original-Method/-URL. The described host is
// X-Forwarded-Host's or X-Original-URL's, none without them (the request's
// own Host is sluice's). 2xx admits, sent once a leaky-bucket queue's
// delay has passed, the write deadline moved past the wait
// (waitPastWriteTimeout); a refusal has the configured deny status (429,
// or 403 for nginx) and the same RateLimit headers, Retry-After and
// problem body a proxied request would get; a
// refusal by the global limits alone under global_status 503 is a 503 as
// the proxy answers it, or the deny status when that is not 429, and
// carries Sluice-Refusal: temporary-reduced-capacity either way. A
// request that the degradation level sheds (state.shed, as the proxy sheds
// it) is refused before any decision and spends nothing (shedForwardAuth).
// A description the decision API would refuse (validMethod,
// describedTarget, validHost), descriptions that differ, and none of the
// URI are a 400 problem, and spend nothing. A POST
// that carries a method override (a header, or the _method of the URI's
// query) is judged as the method it names (judgeOverride), or refused with
// a 400 when that would judge it less strictly than a POST. So is a
// request with a header sluice reads spelled otherwise (otherSpellingIn:
// X_Api_Key or X.Api.Key for X-Api-Key), which the front proxy passes on
// to an upstream that may read it as the one sluice reads: forward-auth
// cannot remove it.
//
// Its callers (the front proxies) hold the check scope; the request's
// Authorization and X-API-Key are the described client's. Its body is never
// read: rules keyed by a field of the body take their fallback.
func (s *Server) handleForwardAuth(w http.ResponseWriter, r *http.Request, _ caller) {
	st := s.state.Load()
	// The request the front proxy describes: r with another method, URL and
	// host. A shallow copy is enough: the middleware only reads it, and
	// r.Clone's deep copy of every header cost more than the decision.
	orig := new(http.Request)
	*orig = *r
	// It describes the request and carries none of its body: a rule keyed
	// by a field of the body takes its fallback, whatever the front proxy
	// sends along, the query unread (a nil Body: see httplimit's form:
	// keys), since the upstream may read the body's field instead.
	orig.Body, orig.ContentLength = nil, 0
	d, err := describe(r.Header)
	if err != nil {
		writeJSONProblem(w, http.StatusBadRequest, "Bad Request", err.Error())
		return
	}
	orig.Method, orig.URL, orig.RequestURI, orig.Host = d.method, d.url, d.uri, d.host
	if !d.hostDescribed && st.namesHost {
		s.warnings.Warn(r.Context(), s.log, "forward-auth: no X-Forwarded-Host, so what names a host (rules, costs, exemptions, degradation classes) decides the request as one to no host; have the proxy send it (nginx: proxy_set_header X-Forwarded-Host $host;)")
	}
	if name := otherSpellingIn(r.Header, st.mw.RequestHeaders()); name != "" {
		writeJSONProblem(w, http.StatusBadRequest, "Bad Request", fmt.Sprintf("%s is a header sluice reads (an API key, token, user or plan header, or a rule's), spelled otherwise: an upstream that reads \"_\" or \".\" as \"-\" (Rack, WSGI, PHP behind FastCGI) would act on a value sluice did not judge; have the front proxy drop headers with underscores or dots (nginx does by default: underscores_in_headers off, ignore_invalid_headers on)", name))
		return
	}
	other, err := judgeOverride(st.cfg, orig, r.Header)
	if err != nil {
		writeJSONProblem(w, http.StatusBadRequest, "Bad Request", err.Error())
		return
	}
	level := s.ctl.Level()
	refuse, why := st.shed(level, orig)
	if !refuse && other != nil {
		refuse, why = st.shed(level, other) // a class of either reading
	}
	if refuse {
		s.shedForwardAuth(w, orig, st, level, why)
		return
	}
	mw := st.deciderAt(level)
	res, err := mw.Decide(orig)
	if err != nil {
		if r.Context().Err() != nil {
			return // the proxy gave up on the request: no one to answer, nothing failed
		}
		s.warnings.Warn(r.Context(), s.log, "forward-auth: no decision, admitting", "err", err)
		w.WriteHeader(http.StatusOK)
		return
	}
	defer mw.Discard(res)
	if !res.Exempt && !res.Decision.Allowed {
		// Caddy and Traefik hand the refusal to the client as it is: a
		// browser's script reads it if response.cors lets its origin.
		if allow := st.cors.allowOf(orig); allow != "" {
			st.cors.annotate(w.Header(), allow, st.cors.expose, false)
		}
		// A refusal by the global limits alone, with global_status 503,
		// is the service's capacity: marked as a shed request is, so that
		// nginx, refused with the deny status, answers it 503 as well.
		if mw.RefusedForCapacity(res) {
			w.Header().Set(refusalHeader, refusalReducedCapacity)
		}
		mw.RefuseWithStatus(w, withVia(orig, "forward-auth"), res, st.cfg.Response.DenyStatus)
		return
	}
	mw.WriteHeaders(w.Header(), res)
	if d := res.Decision.Delay; d > 0 {
		waitPastWriteTimeout(w, d, st.cfg.Connections.WriteTimeout)
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
		case <-r.Context().Done():
			return
		}
	}
	w.WriteHeader(http.StatusOK)
}

// shedForwardAuth answers forward-auth's request for orig, which a
// degradation level shed (why: state.shed's sentence), as the proxy
// answers it, with Sluice-Refusal: temporary-reduced-capacity: 503, or
// response.deny_status when it is not the default 429 (a front proxy
// that passes only some statuses, as nginx's auth_request passes only 401
// and 403, refuses with it, its configuration telling a shed from a
// refusal by that header). It is counted and logged (noteShed).
func (s *Server) shedForwardAuth(w http.ResponseWriter, orig *http.Request, st *state, level degrade.Level, why string) {
	status := http.StatusServiceUnavailable
	if deny := st.cfg.Response.DenyStatus; deny != http.StatusTooManyRequests {
		status = deny
	}
	if allow := st.cors.allowOf(orig); allow != "" {
		st.cors.annotate(w.Header(), allow, st.cors.expose, false)
	}
	w.Header().Set(refusalHeader, refusalReducedCapacity)
	s.reducedCapacityWithStatus(w, st, why, status)
	s.noteShed(shedViaForwardAuth, level, orig.Method, orig.URL.Path, requestID(orig.Header), status)
}

// description is the request a front proxy describes to forward-auth.
type description struct {
	method string   // validMethod's, GET when no header names one
	uri    string   // the request URI, without its fragment (describedTarget)
	url    *url.URL // uri parsed
	// host is the host the front proxy routes the request by
	// (describedHost), "" for none; hostDescribed reports whether a header
	// described it (X-Original-URL describes a request without Host as one
	// to no host).
	host          string
	hostDescribed bool
}

// describe reads the request that h describes: its method from
// X-Forwarded-Method or X-Original-Method, its request URI from
// X-Forwarded-Uri, X-Original-URI or the path and query of X-Original-URL
// (ingress-nginx's), and its host from X-Forwarded-Host or X-Original-URL
// (describedHost). Where two headers describe one attribute they must
// agree (described). It returns an error, the detail of a 400, for
// descriptions that differ, for no URI at all (nothing to judge: the front
// proxy is not configured to describe the request), and for one the
// decision API would refuse (validMethod, describedTarget, validHost).
//
// The URI is checked as the decision API checks its path (describedTarget:
// no fragment, well-formed escapes). "*" (OPTIONS's whole-server target)
// names no path to limit; an absolute-form target ("http://host/path",
// which a client may send a proxy) is judged by its path, "/" when it has
// none. Its length is bounded by the listener's header bound, not by the
// decision API's 2,048-byte path: a proxy's request line is often longer.
// Every check (exemptions, costs, rules) judges both readings of the path
// that the proxy's upstream may route by (judgedReadings): decoded, its dot
// segments resolved (nginx's $uri, Caddy's and Traefik's path matchers),
// and escaped as ServeMux reads it ("/files/a%2Fb", one segment, which
// nginx's proxy_pass without a URI, Caddy and Traefik pass on as sent),
// encoded dot segments ("%2e%2e", "..%2F") resolved in both: no encoding
// makes a request exempt or cheaper. A path that reads three ways is an
// error.
func describe(h http.Header) (description, error) {
	hosts, uris, hostless, err := originalURLs(h)
	if err != nil {
		return description{}, err
	}
	method, ok := described(h["X-Forwarded-Method"], h["X-Original-Method"])
	uri, ok2 := described(h["X-Forwarded-Uri"], h["X-Original-Uri"], uris)
	if !ok || !ok2 {
		return description{}, errors.New("X-Forwarded-Method/-Uri and X-Original-Method/-URI describe different requests (X-Original-URL's path and query among the URIs): the front proxy passed on a client's own; have it clear the headers it does not set")
	}
	if uri == "" {
		return description{}, errors.New("no X-Forwarded-Uri, X-Original-URI or X-Original-URL: the front proxy describes no request to judge; have it send the request's URI (nginx: proxy_set_header X-Original-URI $request_uri;)")
	}
	// One that fails is a client's own header passed on, or a request
	// Caddy and Traefik accept and nginx does not (a method in lower
	// case, OPTIONS *): the 400 (a 500 through nginx) keeps from the API
	// only requests with nothing to limit them by.
	if err := validMethod(method); err != nil {
		return description{}, fmt.Errorf("X-Forwarded-Method / X-Original-Method: %w", err)
	}
	d := description{method: firstOf(method, http.MethodGet)}
	if d.uri, d.url, err = describedTarget(uri); err != nil {
		return description{}, errors.New("X-Forwarded-Uri / X-Original-URI / X-Original-URL is not a request URI with an absolute path")
	}
	if !judgedReadings(d.url) {
		return description{}, fmt.Errorf("X-Forwarded-Uri / X-Original-URI / X-Original-URL: %w", errThreeReadings)
	}
	if d.host, d.hostDescribed, err = describedHost(h, hosts, hostless); err != nil {
		return description{}, err
	}
	return d, nil
}

// described returns the value that each list of values (a header's lines,
// one list a header) gives of one attribute of the described request (""
// when none does), and false when two differ. A front proxy sets one of the
// headers and passes a client's others on (nginx's auth_request and
// ingress-nginx's auth-url pass every header of the client's), so a
// description that differs from another is a client's: neither is
// believed.
func described(lists ...[]string) (string, bool) {
	v := ""
	for _, list := range lists {
		for _, s := range list {
			switch {
			case s == "":
			case v == "":
				v = s
			case s != v:
				return "", false
			}
		}
	}
	return v, true
}

func firstOf(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}

// judgeOverride sets orig, a described POST that carries a method override
// (methodOverrideOf: a header, or the _method of its query), to the method
// cfg judges it by (overrideJudged), and returns the request as the other
// method beside it, for its degradation classes: the POST it is when orig
// is judged as the method named, the method named when it is judged as
// the POST. It returns nil, orig unchanged, for any other request.
// Frameworks serve such a POST as the method named (Symfony and Laravel
// whatever their configuration, ASP.NET Core, Rack and Express when
// configured to), and the front proxy passes the header on: the client
// must pay what that method costs, and the classes of either method shed
// it, as the reverse proxy sheds a _method (paramOverride).
func judgeOverride(cfg *config.Config, orig *http.Request, h http.Header) (other *http.Request, err error) {
	judged, named, err := overrideJudged(cfg, orig.Method, orig.URL.RawQuery, h)
	if err != nil || named == "" {
		return nil, err
	}
	p := *orig
	if judged == orig.Method {
		p.Method = named
	} else {
		orig.Method = judged
	}
	return &p, nil
}

// overrideJudged returns the method by which cfg judges a described
// request of method, whose headers are h and whose query string is query,
// and the method its override names ("" when none names another). A POST
// whose override names another method is judged as the method named when
// cfg judges that at least as strictly as a POST (judgedAsStrictly), and
// as the POST it is when cfg judges the POST at least as strictly as the
// method named (it is charged at least as much); the error, the detail of
// a 400, is for one that neither judges alone, and for overrides that name
// two methods or no method. Any other request is judged by its method. It
// allocates nothing for a request that is no POST.
func overrideJudged(cfg *config.Config, method, query string, h http.Header) (judged, named string, err error) {
	if method != http.MethodPost {
		return method, "", nil // only a POST is overridden
	}
	m, err := methodOverrideOf(h, query)
	if err != nil {
		return "", "", err
	}
	if m == "" || m == http.MethodPost {
		return method, "", nil
	}
	if !judgedAsStrictly(cfg, m, http.MethodPost) {
		if judgedAsStrictly(cfg, http.MethodPost, m) {
			return method, m, nil // the POST pays at least what the method named would
		}
		return "", "", fmt.Errorf("a POST with a method override to %s (X-HTTP-Method-Override, X-HTTP-Method or X-Method-Override, or the query's _method), which upstreams that honour it serve as a %s: the configuration judges some request more strictly as a POST than as a %s (a cost, rule or exemption by method), so neither method alone judges it; have the front proxy drop those headers, and send the %s itself rather than _method", m, m, m, m)
	}
	return m, m, nil
}

// methodOverrideOf returns the method that h's method overrides
// (methodOverride) and the query string query's methodParam parameters
// name, in upper case as Symfony and Rack read it; "" when none does, and
// an error when two name different methods or the one named is not a
// method. The description carries no body: a _method of the body is the
// upstream's alone.
func methodOverrideOf(h http.Header, query string) (string, error) {
	var o overrides
	for name, vs := range h {
		if methodOverride(name) {
			for _, v := range vs {
				o.add(v)
			}
		}
	}
	o.addQuery(query)
	return o.named("X-HTTP-Method-Override, X-HTTP-Method, X-Method-Override and the query's _method")
}

// judgedAsStrictly reports whether cfg judges every request as the method
// strict at least as strictly as it judges it as the method lax: charged
// at least as much, by every rule that applies to it as lax (counted under
// the same key), and exempt only when it is as lax. So it is when
//   - no plan's cost names lax, and every cost that names strict is at
//     least what an endpoint of no method costs (1, or the pattern's), for
//     a pattern of a method is more specific than one of no method and
//     takes its place;
//   - every alternative of a rule whose methods match lax matches strict,
//     and of a rule keyed by its route or a path wildcard every
//     alternative matches both or neither (so the first that matches is
//     the same);
//   - no entry of a rule's except matches strict but not lax;
//   - no exempt route names strict but not lax.
//
// Degradation classes are not weighed here.
func judgedAsStrictly(cfg *config.Config, strict, lax string) bool {
	for _, ru := range cfg.Rules {
		alts := ru.Alternatives()
		// A rule keyed by its route or a path wildcard counts a request
		// under the key of the first alternative it matches: one that
		// applies as lax must count it as strict under the same key. One
		// that never applies as lax only adds a count as strict.
		byAlternative := slices.ContainsFunc(ru.Key, func(k string) bool {
			return k == httplimit.KeyRoute || strings.HasPrefix(k, httplimit.KeyPath)
		}) && slices.ContainsFunc(alts, func(a httplimit.Match) bool {
			return len(a.Methods) == 0 || ruleMethodMatches(a.Methods, lax)
		})
		for _, a := range alts {
			if len(a.Methods) == 0 {
				continue
			}
			asLax, asStrict := ruleMethodMatches(a.Methods, lax), ruleMethodMatches(a.Methods, strict)
			if asLax && !asStrict || byAlternative && asLax != asStrict {
				return false
			}
		}
		for _, e := range ru.Except {
			if ruleMethodMatches(e.Methods, strict) && !ruleMethodMatches(e.Methods, lax) {
				return false
			}
		}
	}
	for _, p := range cfg.Exempt {
		if patternNamesMethod(p, strict) && !patternNamesMethod(p, lax) {
			return false
		}
	}
	if cfg.Policy == nil {
		return true
	}
	for _, pl := range cfg.Policy.Plans {
		least := int64(1) // the most an endpoint of no method costs
		for p, c := range pl.Costs {
			if patternMethod(p) == "" {
				least = max(least, c)
			}
		}
		for p, c := range pl.Costs {
			if patternNamesMethod(p, lax) || patternNamesMethod(p, strict) && c < least {
				return false
			}
		}
	}
	return true
}

// namesMethod reports whether cfg judges any request by its method: a
// rule's methods (of its match or its except), or an exempt route, a
// plan's cost or a degradation class whose pattern names a method.
// Without, every method is judged and shed alike (judgedAsStrictly holds
// both ways).
func namesMethod(cfg *config.Config) bool {
	for _, ru := range cfg.Rules {
		hasMethods := func(m httplimit.Match) bool { return len(m.Methods) > 0 }
		if slices.ContainsFunc(ru.Alternatives(), hasMethods) || slices.ContainsFunc(ru.Except, hasMethods) {
			return true
		}
	}
	named := func(p string) bool { return patternMethod(p) != "" }
	d := &cfg.Degradation
	if slices.ContainsFunc(cfg.Exempt, named) || slices.ContainsFunc(d.Expensive, named) ||
		slices.ContainsFunc(d.Critical, named) || slices.ContainsFunc(d.Health, named) {
		return true
	}
	if cfg.Policy != nil {
		for _, pl := range cfg.Policy.Plans {
			for p := range pl.Costs {
				if named(p) {
					return true
				}
			}
		}
	}
	return false
}

// ruleMethodMatches reports whether a rule's methods match method, as the
// middleware matches them: in any case, GET also matching HEAD.
func ruleMethodMatches(methods []string, method string) bool {
	return slices.ContainsFunc(methods, func(r string) bool { return patternMethodMatches(r, method) })
}

// patternNamesMethod reports whether the ServeMux pattern p names a method
// that matches method (patternMethodMatches).
func patternNamesMethod(p, method string) bool {
	pm := patternMethod(p)
	return pm != "" && patternMethodMatches(pm, method)
}

// patternMethodMatches reports whether the method pm of a pattern or rule
// matches a request's method: in any case, GET also matching HEAD, as
// ServeMux and the middleware match it (a superset of an exempt route's
// exact match).
func patternMethodMatches(pm, method string) bool {
	return strings.EqualFold(pm, method) || strings.EqualFold(pm, http.MethodGet) && strings.EqualFold(method, http.MethodHead)
}

// patternMethod returns the method of the ServeMux pattern p, "" when it
// names none.
func patternMethod(p string) string {
	if i := strings.IndexAny(p, " \t"); i > 0 {
		return p[:i]
	}
	return ""
}
