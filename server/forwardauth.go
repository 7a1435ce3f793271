package server

import (
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/sluice-dev/sluice/degrade"
	"github.com/sluice-dev/sluice/internal/routes"
)

// handleForwardAuth decides a request that a front proxy describes: Traefik
// and Caddy send X-Forwarded-Method/-Uri/-Host/-For, nginx's auth_request
// X-Original-Method/-URI (set in its config). The described host is
// X-Forwarded-Host's, none without it (the request's own Host is
// sluice's). 2xx admits; a refusal has the
// configured deny status (429, or 403 for nginx) and the same RateLimit
// headers, Retry-After and problem body a proxied request would get; a
// refusal by the global limits alone under global_status 503 is a 503 as
// the proxy answers it, or the deny status when that is not 429, and
// carries Sluice-Refusal: temporary-reduced-capacity either way. A
// request that the degradation level sheds (state.shed, as the proxy sheds
// it) is refused before any decision and spends nothing (shedForwardAuth).
// A description the decision API would refuse (validMethod, absolutePath,
// validHost) is a 400 problem, and spends nothing.
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
	// sends along.
	orig.Body, orig.ContentLength = http.NoBody, 0
	method, ok := described(r.Header, "X-Forwarded-Method", "X-Original-Method")
	uri, ok2 := described(r.Header, "X-Forwarded-Uri", "X-Original-Uri")
	if !ok || !ok2 {
		writeJSONProblem(w, http.StatusBadRequest, "Bad Request",
			"X-Forwarded-Method/-Uri and X-Original-Method/-URI describe different requests: the front proxy passed on a client's own; have it clear the headers it does not set")
		return
	}
	// The description is checked as the decision API checks its body's
	// (check_target.go). One that fails is a client's own header passed
	// on, or a request Caddy and Traefik accept and nginx does not (a
	// method in lower case, OPTIONS *): the 400 (a 500 through nginx)
	// keeps from the API only requests with nothing to limit them by.
	if err := validMethod(method); err != nil {
		writeJSONProblem(w, http.StatusBadRequest, "Bad Request", "X-Forwarded-Method / X-Original-Method: "+err.Error())
		return
	}
	orig.Method = firstOf(method, http.MethodGet)
	uri = firstOf(uri, "/")
	// A request target has no fragment (RFC 9112 §3.2), but nginx's
	// $request_uri keeps a "#…" the client wrote, and nginx (its $uri and
	// locations) and many servers behind it end the path there: so do the
	// rules, costs and exemptions.
	uri, _, _ = strings.Cut(uri, "#")
	u, err := url.ParseRequestURI(uri)
	// "*" (OPTIONS's whole-server target) names no path to limit; an
	// absolute-form target ("http://host/path", which a client may send a
	// proxy) is judged by its path, "/" when it has none. Its length is
	// bounded by the listener's header bound, not by the decision API's
	// 2,048-byte path: a proxy's request line is often longer.
	if err != nil || u.Path != "" && !absolutePath(u.Path) {
		writeJSONProblem(w, http.StatusBadRequest, "Bad Request", "X-Forwarded-Uri / X-Original-URI is not a request URI with an absolute path")
		return
	}
	// Every check (exemptions, costs, rules) judges the path the front
	// proxy routes by: decoded, its dot segments resolved (nginx's $uri,
	// Caddy's and Traefik's path matchers), encoded ones ("%2e%2e",
	// "..%2F") too, so that no encoding makes a request exempt or cheaper.
	u.Path, u.RawPath = routes.CleanPath(u.Path), ""
	orig.URL, orig.RequestURI = u, uri
	// The described host is X-Forwarded-Host's. The request's own Host
	// names sluice as the proxy reaches it (nginx's upstream, Traefik's
	// address), so without that header the host is unknown, as a
	// /v1/check without one: rules, costs, exemptions and classes that
	// name a host do not match.
	orig.Host = ""
	if host := r.Header.Get("X-Forwarded-Host"); host != "" {
		if err := validHost(host); err != nil {
			writeJSONProblem(w, http.StatusBadRequest, "Bad Request", "X-Forwarded-Host: "+err.Error())
			return
		}
		orig.Host = host
	} else if st.namesHost {
		s.warnings.Warn(r.Context(), s.log, "forward-auth: no X-Forwarded-Host, so what names a host (rules, costs, exemptions, degradation classes) decides the request as one to no host; have the proxy send it (nginx: proxy_set_header X-Forwarded-Host $host;)")
	}
	level := s.ctl.Level()
	if refuse, why := st.shed(level, orig); refuse {
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

// described returns the value that the headers names give of one attribute
// of the described request ("" when none does), and false when their values
// differ. A front proxy sets one of them and passes a client's others on
// (nginx's auth_request passes every header of the client's), so a
// description that differs from another is a client's: neither is
// believed.
func described(h http.Header, names ...string) (string, bool) {
	v := ""
	for _, name := range names {
		for _, s := range h[name] {
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
