package server

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/degrade"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/internal/grpcweb"
	"github.com/sluice-dev/sluice/internal/routes"
)

// degradeState is the part of a state that depends on the degradation
// section: the reduced middleware and the endpoint classes.
type degradeState struct {
	reduced                     *httplimit.Middleware
	expensive, critical, health *routes.Mux
	// ranked holds, by pair of patterns as configured (the exception's,
	// the expensive one's), a [2]string, whether the first outranks the
	// second (a bool, see outranks): at most one for each pair of
	// configured patterns, whatever the requests.
	ranked sync.Map
}

// newDegradeState returns the degradation state of g, with reduced the
// middleware of its reduced limits. Its class health holds g's health
// patterns and the gRPC health protocol's methods (grpcHealth).
func newDegradeState(g config.Degradation, reduced *httplimit.Middleware) (*degradeState, error) {
	d := &degradeState{reduced: reduced}
	var err error
	if d.expensive, err = patternMux(g.Expensive); err != nil {
		return nil, err
	}
	if d.critical, err = patternMux(g.Critical); err != nil {
		return nil, err
	}
	if d.health, err = patternMux(append(slices.Clip(g.Health), grpcHealth()...)); err != nil {
		return nil, err
	}
	return d, nil
}

// grpcHealth are the patterns of the gRPC health protocol's methods
// (grpc.health.v1.Health's Check and Watch, as every gRPC call a POST),
// which are in the class health whatever the configuration: Kubernetes'
// gRPC probes and balancers call them, and a shed probe restarts or drains
// a loaded instance, moving its load onto the others.
func grpcHealth() []string {
	return []string{"POST /grpc.health.v1.Health/Check", "POST /grpc.health.v1.Health/Watch"}
}

// reducedOptions returns o with every limit whose window is at most
// maxWindow scaled by factor (a degraded level's limits): plans', keys' own
// plans', rules' and global ones; longer windows are kept whole. A
// limit's burst never falls below the largest cost that can be charged to it
// (its plan's costs; a rule's own cost, or every plan's when the rule takes
// the request's; every plan's for a global limit):
// an endpoint the configuration admits would otherwise become one that can
// never pass. Such a limit is scaled by cost/burst instead, still at most 1:
// by the least fraction at least cost/burst that Limit.Scale takes whole
// (floorFraction), so its burst holds the cost and its rate is at most the
// configured one. A decision API caller's cost may be more than its plan's:
// decideAt leaves a check that a reduced limit cannot hold to the
// configured limits.
func reducedOptions(o httplimit.Options, factor float64, maxWindow time.Duration) httplimit.Options {
	num, den := int64(factor*1000+0.5), int64(1000)
	scale := func(ls []sluice.Limit, maxCost int64) []sluice.Limit {
		out := make([]sluice.Limit, len(ls))
		for i, l := range ls {
			if l.Window() > maxWindow {
				out[i] = l
				continue
			}
			out[i] = l.Scale(num, den)
			if b := l.Burst(); out[i].Burst() < maxCost && b > 0 {
				out[i] = l.Scale(floorFraction(min(maxCost, b), b))
			}
		}
		return out
	}
	planCost := func(p *httplimit.Plan) int64 {
		var most int64 = 1
		for _, c := range p.Costs {
			most = max(most, c)
		}
		return most
	}
	scaled := map[*httplimit.Plan]*httplimit.Plan{}
	var mostOfAll int64 = 1
	plan := func(p *httplimit.Plan) *httplimit.Plan {
		if s, ok := scaled[p]; ok {
			return s
		}
		s := *p
		s.Limits = scale(p.Limits, planCost(p))
		scaled[p] = &s
		return &s
	}
	r := o
	r.Plans = make([]*httplimit.Plan, len(o.Plans))
	for i, p := range o.Plans {
		r.Plans[i] = plan(p)
		mostOfAll = max(mostOfAll, planCost(p))
	}
	r.Keys = make([]httplimit.Key, len(o.Keys))
	for i, k := range o.Keys {
		r.Keys[i] = k
		if k.Plan != nil {
			r.Keys[i].Plan = plan(k.Plan)
			mostOfAll = max(mostOfAll, planCost(k.Plan))
		}
	}
	r.Global = scale(o.Global, mostOfAll)
	r.Rules = make([]httplimit.Rule, len(o.Rules))
	for i, rule := range o.Rules {
		cost := mostOfAll
		if rule.Cost != nil {
			cost = max(*rule.Cost, 1)
		}
		r.Rules[i] = rule
		r.Rules[i].Limits = scale(rule.Limits, cost)
	}
	// A refusal by a reduced limit is the service's shortage, not the
	// client's doing: it puts no one in the box, which is still checked.
	r.Penalty.Uncounted = o.Penalty != (httplimit.Penalty{})
	return r
}

// scaleTerms is the largest numerator and denominator Limit.Scale takes as
// given (it clamps larger ones to it).
const scaleTerms = 1 << 16

// floorFraction returns the least fraction num/den ≥ cost/burst whose
// terms are at most scaleTerms, for 0 < cost ≤ burst: cost/burst itself
// when its lowest terms are that small, so a burst scaled by it never
// falls below cost and num/den ≤ 1. Otherwise it is above cost/burst by
// less than 1/scaleTerms: where reducedOptions floors a limit, cost/burst
// is above its factor, at least 1/1000, so by less than 1.6% of it.
//
// The candidates are the upper convergents of cost/burst's continued
// fraction and the intermediate fractions before each: the best
// approximations from above for their denominators. The last one whose
// denominator is at most scaleTerms is the least.
func floorFraction(cost, burst int64) (num, den int64) {
	p, q := cost, burst
	h0, k0, h1, k1 := int64(0), int64(1), int64(1), int64(0) // convergents i−2 and i−1
	num, den = 1, 1
	for i := 0; q != 0; i++ {
		a := p / q
		p, q = q, p%q
		if k1 > 0 && a > (scaleTerms-k0)/k1 { // convergent i's denominator is past the bound
			if j := (scaleTerms - k0) / k1; i%2 == 1 && j > 0 {
				num, den = h0+j*h1, k0+j*k1 // an intermediate fraction above cost/burst
			}
			return num, den
		}
		h0, k0, h1, k1 = h1, k1, a*h1+h0, a*k1+k0
		if i%2 == 1 { // odd convergents are at least cost/burst
			num, den = h1, k1
		}
	}
	return h1, k1 // cost/burst in lowest terms
}

// patternMux returns the routes of a degradation class's patterns (nil:
// none).
func patternMux(patterns []string) (*routes.Mux, error) {
	if len(patterns) == 0 {
		return nil, nil
	}
	mux := &routes.Mux{}
	for _, p := range patterns {
		if err := mux.Handle(p); err != nil {
			return nil, fmt.Errorf("server: degradation class pattern %q: %w", p, err)
		}
	}
	return mux, nil
}

// deciderAt returns the middleware that decides requests at level: the
// reduced limits' from degrade.Elevated on (when a degradation section is
// configured), else the configured limits'. The reverse proxy, the status
// path, forward-auth and the decision API all decide with it.
func (st *state) deciderAt(level degrade.Level) *httplimit.Middleware {
	if level >= degrade.Elevated && st.degrade != nil {
		return st.degrade.reduced
	}
	return st.mw
}

// decideAt decides the decision API's check of cost (DecideFor) by c at
// level, and returns the middleware that decided it: deciderAt(level)'s,
// but for a check that the reduced limits would refuse because its cost is
// more than one of them holds at all (sluice.Never): a caller's cost can be
// more than its plan's costs, which floor the reduced limits
// (reducedOptions). That check is decided by the configured limits
// instead, so that degradation never makes a check one that can never
// pass; one they refuse with Never could never pass at any level. Whether
// the reduced limits hold the cost is read first, by a peek (reducedHolds),
// which spends nothing and is observed by no one: the check is decided, and
// observed (metrics, the dashboard, GET /v1/keys), once. A refusal with
// Never that the peek did not foresee (a rule's limit, see reducedHolds) is
// decided again by the configured limits as well, and then observed twice.
func (st *state) decideAt(ctx context.Context, level degrade.Level, c httplimit.Requester, method, path string, cost int64) (*httplimit.Middleware, *httplimit.Result, error) {
	mw := st.deciderAt(level)
	if mw != st.mw && !reducedHolds(ctx, mw, c, method, path, cost) {
		mw = st.mw
	}
	res, err := mw.DecideFor(ctx, c, method, path, cost)
	if err != nil || mw == st.mw || res.Decision.Allowed || res.Decision.RetryAfter != sluice.Never {
		return mw, res, err
	}
	mw.Discard(res)
	res, err = st.mw.DecideFor(ctx, c, method, path, cost)
	return st.mw, res, err
}

// reducedHolds reports whether the reduced limits of mw hold a check of
// cost by c (DecideFor): false when a limit of c's plan, or a global limit,
// not in shadow mode, has a burst below cost, which would refuse it with
// sluice.Never. It reads them by a peek (cost 0), and only for a cost
// above 1, which every reduced limit holds (reducedOptions). A rule's
// limits are not read: a rule with a cost of its own charges that, not
// cost, and which rule a check is of the peek does not say. It is true
// when the peek fails (the decision fails alike) or finds the client
// exempt or in the penalty box.
func reducedHolds(ctx context.Context, mw *httplimit.Middleware, c httplimit.Requester, method, path string, cost int64) bool {
	if cost <= 1 {
		return true
	}
	res, err := mw.DecideFor(ctx, c, method, path, 0)
	if err != nil {
		return true
	}
	defer mw.Discard(res)
	if res.Exempt || res.Penalized || res.Identity.Plan == nil {
		return true
	}
	plan, global := len(res.Identity.Plan.Limits), len(res.Checks)-len(mw.Policy().Global)
	for i := range res.Checks {
		l := &res.Checks[i].Limit
		if (i < plan || i >= global) && !l.Shadow() && l.Burst() < cost {
			return false
		}
	}
	return true
}

// protect wraps the limited proxy with the degradation actions: shedding
// (st.shed), the reduced limits from level 1 and, with a stale cache,
// copies of GET answers recorded from level 1 and served from level 2, but
// for the endpoints of class health, however a request spells them
// (routes.Mux's MatchesAny): those always reach the upstream. A target
// holding a "#" (fragmentSent) is refused with a 400 before anything
// else, nothing spent. A POST whose _method names another method is
// judged as paramOverride says before the rest: refused with a 400,
// nothing spent, or shed by the classes of either method, and decided by
// the limits as the method judged (judgedAs, which their refusal lines
// name); everything past them (the stale cache's copies, the upstream:
// markUpstream) gets the POST it is, and a copy is recorded only of a
// request sent as a GET.
func (s *Server) protect(w http.ResponseWriter, r *http.Request) {
	st := s.state.Load()
	level := s.ctl.Level()
	sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
	if allow := st.cors.allowOf(r); allow != "" {
		sw.cors, sw.allow, sw.expose = st.cors, allow, st.cors.exposeOf(r)
	}
	sw.mon, sw.caller, sw.deadline = s.mon, r.Context(), grpcCallDeadline(r)
	defer sw.answered()
	var out http.ResponseWriter = sw
	if ct := grpcReplyType(r); ct != "" {
		sw.grpcWeb = strings.HasPrefix(ct, "application/grpc-web")
		g := &grpcAnswer{ResponseWriter: sw, sw: sw, contentType: ct, deadline: sw.deadline}
		defer s.grpcOutcome(g)
		defer g.finish()
		out = g
	}
	if fragmentSent(r.RequestURI) {
		writeJSONProblem(out, http.StatusBadRequest, "Bad Request", fragmentSentDetail)
		return
	}
	m, named, err := paramOverride(st, r)
	if err != nil {
		writeJSONProblem(out, http.StatusBadRequest, "Bad Request", err.Error())
		return
	}
	judged := judgedAs(r, m)
	refuse, why := st.shed(level, r)
	if !refuse && named != "" {
		refuse, why = st.shed(level, judgedAs(r, named)) // a class of either reading
	}
	if refuse {
		s.reducedCapacity(out, judged, st, why)
		s.noteShed(shedViaProxy, level, judged.Method, r.URL.Path, requestID(r.Header), http.StatusServiceUnavailable)
		return
	}
	if p := st.cfg.Response.StatusPath; p != "" && r.URL.Path == p {
		st.serveStatus(out, r, level)
		return
	}
	// A balancer probing a health check must see the upstream's health,
	// not a copy of the 200 it answered before it went down.
	stale := st.stale
	if stale != nil && st.degrade.health.MatchesAny(r) {
		stale = nil
	}
	if level >= degrade.High && stale != nil {
		// The reduced limits decide first: a copy spares the upstream,
		// not the client its limits (markUpstream serves it).
		r = r.WithContext(context.WithValue(r.Context(), staleKey{}, stale))
	}
	if level >= degrade.Elevated && st.degrade != nil {
		if stale != nil && r.Method == http.MethodGet { // as sent: a POST judged as a GET is no read
			stale.record(st.reducedProxy, out, r)
			return
		}
		st.reducedProxy.ServeHTTP(out, judgedAs(r, m))
		return
	}
	st.proxy.ServeHTTP(out, judgedAs(r, m))
}

// grpcOutcome tells the monitor that the upstream's gRPC answer g wrote
// failed after all (grpcFailed of its grpc-status: Internal, Unavailable,
// DeadlineExceeded…, not Unimplemented): a gRPC answer's HTTP status is
// 200 whatever its outcome, which its trailers say once the answer ends (a
// gRPC-Web answer's, the trailer frame at the end of its body). A gRPC
// answer the upstream broke off before its status (brokenOff: it reset the
// stream or closed the connection before its trailers, as a crash, a lack
// of memory or a redeploy does) failed too, as its caller reads it
// (INTERNAL, UNAVAILABLE). An answer without a status is no failure
// otherwise: one that is no gRPC answer (a plain HTTP upstream's, to a
// request only labelled gRPC), one that ended whole, and one broken off by
// its caller — it left, or its request body failed (a stall, or a body
// short of its declared length: the proxy breaks the call off, the
// client's doing). An outcome that ends the call at or after its own
// deadline (grpcAnswer.pastDeadline) is the caller's, no failure.
func (s *Server) grpcOutcome(g *grpcAnswer) {
	sw := g.sw
	sw.answered() // the monitor counted the answer, if it had not yet
	if sw.upstreamStatus() != http.StatusOK || g.pastDeadline() {
		return
	}
	code, ok := httplimit.GRPCStatusOf(sw.Header())
	if !ok {
		code, ok = sw.web.Code() // a gRPC-Web answer's, from the end of its body
	}
	if ok && grpcFailed(code) || !ok && sw.brokenOff() {
		s.mon.Failed()
	}
}

// statusWriter remembers the status written, and whether the upstream
// wrote it (markUpstream) or sluice did, and tells the monitor when the
// answer starts. A request is in flight from the moment the limits admit
// it to the upstream (markUpstream: not while it waits in a leaky-bucket
// queue, nor while it is decided or refused) until its status is written or
// its connection switches protocol, so that streams (events, WebSockets) do
// not weigh on the load signals for their whole life. Its latency is the
// same span less the proxy's waits on the client's body (see watchedBody):
// the upstream's dial, its taking of the body and its answer, not the
// client's upload. With cors set, it lets the request's origin read the response
// (corsPolicy.annotate).
type statusWriter struct {
	http.ResponseWriter
	mon      *degrade.Monitor // the server's, which begin counts the request with
	req      *degrade.Request // the monitor's count of the request, from begin
	end      func(status int) // ends req (degrade.Request.End), until called
	status   int
	upstream bool
	wrote    bool // a final (non-1xx) status was written
	switched bool // the connection switched to another protocol (Hijack)
	copied   bool // the answer is a stale copy of the upstream's
	own      bool // the proxy's own problem answer (a 502), sluice's for CORS (markOwn)
	cors     *corsPolicy
	allow    string // the request's Access-Control-Allow-Origin, with cors
	expose   string // its Access-Control-Expose-Headers, with cors
	// late: the request is a gRPC or Connect call whose answer started, or
	// the proxy's own answer came, at or after the call's deadline (see
	// grpcAnswer.pastDeadline, answered): the caller's outcome, not the
	// upstream's.
	late bool
	// deadline is the call's its caller set (grpcCallDeadline; zero: none).
	deadline time.Time
	// caller is the request's context, done once its client left.
	caller context.Context
	// body is the request's body as the proxy reads it (watchedBody,
	// which keeps the error that broke it off); nil for none.
	body *watchedBody
	// served: the handler that reaches the upstream (markUpstream's)
	// returned. The proxy aborts it instead (httputil.ReverseProxy
	// panics with http.ErrAbortHandler) when the copy of an answer's body
	// fails: the answer broke off.
	served bool
	// grpcWeb: the request is a gRPC-Web call, whose status web reads at
	// the end of the answer's body (see grpcOutcome).
	grpcWeb bool
	web     grpcweb.Status
}

// upstreamStatus is the status for the monitor: the upstream's, or 0 for a
// response sluice made itself (a refusal, a degraded level's 503, a stale
// copy), for none at all (the client left before the upstream answered,
// and the proxy wrote nothing) and for a gRPC call's answer that started
// at or after the call's deadline (late): none is an outcome of the
// upstream's.
func (w *statusWriter) upstreamStatus() int {
	if !w.upstream || w.late || !w.wrote && !w.switched {
		return 0
	}
	return w.status
}

// brokenOff reports whether the upstream broke off its answer, a gRPC or
// gRPC-Web one by its Content-Type (grpcAnswerType), before it ended: the
// handler that copies it did not return (served), while the request's
// client still waited (caller not done) and its body, if any, had not
// failed (a broken or stalled body breaks the call off, the client's
// doing, as the proxy's ErrorHandler judges it).
func (w *statusWriter) brokenOff() bool {
	return grpcAnswerType(w.Header().Get("Content-Type")) && !w.served &&
		(w.caller == nil || w.caller.Err() == nil) && (w.body == nil || w.body.failed() == nil)
}

// staleKey is the context key of the stale cache whose copy answers a
// request admitted at a level that serves copies (protect).
type staleKey struct{}

// markUpstream wraps the handler that reaches the upstream (the proxy),
// which runs once the limits admitted the request: what it writes is the
// upstream's answer, 502s of an unreachable upstream included (for
// degradation; for CORS those are sluice's own, markOwn). A request
// whose context holds a stale cache (staleKey) is answered by its copy
// instead when it has one: not the upstream's answer, nor one to copy
// again (its age would start afresh). A request the limits judged as
// another method (judgedAs) goes on with the method it was sent with
// (sentAs): the copy to serve and the upstream's request are the POST's.
func markUpstream(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r = sentAs(r)
		var sw *statusWriter
		var tw *teeWriter
		for u := w; u != nil; {
			switch x := u.(type) {
			case *statusWriter:
				sw = x
			case *teeWriter:
				tw = x
			}
			uw, ok := u.(interface{ Unwrap() http.ResponseWriter })
			if sw != nil || !ok {
				break
			}
			u = uw.Unwrap()
		}
		if c, ok := r.Context().Value(staleKey{}).(*staleCache); ok {
			if sw != nil {
				sw.copied = true // a copy keeps the upstream's CORS decision
			}
			// A copy carries none of the fields it was kept without (the
			// RateLimit fields), this decision's either.
			h, kept := w.Header(), http.Header{}
			for _, name := range c.dropped {
				name = http.CanonicalHeaderKey(name)
				if v, ok := h[name]; ok {
					kept[name] = v
					delete(h, name)
				}
			}
			if c.serve(w, r) {
				if tw != nil {
					tw.skip = true // not kept: a copy of the copy
				}
				return
			}
			if sw != nil {
				sw.copied = false
			}
			maps.Copy(h, kept)
		}
		if sw != nil {
			sw.upstream = true
			sw.begin()
		}
		h.ServeHTTP(w, r)
		if sw != nil {
			sw.served = true
		}
	})
}

func (w *statusWriter) WriteHeader(code int) {
	first := !w.wrote && code >= 200
	if first {
		w.wrote = true
		if w.grpcWeb {
			w.web.Reset(w.Header().Get("Content-Type"))
		}
		if w.cors != nil {
			w.cors.annotate(w.Header(), w.allow, w.expose, w.upstream && !w.own || w.copied)
		}
	}
	w.status = code
	if first {
		w.answered()
	}
	w.ResponseWriter.WriteHeader(code)
}

// begin counts the request, which goes to the upstream, in flight with the
// monitor (mon), its latency measured from now (less its pauses), once.
func (w *statusWriter) begin() {
	if w.mon != nil && w.req == nil && !w.wrote {
		w.req = w.mon.Start()
		w.end = w.req.End
	}
}

// upstreamRequest returns the monitor's count of the request whose answer w
// writes (statusWriter.begin), or nil.
func upstreamRequest(w http.ResponseWriter) *degrade.Request {
	for w != nil {
		if sw, ok := w.(*statusWriter); ok {
			return sw.req
		}
		u, ok := w.(interface{ Unwrap() http.ResponseWriter })
		if !ok {
			return nil
		}
		w = u.Unwrap()
	}
	return nil
}

// answered tells the monitor that the answer has started, or that it
// never will (the handler returns), once. A request whose client gave up
// on it before the upstream answered — it left, the proxy writing
// nothing, or its call's deadline (deadline) passed before the upstream's
// answer started (late) — ends degrade.Abandoned: its latency so far, a
// lower bound of the upstream's, counts, its outcome does not.
func (w *statusWriter) answered() {
	if w.end == nil {
		return
	}
	status := w.upstreamStatus()
	if status != 0 && !w.deadline.IsZero() && !time.Now().Before(w.deadline) {
		w.late = true // a Connect call's answer (a gRPC one's is late already)
		status = 0
	}
	if status == 0 && w.upstream && (w.late || !w.wrote && !w.switched) {
		status = degrade.Abandoned
	}
	w.end(status)
	w.end = nil
}

// Hijack switches the connection to another protocol for the proxy: the
// answer has started then.
func (w *statusWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	conn, rw, err := http.NewResponseController(w.ResponseWriter).Hijack()
	if err == nil {
		w.status, w.switched = http.StatusSwitchingProtocols, true
		w.answered()
	}
	return conn, rw, err
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if !w.wrote {
		w.WriteHeader(http.StatusOK)
	}
	if w.grpcWeb {
		w.web.Write(b)
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// sample feeds the controller every interval until ctx is done. Without a
// degradation section the signals are still read, and dropped, every
// interval: a section a reload adds is fed the last interval's, never
// every answer since the instance started. With one, a CPU share that
// cannot be measured is logged as it turns unknown and as it is measured
// again (unknownCPU), and signals that nothing measures (requests without
// an upstream, memory without a limit) once per configuration
// (unmeasured, unlimitedMemory).
//
// The interval is the configuration's in force: a reload wakes the loop
// (degrade.Controller.Reconfigured), which then samples an interval after
// the last sample, at once if that is past, not when a wait of the old
// interval ends.
func (s *Server) sample(ctx context.Context) {
	var unknown unknownCPU
	var quiet unmeasured
	var unlimited unlimitedMemory
	last := time.Now()
	for {
		reloaded := s.ctl.Reconfigured()
		if wait := time.Until(last.Add(s.samplingInterval())); wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-reloaded:
				t.Stop()
				continue // the interval may have changed
			case <-t.C:
			}
		} else if ctx.Err() != nil {
			return
		}
		last = time.Now()
		signals := s.mon.Sample()
		s.noteSignals(signals)
		// Under the reloads' lock, as a pin: a reload that drops the
		// section resets the level, which an update after it would raise.
		s.reloads.Lock()
		if cfg := s.state.Load().cfg; cfg.Degradation.Enabled {
			quiet.note(s.log, cfg)
			unlimited.note(s.log, cfg, signals)
			unknown.note(s.log, signals)
			s.ctl.Update(signals)
		}
		s.reloads.Unlock()
	}
}

// samplingInterval is degradation.interval of the configuration in force,
// a second without one.
func (s *Server) samplingInterval() time.Duration {
	if interval := s.state.Load().cfg.Degradation.Interval; interval > 0 {
		return interval
	}
	return time.Second
}

// SampleNow feeds the controller one reading at once (tests, and operators
// who want the level to follow a change without waiting an interval).
func (s *Server) SampleNow() degrade.Level {
	if s.zero() {
		return degrade.Normal
	}
	signals := s.mon.Sample()
	s.noteSignals(signals)
	return s.ctl.Update(signals)
}

// Degradation returns the controller's state.
func (s *Server) Degradation() degrade.State {
	if s.zero() {
		return degrade.State{}
	}
	return s.ctl.State()
}

// handleDegradation: GET (or HEAD) shows the level and signals; PUT (or
// POST) {"level":"high"} pins a level, only with a degradation section
// (a pin waits for a reload in progress, which may drop it); DELETE unpins, each logged with its caller. It is on the
// admin listener, where reading needs the read scope and changing the level
// the admin scope. Another method is a 405 with Allow whoever calls, as on
// every admin endpoint: no scope would make it valid.
func (s *Server) handleDegradation(w http.ResponseWriter, r *http.Request, c caller) {
	need := config.ScopeAdmin
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		need = config.ScopeRead
	case http.MethodPut, http.MethodPost, http.MethodDelete:
	default:
		w.Header().Set("Allow", "GET, HEAD, PUT, POST, DELETE")
		writeJSONProblem(w, http.StatusMethodNotAllowed, "Method Not Allowed", "use GET to read the level, PUT (or POST) to pin one, DELETE to unpin")
		return
	}
	if !c.scopes.Has(need) {
		s.refuseCaller(w, c, need)
		return
	}
	switch r.Method {
	case http.MethodGet, http.MethodHead:
	case http.MethodPut, http.MethodPost:
		var body struct {
			Level json.RawMessage `json:"level"`
		}
		const want = `send {"level": "normal" | "elevated" | "high" | "critical"} (or 0-3)`
		if status, err := readJSON(w, r, 4096, &body); err != nil {
			writeJSONProblem(w, status, http.StatusText(status), "degradation: "+err.Error()+": "+want)
			return
		}
		if len(body.Level) == 0 {
			writeJSONProblem(w, http.StatusBadRequest, "Bad Request", `degradation: "level" is required: `+want)
			return
		}
		var name string
		if json.Unmarshal(body.Level, &name) != nil {
			name = string(body.Level)
		}
		l, err := degrade.ParseLevel(name)
		if err != nil {
			writeJSONProblem(w, http.StatusBadRequest, "Bad Request", err.Error())
			return
		}
		// Under the reloads' lock: a reload that drops the section resets
		// the level (Controller.Reset), which a pin after it would undo,
		// leaving a level that nothing moves.
		s.reloads.Lock()
		if !s.state.Load().cfg.Degradation.Enabled {
			s.reloads.Unlock()
			writeJSONProblem(w, http.StatusConflict, "Conflict",
				"This configuration has no degradation section: a pinned level would change nothing. Add one (see examples/sluice.yaml) to pin a level.")
			return
		}
		s.ctl.Pin(l)
		s.reloads.Unlock()
		s.log.Info("degradation pinned", "caller", c.who(), "peer", peerIP(r).String(), "level", l.String())
	case http.MethodDelete:
		s.ctl.Unpin()
		s.log.Info("degradation unpinned", "caller", c.who(), "peer", peerIP(r).String())
	}
	writeJSON(w, http.StatusOK, s.ctl.State())
}
