package server

import (
	"encoding/json"
	"math/rand/v2"
	"net/http"
	"strconv"
	"time"

	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/degrade"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/internal/routes"
)

// A degraded level refuses some requests before any decision (it sheds
// them): the reverse proxy's, forward-auth's and the decision API's alike,
// by one judgement (state.shed). A shed request spends nothing.

// refusalHeader names, on forward-auth's answer, the problem type of a
// refusal that is not the client's limits' (refusalReducedCapacity: a
// shed request), for a front proxy that cannot read the answer's body and
// sees the same deny status for both (nginx's auth_request).
const (
	refusalHeader          = "Sluice-Refusal"
	refusalReducedCapacity = "temporary-reduced-capacity"
)

func isWrite(method string) bool {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace:
		return false
	}
	return true
}

// shed reports whether the degradation level refuses r before deciding
// it, and why, in a sentence for its client: level 1 (elevated) and above
// the endpoints of class expensive, level 2 (high) and above every write
// (a method other than GET, HEAD, OPTIONS and TRACE) but those of class
// critical, level 3 (critical) everything but the endpoints of class
// health. An endpoint is expensive however r spells it (routes.Mux's
// MatchesAny: shedding more is safe); critical and health, exceptions to
// shedding, only as written (MatchesAsWritten: /api/pay/..;/orders,
// which Tomcat routes as /api/orders, is not "POST /api/pay/"). A health
// endpoint is shed at no level, a critical one at none below 3, even
// inside an expensive subtree ("GET /api/health" under "/api/"): of an
// exception's pattern and each expensive one that a spelling of r
// matches, the more specific decides, as in a ServeMux, and the exception
// when neither is; it holds only where it outranks every one (see
// costly). A nil r is a decision API check that describes no
// endpoint (neither a method nor a path): no class is its, so only level
// 3, which serves nothing but health checks, refuses it. Without a
// degradation section, and at level 0, nothing is shed.
func (st *state) shed(level degrade.Level, r *http.Request) (bool, string) {
	d := st.degrade
	if d == nil || level == degrade.Normal {
		return false, ""
	}
	const (
		onlyHealth = "The service is overloaded and serves only health checks for now."
		noWrites   = "The service is overloaded and does not accept changes for now; reads still work."
		noCostly   = "The service is under load and has paused its most expensive endpoints."
	)
	if r == nil {
		if level >= degrade.Critical {
			return true, onlyHealth
		}
		return false, ""
	}
	exception := d.health
	if !exception.MatchesAsWritten(r) {
		exception = nil
		if level >= degrade.Critical {
			return true, onlyHealth
		}
		if d.critical.MatchesAsWritten(r) {
			exception = d.critical
		} else if level >= degrade.High && isWrite(r.Method) {
			return true, noWrites
		}
	}
	if d.costly(exception.Pattern(r), r) {
		return true, noCostly
	}
	return false, ""
}

// costly reports whether r is expensive and the exception pattern ex
// ("" for none), which r matches as written, does not take it from the
// class: some spelling of r (routes.Mux's Spellings, as MatchesAny reads
// r) matches an expensive pattern that ex does not outrank (see
// outranks). Each spelling is an upstream's reading of r, and the
// exception holds only where it outranks the expensive pattern of every
// one: beside expensive "/api/" and "POST /api/pay/bulk", critical
// "/api/pay/" takes POST /api/pay/status from "/api/" but not POST
// /api/pay/bulk/, /api/pay/BULK or /api/pay/bulk.json, which are "POST
// /api/pay/bulk" without their trailing slash, in lower case or without
// their format suffix. It takes time in the number of r's spellings.
func (d *degradeState) costly(ex string, r *http.Request) bool {
	if ex == "" {
		return d.expensive.MatchesAny(r)
	}
	judged := "" // the last expensive pattern ex outranks, met again often
	for xp := range d.expensive.Spellings(r) {
		if xp == "" || xp == judged {
			continue
		}
		if !d.outranks(ex, xp) {
			return true
		}
		judged = xp
	}
	return false
}

// outranks reports whether the exception pattern ex takes a request from
// the expensive pattern xp where both match it, or spellings of it
// (routes.Outranks): ex names a host and xp none, or ex is more specific,
// as a ServeMux holding the two would route the request to ex, or neither
// is (a method beside a longer path: "GET /api/" and "/api/health"), which
// leaves it to the exception, which names the route. Where xp is the more
// specific, or no request matches both ("/jobs/run/" beside "POST
// /jobs/run": the spelling /jobs/run of a request /jobs/run/ is xp's
// alone), it does not: a request in a class and expensive under another
// spelling is shed as expensive. The answer of each pair of configured
// patterns is kept (d.ranked): it depends on the two patterns alone.
func (d *degradeState) outranks(ex, xp string) bool {
	pair := [2]string{ex, xp}
	if v, ok := d.ranked.Load(pair); ok {
		return v.(bool)
	}
	v, _ := d.ranked.LoadOrStore(pair, routes.Outranks(ex, xp))
	return v.(bool)
}

// reducedCapacity answers a shed request 503 (see
// reducedCapacityWithStatus).
func (s *Server) reducedCapacity(w http.ResponseWriter, r *http.Request, st *state, detail string) {
	s.reducedCapacityWithStatus(w, st, detail, http.StatusServiceUnavailable)
}

// reducedCapacityWithStatus answers a shed request with status (503, or
// forward-auth's deny status) and an RFC 9457 problem of type
// httplimit.ProblemReducedCapacity whose detail is detail, uncacheable,
// with a Retry-After of shedRetryAfter.
func (s *Server) reducedCapacityWithStatus(w http.ResponseWriter, st *state, detail string, status int) {
	secs, _ := shedRetryAfter(st.cfg)
	w.Header().Set("Retry-After", strconv.FormatInt(secs, 10))
	w.Header().Set("Cache-Control", "no-store")
	body, _ := json.Marshal(problem{Type: httplimit.ProblemReducedCapacity, Title: "Service Unavailable",
		Status: status, Detail: shedDetail(detail)})
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(status)
	w.Write(append(body, '\n'))
}

// shedDetail is the detail of a shed request's problem, of why (state.shed's
// sentence).
func shedDetail(why string) string { return why + " Retry after the time in Retry-After." }

// shedRetryAfter returns the wait of a shed request: in exact
// milliseconds, degradation.retry_after later by a jitter of whole seconds
// (up to as much again, at most response.retry_jitter, drawn at random) when
// one is configured, for shed clients that come back together would bring
// back the overload they were shed for; and in whole seconds for
// Retry-After, those milliseconds rounded up (at least 1), so that a client
// that waits it is never early.
func shedRetryAfter(cfg *config.Config) (secs, ms int64) {
	least, most := shedWait(cfg)
	jitter := rand.Int64N(most - least + 1)
	return least + jitter, ceilMs(cfg.Degradation.RetryAfter) + jitter*1000
}

// shedWait returns the Retry-After of a shed request in whole seconds:
// degradation.retry_after rounded up, at least 1; and the most it is
// spread to: as much again, at most response.retry_jitter (least itself
// without a jitter).
func shedWait(cfg *config.Config) (least, most int64) {
	least = max(ceilSeconds(cfg.Degradation.RetryAfter), 1)
	return least, least + min(int64(cfg.Response.RetryJitter/time.Second), least)
}

// noteShed counts a request that level shed in sluice_shed_requests_total,
// and logs it within log.refusals_per_second (the bound of refusals'
// lines, which it shares): the surface (via), the status written (none
// for the decision API, which answers its caller), the level, the method
// and path (never the query; bounded as a refusal's are; none for a
// decision API check that describes no endpoint) and the request's
// X-Request-Id (id) when it has one.
func (s *Server) noteShed(via string, level degrade.Level, method, path, id string, status int) {
	s.shed.count(via, level)
	if !s.refusals.take(s.Config().Log.RefusalsPerSecond, time.Now()) {
		return
	}
	attrs := []any{"via", via}
	if status > 0 {
		attrs = append(attrs, "status", status)
	}
	attrs = append(attrs, "level", level.String())
	if method != "" || path != "" {
		attrs = append(attrs, "method", cutText(method, maxLoggedMethod), "path", cutText(path, maxLoggedPath))
	}
	if id != "" {
		attrs = append(attrs, "request_id", id)
	}
	s.log.Info("request shed", attrs...)
}
