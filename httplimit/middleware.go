// Package httplimit is sluice's net/http middleware: it identifies the client
// (API key > verified token > user id > IP), checks every limit of its plan and the global
// limits in one atomic call, sets the standard RateLimit headers on every
// response, and refuses with a 429 RFC 9457 problem body that says what
// happened and what to do.
package httplimit

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/logsample"
)

// Middleware limits HTTP requests by its Options. It is safe for
// concurrent use; build it with New. The zero Middleware limits nothing:
// its Decide and DecideFor return an error wrapping
// sluice.ErrStoreUnavailable, so its Handler serves every request and logs
// that it decided nothing (as New's default ErrorHandler does when a store
// fails), and its other methods report no identity, limits or headers.
//
// API keys become store keys, log text and metric labels only as their
// SHA-256. To spare returning clients the hash, a Middleware keeps a
// fixed-size cache from raw API key to the identity it resolved to: the raw
// keys of recent clients (room for about 4 per listed key, at least 4,096 and
// at most 65,536 of them, each at most 256 bytes; unlisted keys only when
// they are identities of their own) stay in the process's memory, as
// request headers do while they are served. They are never logged or
// exported, and compared in constant time.
type Middleware struct {
	limiter *sluice.Limiter
	policy  *Policy
	id      *identifier
	// globalKey is the store key of the global limits: the scope prefix
	// and GlobalSubject.
	globalKey string
	// globalUnits: some plan's endpoint costs more than 1, so the global
	// limits count units.
	globalUnits bool
	plans       map[*Plan]*planState
	noPlan      planState // stands for a plan the middleware was not built with
	// statusReads bounds how often one client reads its standing
	// (StatusHandler).
	statusReads sluice.Limit
	exempt      *endpoints
	exemptions  *exemptions
	onExempt    func(r *http.Request, reason string)
	onRefusal   func(r *http.Request, res *Result, status int)
	onQueued    func(w http.ResponseWriter, r *http.Request, delay time.Duration)
	onReported  func(limit string, cost, used int64, reported bool)
	rules       []*rule
	ruleKeys    *keyCache
	modes       []string
	ietfMode    bool // ModeIETF is one of modes
	oneLimit    bool // a mode that states the deciding limit alone is
	docsURL     string
	penalty     *penaltyBox
	template    *template        // nil: RFC 9457 problems
	globalGone  bool             // GlobalStatus is 503
	jitter      time.Duration    // Options.RetryJitter
	now         func() time.Time // nil: clock, time.Now read cheaply
	clock       wallClock
	log         *slog.Logger
	warnings    logsample.Log // warnings a failing store repeats per request
	onError     func(w http.ResponseWriter, r *http.Request, err error) bool
	observe     func(res *Result, took time.Duration, err error)
	results     sync.Pool
	// counts maps the limits that count only successes or failures to
	// which (see countsOf); nil when none do.
	counts map[string]string
	// stated are the limits stated for leased buckets (see Stated).
	stated statedLimits
}

// Result is one request's identity, cost and decision.
type Result struct {
	Identity Identity
	// Cost is the units the request spends (its endpoint's cost).
	Cost int64
	// Exempt is true for requests that no limit applies to, and ExemptBy
	// says why (ExemptRoute, ExemptAddress, ExemptKey, ExemptUser,
	// ExemptPlan); the other fields are then zero but Decision.Allowed,
	// which is true: an exempt request is admitted.
	Exempt   bool
	ExemptBy string
	// Checks are the plan's limits then the global ones, as decided;
	// read only (a discarded Result keeps them for its next request).
	Checks   []sluice.Check
	Decision sluice.Decision
	// Now is when the decision was asked for: by Options.Clock if set,
	// else by time.Now (read without the wall clock, see wallClock, so a
	// wall clock step shows within a second).
	Now time.Time

	plan *planState // of Identity.Plan, when set by this package
	// Checks are those of the limits of checksOf at checksCost, nil when
	// they are not (the penalty box's, or a Result from elsewhere).
	checksOf   *policyHeaders
	checksCost int64

	// matched are the rules that matched, in order, each with the store
	// key and cost of its checks (ruleKeys, ruleCosts), which Checks holds
	// between the plan's and the global ones; ruleMask has bit i set for
	// the i-th rule of the middleware when it matched (of the first 64,
	// which is all headersOf reads it for).
	matched   []*rule
	ruleKeys  []string
	ruleCosts []int64
	ruleMask  uint64
	// sharedMask has bit j set when matched[j] matched with a key that
	// holds nothing of the client's (see Middleware.ruleKey).
	sharedMask uint64
	// Penalized: the client is in the penalty box (Options.Penalty), which
	// refused the request, spending nothing of its limits; Checks and
	// Decision are then the box's.
	Penalized bool
	// penaltyChecks and penaltyDecision serve the box's store calls, and
	// StatusHandler's count of reads.
	penaltyChecks   [1]sluice.Check
	penaltyDecision sluice.Decision
	// statusRefused: StatusHandler refused the read (statusReads).
	statusRefused bool
	// peeking: the Result is a peek, which reads a standing, spends nothing
	// and decides no request (StatusHandler's, or DecideFor's at cost 0):
	// Observer is not told of it, nor of its failure; nor is OnExempt of
	// StatusHandler's.
	peeking bool

	// answer records the status of a request whose limits count by
	// response (see serveCounted).
	answer statusWriter
	// kept is the Pending Keep made of the Result, which settles its
	// charges in its stead; nil when it was not kept.
	kept *Pending
	// pooled: the Result is back in the pool (Done or Discard), which a
	// second Done or Discard then leaves alone.
	pooled bool

	// DecideFor's request to match routes against, reused with the
	// Result instead of allocated per call.
	req    http.Request
	reqURL url.URL

	// The blocks that header values are cut from: their bytes are the
	// builder's, the unused rest of valueBlock is for the next values.
	byteBlock  strings.Builder
	valueBlock []string
	// keyBuf and headerBuf are where rule keys and header values are
	// written before they become strings.
	keyBuf, headerBuf []byte
}

// planState is what the middleware precomputes for one plan.
type planState struct {
	plan    *Plan
	costs   *endpoints
	headers policyHeaders
	// withRules are headers with the limits of matched rules.
	withRules ruleHeaders
	// unitsCounted: some endpoint of the plan costs more than 1, so its
	// limits count units, not requests.
	unitsCounted bool
}

// planOf returns the precomputed state of plan.
func (m *Middleware) planOf(plan *Plan) *planState {
	if ps := m.plans[plan]; ps != nil {
		return ps
	}
	return &m.noPlan
}

// New returns a Middleware that limits requests with limiter by o. It
// refuses invalid options with every problem found, each a *FieldError
// naming its field (see Options.Validate); empty fields take their
// defaults (see Options.WithDefaults).
func New(limiter *sluice.Limiter, o Options) (*Middleware, error) {
	if limiter == nil {
		return nil, errors.New("httplimit: nil limiter")
	}
	if err := o.Validate(); err != nil {
		return nil, err
	}
	o = o.WithDefaults()
	policy := &Policy{Plans: slices.Clone(o.Plans), Global: slices.Clone(o.Global),
		DefaultPlan: o.DefaultPlan, AnonymousPlan: o.AnonymousPlan}
	prefix := keyPrefix(o.Scope)
	m := &Middleware{
		limiter:    limiter,
		policy:     policy,
		id:         newIdentifier(&o, policy, prefix),
		globalKey:  prefix + GlobalSubject,
		plans:      map[*Plan]*planState{},
		modes:      slices.Clone(o.Headers),
		docsURL:    o.DocsURL,
		now:        o.Clock,
		log:        o.Logger,
		observe:    o.Observer,
		onError:    o.ErrorHandler,
		onExempt:   o.OnExempt,
		onRefusal:  o.OnRefusal,
		onQueued:   o.OnQueued,
		onReported: o.OnReported,
	}
	if m.log == nil {
		m.log = slog.Default()
	}
	m.counts = countsOf(&o)
	m.clock.anchor.Store(&anchor{wall: time.Now()})
	var err error
	if m.exempt, err = newEndpoints(o.Exempt, nil); err != nil {
		return nil, &FieldError{Field: "Exempt", Err: err}
	}
	m.exemptions = newExemptions(&o, m.id)
	m.globalGone = o.GlobalStatus == http.StatusServiceUnavailable
	m.jitter = o.RetryJitter
	m.penalty = newPenaltyBox(o.Penalty, o.StoreLeases)
	if o.RefusalTemplate != "" {
		if m.template, err = compileTemplate(o.RefusalTemplate); err != nil {
			return nil, &FieldError{Field: "RefusalTemplate", Err: err}
		}
	}
	hidden := hiddenLimits(&o)
	m.stated = newStatedLimits(&o)
	if m.rules, err = compileRules(&o, prefix, hidden, &m.stated); err != nil {
		return nil, err
	}
	m.ruleKeys = newKeyCache()
	for _, mode := range m.modes {
		m.ietfMode = m.ietfMode || mode == ModeIETF
		m.oneLimit = m.oneLimit || mode != ModeIETF
	}
	plans := slices.Clone(o.Plans)
	for _, k := range o.Keys {
		plans = append(plans, k.Plan)
	}
	for _, p := range plans {
		if _, done := m.plans[p]; done {
			continue
		}
		ps := &planState{plan: p, unitsCounted: planCountsUnits(p)}
		m.globalUnits = m.globalUnits || ps.unitsCounted
		limits := append(slices.Clone(p.Limits), o.Global...)
		if ps.headers, err = newPolicyHeaders(limits, hidden, &m.stated); err != nil {
			return nil, fmt.Errorf("httplimit: plan %s: %w", p.Name, err)
		}
		if ps.costs, err = newEndpoints(nil, p.Costs); err != nil {
			return nil, fmt.Errorf("httplimit: plan %s: %w", p.Name, err)
		}
		m.plans[p] = ps
	}
	m.results.New = func() any { return &Result{} }
	m.statusReads = newStatusReads()
	m.stated.add(m.statusReads)
	return m, nil
}

// errNoPlan is the error of a request whose identity names no plan.
var errNoPlan = errors.New("httplimit: no plan for the request (no default or anonymous plan configured)")

// Decide identifies r and decides it, without writing anything. A request
// that a leaky-bucket queue would admit with a Delay ending after the
// deadline of r's context is refused by the queue instead (see
// DecideFor). Put the Result back with Done (an admitted request that
// ran) or Discard.
func (m *Middleware) Decide(r *http.Request) (*Result, error) {
	if m.zero() {
		return nil, errZero()
	}
	res := m.result()
	if m.exempt.match(r) {
		return m.exempted(r, res, ExemptRoute), nil
	}
	if res, err := m.identifyInto(r, res); err != nil || res.Exempt {
		return res, err
	}
	res.plan = m.planOf(res.Identity.Plan)
	res.Cost = res.plan.costs.cost(r)
	f := requestFacts{r: r, id: &res.Identity}
	m.matchRules(&f, res)
	return m.decide(r.Context(), res)
}

// identifyInto identifies r's client into res: exempt by its address or
// its identity, or with the plan it is on. Without a plan it discards res
// and returns errNoPlan.
func (m *Middleware) identifyInto(r *http.Request, res *Result) (*Result, error) {
	if m.exemptAddress(r) {
		return m.exempted(r, res, ExemptAddress), nil
	}
	m.id.identify(r, &res.Identity)
	if by := m.exemptions.byIdentity(&res.Identity); by != "" {
		return m.exempted(r, res, by), nil
	}
	res.Exempt, res.ExemptBy = false, ""
	if res.Identity.Plan == nil {
		m.Discard(res)
		return nil, errNoPlan
	}
	return res, nil
}

// Discard returns res to the pool without ending its request: a
// concurrency lease it holds is not given back (it expires by itself; use
// Done to give it back). res must not be used afterwards; a second Discard
// or Done of it, before any later request, does nothing. A nil res (the
// Result of a Decide that failed) is ignored, as by Done and WriteHeaders.
func (m *Middleware) Discard(res *Result) {
	if res == nil || res.pooled {
		return
	}
	res.peeking, res.kept, res.pooled = false, nil, true
	m.results.Put(res)
}

// result returns a Result from the pool, for a new request.
func (m *Middleware) result() *Result {
	res := m.results.Get().(*Result)
	res.pooled = false
	return res
}

// WriteHeaders sets res's RateLimit headers on h, in every configured mode.
// An exempt res has none, and neither has a refusal by the penalty box
// (Result.Penalized), which no limit of the plan decided: Refuse sends it
// without them.
func (m *Middleware) WriteHeaders(h http.Header, res *Result) {
	if res != nil && !res.Exempt && !res.Penalized {
		m.writeHeaders(h, res)
	}
}

// Refuse writes res's 429 problem response (headers included) to w.
func (m *Middleware) Refuse(w http.ResponseWriter, r *http.Request, res *Result) {
	m.RefuseWithStatus(w, r, res, http.StatusTooManyRequests)
}

// RefuseWithStatus is Refuse with another status: forward-auth for nginx
// answers 403, because auth_request turns any status but 2xx, 401 and 403
// into a 500; nginx then maps it back to a 429 for the client. A refusal
// of the service's capacity (RefusedForCapacity) has the problem type
// ProblemReducedCapacity under any status, and is a 503 where status is
// 429. An exempt
// res is admitted: it writes nothing then. A nil res (the Result of a
// Decide that failed) has no refusal to state: it writes a 500 problem.
func (m *Middleware) RefuseWithStatus(w http.ResponseWriter, r *http.Request, res *Result, status int) {
	if res == nil {
		writeProblem(w, &Problem{Type: "about:blank", Title: "Internal Server Error", Status: http.StatusInternalServerError,
			Detail: "The rate limit was not decided.", Instance: r.URL.EscapedPath()})
		return
	}
	if res.Exempt {
		return
	}
	var p *Problem
	if res.Penalized {
		p = m.penaltyProblem(r, res)
		p.Status = status
	} else {
		m.writeHeaders(w.Header(), res)
		p = m.refusal(r, res)
		p.Status = status
		if m.RefusedForCapacity(res) {
			// The service's capacity, not the client's quota: 503 in
			// place of the default 429, any other status kept (a front
			// proxy refuses with it, see RefusedForCapacity).
			p.Type, p.Title = ProblemReducedCapacity, "Service Unavailable"
			if status == http.StatusTooManyRequests {
				p.Status = http.StatusServiceUnavailable
			}
			if storeRefused(res) {
				p.Detail = "The rate limiter cannot reach the store its limits are kept in, and refuses every request until it answers again. Your quota is not spent: retry after Retry-After."
				p.Upgrade = nil
			}
		}
	}
	m.writeBody(w, r, p)
	m.log.Debug("request refused", "subject", res.Identity.Subject, "plan", res.Identity.Plan.Name,
		"violated", res.Decision.Violated, "retry_after", res.Decision.RetryAfter)
	if m.onRefusal != nil {
		m.onRefusal(r, res, p.Status)
	}
}

// RefusedForCapacity reports whether res is a refusal of the service's
// capacity rather than of its client's quota: refused by global limits
// alone (Options.Global), with Options.GlobalStatus 503, or refused
// because the store could not be reached (every refusing check's
// sluice.Status.Unavailable: a store down under a deny policy). Refuse answers
// such a refusal 503 with ProblemReducedCapacity; a caller that refuses
// with another status (RefuseWithStatus) can tell it apart by this. It is
// false for a nil, exempt or admitted res, a refusal by the penalty box,
// a refusal a limit of the client's plan or of a rule takes part in, and
// every refusal of the zero Middleware.
func (m *Middleware) RefusedForCapacity(res *Result) bool {
	return res != nil && !res.Exempt && !res.Penalized && !res.Decision.Allowed &&
		(m.globalGone && m.onlyGlobal(res) || storeRefused(res))
}

// storeRefused reports whether every enforcing check that refused res was
// refused because its store could not be reached, and one was.
func storeRefused(res *Result) bool {
	refused := false
	for i, st := range res.Decision.Statuses {
		if st.Allowed || i < len(res.Checks) && res.Checks[i].Limit.Shadow() {
			continue
		}
		if !st.Unavailable {
			return false
		}
		refused = true
	}
	return refused
}

// zero reports whether m is the zero Middleware, which New did not build.
func (m *Middleware) zero() bool { return m.limiter == nil }

// errZero is the error of the zero Middleware's decisions.
func errZero() error {
	return fmt.Errorf("httplimit: %w: the zero Middleware has no limiter (build one with New)", sluice.ErrStoreUnavailable)
}

// undecided handles err, the failure to decide r, by Options.ErrorHandler,
// or by default by logging it and reporting that r is to be served.
func (m *Middleware) undecided(w http.ResponseWriter, r *http.Request, err error) bool {
	if m.onError != nil {
		return m.onError(w, r, err)
	}
	m.warn(r.Context(), "rate limit not decided, serving the request", "err", err, "path", loggedPath(r.URL.Path))
	return true
}

// maxLoggedPath bounds, in bytes, the path a warning repeats: the client
// chooses it, up to the server's header bound.
const maxLoggedPath = 1024

// loggedPath returns path cut to at most maxLoggedPath bytes, between two
// characters (unless path is not UTF-8 there), with "…" after it when it
// was cut.
func loggedPath(path string) string {
	n := maxLoggedPath
	if len(path) <= n {
		return path
	}
	for i := 1; i < utf8.UTFMax && !utf8.RuneStart(path[n]); i++ {
		n--
	}
	return path[:n] + "…"
}

// warn logs a warning that a failing store may repeat for every request:
// each message at most once per logsample.Interval, the next line counting
// those left out.
func (m *Middleware) warn(ctx context.Context, msg string, args ...any) {
	m.warnings.Warn(ctx, m.logger(), msg, args...)
}

// logger returns the Middleware's logger: Options.Logger, else slog's
// default.
func (m *Middleware) logger() *slog.Logger {
	if m.log == nil {
		return slog.Default()
	}
	return m.log
}

// Handler limits the requests to next: refused requests get a 429 problem
// body; admitted ones reach next with the RateLimit headers already set; a
// leaky-bucket queue's delay is waited out first, Options.OnQueued told
// before the wait (a client that goes away meanwhile leaves the queue at
// once: its queue slot stays spent, the limits that count statuses
// (Options.Count) count it as no answer, and those that count a header
// give its cost back). A request whose turn in
// the queue comes after its context's deadline is refused at once (see
// DecideFor); a gRPC or gRPC-Web call's deadline is the one its
// grpc-timeout header states, as a gRPC server reads it, and the request
// next serves ends with it. A request whose header next may read otherwise
// than the limits do — Content-Type fields that differ, grpc-timeout
// fields that differ in a gRPC or gRPC-Web call, or Connect-Timeout-Ms
// fields that differ in a Connect call — is refused with a 400
// problem before any decision, and spends nothing: which one next reads is
// next's (grpc-go's HTTP/2 transport takes the last grpc-timeout and any
// gRPC Content-Type). A client that leaves before its decision is
// made is not served, and its request is no failure to decide
// (ErrorHandler is not called). Its type, func(http.Handler)
// http.Handler, is the middleware of net/http and of routers such as chi;
// see Example_perRoute.
func (m *Middleware) Handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if detail := fieldsReadApart(r.Header); detail != "" {
			writeProblem(w, &Problem{Type: "about:blank", Title: "Bad Request", Status: http.StatusBadRequest, Detail: detail})
			return
		}
		r, release := grpcDeadline(r)
		defer release()
		res, err := m.Decide(r)
		if err != nil {
			if r.Context().Err() != nil {
				return // the client left before its decision: nothing to serve, nothing failed
			}
			if m.undecided(w, r, err) {
				next.ServeHTTP(w, r)
			}
			return
		}
		if res.Exempt {
			m.Discard(res)
			next.ServeHTTP(w, r)
			return
		}
		if !res.Decision.Allowed {
			m.Refuse(w, r, res)
			m.Discard(res)
			return
		}
		m.writeHeaders(w.Header(), res)
		if delay := res.Decision.Delay; delay > 0 && !m.queue(w, r, delay) {
			// The client left the queue: its slot stays spent, and it got
			// no answer for the limits that count by response.
			m.DoneUnserved(r.Context(), res)
			return
		}
		if m.countsByResponse(res) {
			m.serveCounted(w, r, res, next)
			return
		}
		defer m.Done(r.Context(), res)
		next.ServeHTTP(w, r)
	})
}

// Done ends an admitted request: it gives back its concurrency leases, if
// any, and releases res. Handler calls it; callers of Decide call it when
// the work the decision admitted has ended. A second Done or Discard of
// res, before any later request, does nothing.
func (m *Middleware) Done(ctx context.Context, res *Result) {
	if res == nil || res.pooled {
		return
	}
	if !res.Exempt && res.Decision.Allowed && holdsLease(&res.Decision) {
		if err := m.limiter.Release(context.WithoutCancel(ctx), res.Checks, &res.Decision); err != nil {
			m.warn(ctx, "concurrency lease not released (it expires by itself)", "err", err)
		}
	}
	m.Discard(res)
}

// holdsLease reports whether d took a concurrency lease: only then is there
// anything to give back (and anything to allocate for it).
func holdsLease(d *sluice.Decision) bool {
	for i := range d.Statuses {
		if d.Statuses[i].Lease != 0 {
			return true
		}
	}
	return false
}

// queue waits out delay, the queue's delay of r, telling OnQueued first;
// it reports whether r's client stayed to the end.
func (m *Middleware) queue(w http.ResponseWriter, r *http.Request, delay time.Duration) bool {
	if m.onQueued != nil {
		m.onQueued(w, r, delay)
	}
	return wait(r.Context(), delay)
}

// wait waits d, or until ctx ends; it reports whether d passed.
func wait(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
