package httplimit

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/sluice-dev/sluice"
)

// Requester describes a caller directly, for services that know who is calling
// and ask for a decision (the decision API) instead of passing the request.
// The most specific field set wins: Subject > APIKey > Token > User > IP.
type Requester struct {
	// Subject is an opaque client name chosen by the caller; the client's
	// Identity.Subject is "ext:" + Subject. With the scope prefix and
	// "ext:" it must fit sluice.MaxKeyLen: a longer one is an error
	// wrapping sluice.ErrInvalidCheck.
	Subject string
	// APIKey is hashed (SHA-256) before use; it is never stored or logged.
	// A key not in Options.Keys under UnknownKeys "ip" (the default) names
	// no one when IP is set (the client is then IP, so that made-up keys
	// mint no quota); without IP, the caller vouching for it, or under
	// "key", it is a client of its own.
	APIKey string
	// Token is a bearer token for Options.Tokens to verify: the client is
	// then the user it names. A token the verifier refuses names no one:
	// the client is then IP, and without IP the call fails with
	// ErrTokenRefused. Without Options.Tokens, a Token is an error.
	Token string
	// User is a user id.
	User string
	// IP is the client's address, grouped by the configured prefixes.
	IP netip.Addr
	// Plan names the plan to apply; empty means the plan the identity
	// resolves to (a known key's plan, the default or anonymous plan).
	Plan string
	// Host is the request's host, for rules' Hosts and their "host" key
	// and for patterns that name a host; empty: none.
	Host string
	// Header holds the request's headers, names in canonical form, for
	// rules that require a header or are keyed by one (or by a cookie).
	// They are believed as the caller's word, as User and IP are, whatever
	// a rule's HeaderFrom; the identity is never read from them. Nil: none.
	// DecideFor reads it during the call and until the Result is given
	// back.
	Header http.Header
}

// ErrUnknownPlan is returned by DecideFor for a Plan that is not configured.
var ErrUnknownPlan = errors.New("unknown plan")

// ErrTokenRefused is returned by DecideFor for a Requester whose Token the
// verifier refuses and who gives no IP to be limited by instead.
var ErrTokenRefused = errors.New("the token is not verified")

// DecideFor decides a request by c to method and path, at c.Host with
// c.Header (matched against the plan's costs, the exempt routes and the
// rules). path is a request URI, escaped as a client sends it, and may
// carry the request's query after a '?': the part before it is the path
// (read both ways, as Middleware reads a request's), and rules keyed by a
// query parameter read the rest. cost ≥ 0 overrides the endpoint's cost
// (its plan's costs); pass -1 to use it. A rule with a cost of its own
// (Rule.Cost) is charged that cost whatever cost is, but for cost 0: a
// peek, which spends nothing of any limit, a rule's included, and so is
// refused by no limit (see sluice.Check) and decides no request: Observer
// is not told of it (see Options.Observer). A rule's FallbackIP keys a c
// without IP by its own subject (see Rule.Fallback). A request that a
// leaky-bucket queue would admit with a Delay ending after ctx's deadline
// is refused by the queue, its RetryAfter that Delay, as Decide refuses
// one whose request's context ends first: what the store can give back of
// it is given back (window charges, concurrency leases), its queue slot
// stays spent, and Options.Observer sees the refusal. Give the Result back
// with Done or Discard.
func (m *Middleware) DecideFor(ctx context.Context, c Requester, method, path string, cost int64) (*Result, error) {
	if m.zero() {
		return nil, errZero()
	}
	id, err := m.identifyRequester(ctx, c)
	if err != nil {
		return nil, err
	}
	res := m.result()
	// A peek is one before its exemptions are judged: an exempt peek
	// decides no request either, so OnExempt is not told of it.
	res.peeking = cost == 0
	// Routes match on the method and path alone: a request made of them,
	// kept in the pooled Result (matching keeps no reference to it).
	path, query, _ := strings.Cut(path, "?")
	res.reqURL = url.URL{Path: path, RawQuery: query}
	if p, err := url.PathUnescape(path); err == nil && p != path {
		res.reqURL.Path, res.reqURL.RawPath = p, path // escaped, as a client sends it
	}
	res.req = http.Request{Method: method, URL: &res.reqURL, Host: c.Host, Header: c.Header}
	r := &res.req
	switch {
	case m.exempt.match(r):
		return m.exempted(r, res, ExemptRoute), nil
	case m.exemptions.byAddress(c.IP.Unmap()):
		return m.exempted(r, res, ExemptAddress), nil
	}
	if by := m.exemptions.byIdentity(&id); by != "" {
		return m.exempted(r, res, by), nil
	}
	res.Exempt, res.ExemptBy, res.Identity, res.plan = false, "", id, m.planOf(id.Plan)
	res.Cost = cost
	if cost < 0 {
		res.Cost = res.plan.costs.cost(r)
	}
	f := requestFacts{r: r, id: &res.Identity, client: true, user: c.User, addr: c.IP.Unmap(), addrDone: true, peek: cost == 0}
	m.matchRules(&f, res)
	return m.decide(ctx, res)
}

func (m *Middleware) identifyRequester(ctx context.Context, c Requester) (Identity, error) {
	var id Identity
	verified := false
	if c.Subject == "" && c.APIKey == "" && c.Token != "" {
		if m.id.tokens == nil {
			return id, fmt.Errorf("%w: no verifier of tokens is configured", ErrTokenRefused)
		}
		from := func() string {
			if !c.IP.IsValid() {
				return "" // a caller's own client, unknown: no budget
			}
			_, sub := m.id.ipSubject(c.IP.Unmap())
			return sub
		}
		if tid := m.id.tokens.resolve(ctx, c.Token, from, m.id.userSubject, m.policy); tid != nil {
			id, verified = *tid, true
		} else if !c.IP.IsValid() {
			return id, ErrTokenRefused
		}
	}
	var keyID Identity
	byKey := false
	if !verified && c.Subject == "" && c.APIKey != "" {
		keyID, byKey = m.keyIdentity(c)
	}
	switch {
	case verified:
	case c.Subject != "":
		if most := sluice.MaxKeyLen - len(m.id.prefix) - len("ext:"); len(c.Subject) > most {
			return id, fmt.Errorf("%w: subject: %d bytes, more than %d", sluice.ErrInvalidCheck, len(c.Subject), most)
		}
		key, sub := scoped(m.id.prefix, "ext:"+c.Subject)
		id = Identity{Kind: KindExternal, Subject: sub, key: key}
	case byKey:
		id = keyID
	case c.User != "" && c.Token == "": // a refused token's client is IP
		key, sub := m.id.userSubject(c.User)
		id = Identity{Kind: KindUser, Subject: sub, key: key}
	case c.IP.IsValid():
		key, sub := m.id.ipSubject(c.IP.Unmap())
		id = Identity{Kind: KindIP, Subject: sub, key: key, Plan: m.policy.Plan(m.policy.AnonymousPlan)}
	default:
		return id, errors.New("no client: set subject, api_key, token, user or ip")
	}
	if c.Plan != "" {
		p := m.policy.Plan(c.Plan)
		if p == nil {
			return id, fmt.Errorf("%w %q", ErrUnknownPlan, c.Plan)
		}
		id.Plan = p
	}
	if id.Plan == nil {
		id.Plan = m.policy.Plan(m.policy.DefaultPlan)
	}
	if id.Plan == nil {
		return id, errors.New("no plan for the client (no default plan configured)")
	}
	return id, nil
}

// keyIdentity returns the identity c's API key names, and whether it
// names one: a listed key does; an unlisted one does unless UnknownKeys is
// "ip" and c gives the client's address, which then names it, as the proxy
// counts such a key (and, as the proxy, keeps no made-up key cached).
func (m *Middleware) keyIdentity(c Requester) (Identity, bool) {
	unlisted := m.id.unlistedAsKey || !c.IP.IsValid()
	id, listed := m.id.lookupKey(c.APIKey, unlisted)
	return id, listed || unlisted
}

// decide runs the checks of res (identity and cost set) and reports it.
// With a penalty box, a client the middleware remembers to be boxed is
// refused without a store call; any other's box is decided with its checks
// (see Penalty), and a refusal of its own counts toward its box.
func (m *Middleware) decide(ctx context.Context, res *Result) (*Result, error) {
	res.Penalized = false
	known := false
	if m.penalty != nil {
		var boxed bool
		if boxed, known = m.boxedHere(res); boxed {
			m.spread(res)
			return res, nil
		}
	}
	res, err := m.decideChecks(ctx, res, known)
	if err != nil {
		return nil, err
	}
	if m.penalty != nil && !m.penalty.p.Uncounted && !res.Decision.Allowed && !res.Penalized {
		m.countRefusal(ctx, res)
	}
	m.spread(res)
	return res, nil
}

// decideChecks runs the checks of res (identity and cost set), with the
// penalty box's guard when there is a box (unless penaltyBox.unguarded),
// and reports it; boxKnown is whether the middleware remembers a box of
// the client that no longer holds (see Middleware.boxedHere).
func (m *Middleware) decideChecks(ctx context.Context, res *Result, boxKnown bool) (*Result, error) {
	if res.plan == nil || res.plan.plan != res.Identity.Plan {
		res.plan = m.planOf(res.Identity.Plan)
	}
	ph, key := m.headersOf(res.plan, res), res.Identity.storeKey(m.id.prefix)
	if res.checksOf == ph && res.checksCost == res.Cost && len(res.Checks) == len(ph.items) {
		// The pooled Result last held the checks of the same limits at
		// the same cost: only the store keys of the client's and the
		// rules' limits differ.
		m.setKeys(res.Checks, res.Identity.Plan, key, res)
	} else {
		res.Checks = m.checks(res.Checks[:0], res.Identity.Plan, key, res.Cost, res)
		res.checksOf, res.checksCost = ph, res.Cost
	}
	var start time.Time
	if m.now == nil { // one clock read serves both
		start = m.clock.now()
		res.Now = start
	} else {
		res.Now = m.now()
		if m.observe != nil {
			start = time.Now()
		}
	}
	n := len(res.Checks)
	guard := m.penalty != nil && !m.penalty.unguarded(key, res, boxKnown)
	if guard {
		res.Checks = m.penalty.guarded(res.Checks, key, res)
	}
	err := m.limiter.Allow(ctx, res.Checks, &res.Decision)
	if guard {
		res.Checks = res.Checks[:n]
		if err == nil {
			m.unguard(res, n, key, boxKnown)
		}
	}
	if err == nil && res.Decision.Allowed && res.Decision.Delay > 0 && !res.peeking {
		m.refuseLate(ctx, res)
	}
	if m.observe != nil && !res.peeking {
		m.observe(res, time.Since(start), err)
	}
	if err != nil {
		m.Discard(res)
		return nil, err
	}
	return res, nil
}

// refuseLate turns res, admitted by a leaky-bucket queue with a Delay
// longer than the time left before ctx's deadline, into a refusal by that
// queue: its turn comes after its caller has given up, so it could not be
// answered in time, and its caller is told at once, as when the queue's
// wait passes its MaxWait. Every enforcing check whose Delay passes the
// deadline is refused, its RetryAfter its Delay (a request sent then finds
// the queue ahead of it drained). What the store can give back is given
// back, as a refusal charges nothing: the charges of fixed and sliding
// windows (with a sluice.Refunder store) and concurrency leases; a queue's
// slot cannot be (a bucket keeps no receipt), and stays spent. A store
// that fails to give back leaves the charge counted, or the lease held
// until it expires, and is logged. res is left as it is without a
// deadline, or with one its turn comes before.
func (m *Middleware) refuseLate(ctx context.Context, res *Result) {
	deadline, ok := ctx.Deadline()
	if !ok {
		return
	}
	d := &res.Decision
	left := time.Until(deadline)
	late := func(i int) bool { return !res.Checks[i].Limit.Shadow() && d.Statuses[i].Delay > left }
	refusing := -1
	for i := range res.Checks {
		if late(i) && (refusing < 0 || d.Statuses[i].Delay > d.Statuses[refusing].Delay) {
			refusing = i
		}
	}
	if refusing < 0 {
		return
	}
	ctx = context.WithoutCancel(ctx)
	if err := m.limiter.Release(ctx, res.Checks, d); err != nil {
		m.warn(ctx, "concurrency lease not released (it expires by itself)", "err", err)
	}
	if err := m.limiter.Refund(ctx, res.Checks, d); err != nil {
		m.warn(ctx, "request refused for its deadline still counted: the refund failed",
			"err", err, "subject", res.Identity.Subject)
	}
	d.Allowed, d.Violated = false, d.Violated[:0]
	for i := range res.Checks {
		if late(i) {
			st := &d.Statuses[i]
			st.Allowed, st.RetryAfter = false, st.Delay
			d.Violated = append(d.Violated, res.Checks[i].Limit.Name())
		}
	}
	st := &d.Statuses[refusing]
	d.Limit, d.Remaining, d.ResetAfter, d.RetryAfter = res.Checks[refusing].Limit, st.Remaining, st.ResetAfter, st.RetryAfter
}

// checks appends to dst the checks of one request of cost units by the
// client whose store key is key on plan: the plan's limits, the limits
// of the rules that matched (res.matched), then the global limits under
// the scope's global key. It allocates nothing when dst has room.
func (m *Middleware) checks(dst []sluice.Check, plan *Plan, key string, cost int64, res *Result) []sluice.Check {
	for _, l := range plan.Limits {
		dst = append(dst, sluice.Check{Key: key, Limit: l, Cost: cost})
	}
	for i, ru := range res.matched {
		for _, l := range ru.limits {
			dst = append(dst, sluice.Check{Key: res.ruleKeys[i], Limit: l, Cost: res.ruleCosts[i]})
		}
	}
	for _, l := range m.policy.Global {
		dst = append(dst, sluice.Check{Key: m.globalKey, Limit: l, Cost: cost})
	}
	return dst
}

// setKeys sets the store keys of checks, built by checks for the same plan,
// rules and cost, to those of the client whose store key is key and of the
// rules' keys in res, and the rules' checks to their costs in res (a rule
// of a cost of its own costs it, or 0 in a peek, whatever the plan's).
func (m *Middleware) setKeys(checks []sluice.Check, plan *Plan, key string, res *Result) {
	i := 0
	for range plan.Limits {
		checks[i].Key = key
		i++
	}
	for j, ru := range res.matched {
		for range ru.limits {
			checks[i].Key, checks[i].Cost = res.ruleKeys[j], res.ruleCosts[j]
			i++
		}
	}
}

// Policy returns the policy the middleware enforces.
func (m *Middleware) Policy() *Policy { return m.policy }
