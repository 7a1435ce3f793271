package sim

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/sluice-dev/sluice"
)

// APIAnalysis is what DesignAPI returns: a design for every limit of a
// whole API, the simulations behind each, and the two documents a person
// takes away.
type APIAnalysis struct {
	// Requirements are the input with defaults applied.
	Requirements APIRequirements `json:"requirements"`
	// Store is "memory" or "redis"; RedisMode its deployment;
	// OnStoreError the config's on_store_error (Redis only).
	Store        string `json:"store"`
	RedisMode    string `json:"redis_mode,omitempty"`
	OnStoreError string `json:"on_store_error,omitempty"`
	// Plans are the designed plans: the requirement's, then the anonymous
	// plan when one was designed, then one per internal caller.
	Plans []PlanDesign `json:"plans"`
	// DefaultPlan and AnonymousPlan name the plans of identified and of
	// address-only clients.
	DefaultPlan   string `json:"default_plan"`
	AnonymousPlan string `json:"anonymous_plan"`
	// Global is the design of the capacity limit, named globalLimitName;
	// nil without one.
	Global *LimitDesign `json:"global,omitempty"`
	// Rules are the endpoints' own limits, each a rule of the
	// configuration keyed by client, in the order of the endpoints.
	Rules []RuleDesign `json:"rules,omitempty"`
	// Costs are the endpoints' costs, in every plan.
	Costs map[string]int64 `json:"costs,omitempty"`
	// Warnings are problems of the requirements the design cannot fix,
	// such as a cost no limit's capacity can ever admit.
	Warnings []string `json:"warnings,omitempty"`
	// Markdown is the analysis in five sections: Context Assessment,
	// Recommended Approach, Implementation Steps, Trade-offs and
	// Considerations, Next Steps; then the configuration.
	Markdown string `json:"markdown"`
	// Config is a complete sluice configuration file (YAML).
	Config string `json:"config"`
}

// RuleDesign is an endpoint's own limit: a configuration rule that
// matches the route and limits each client on it, apart from (and
// together with) the plan's limits.
type RuleDesign struct {
	// Name is the rule's name: its limit is called Name + "." + the
	// limit's name in headers, 429 bodies and metrics.
	Name   string      `json:"name"`
	Route  string      `json:"route"`
	Limit  LimitDesign `json:"limit"`
	Method string      `json:"method"`
	Path   string      `json:"path"`
	// Plans are the plans whose clients the rule applies to; empty: every
	// plan's.
	Plans []string `json:"plans,omitempty"`
}

// appliesTo reports whether the rule applies to the clients of plan.
func (r RuleDesign) appliesTo(plan string) bool {
	return len(r.Plans) == 0 || slices.Contains(r.Plans, plan)
}

// PlanDesign is one designed plan.
type PlanDesign struct {
	Name    string `json:"name"`
	Clients int64  `json:"clients"`
	// Internal is true for the plan of an internal caller; Anonymous for
	// the plan designed for address-only clients.
	Internal  bool          `json:"internal,omitempty"`
	Anonymous bool          `json:"anonymous,omitempty"`
	Upgrade   string        `json:"upgrade,omitempty"`
	Limits    []LimitDesign `json:"limits"`
	// Traffic is the requirement's client traffic, used by Profile.
	Traffic APITraffic `json:"traffic"`
}

// LimitDesign is the design of one stated limit.
type LimitDesign struct {
	// Stated is the requirement: quantity per window, burst, precision.
	Stated    string   `json:"stated"`
	Quantity  int64    `json:"quantity"`
	Window    Duration `json:"window"`
	Burst     int64    `json:"burst,omitempty"`
	Precision string   `json:"precision"`
	// Analysis is the one-limit design (Design) behind it: the
	// recommendation, its reasons and the four simulated scenarios.
	Analysis *Analysis `json:"analysis"`
	// Period is the calendar period of a quota per week, month or year
	// ("month"), whose Window is the period's longest; empty otherwise.
	Period string `json:"period,omitempty"`
	// Worst is the most units the recommended limit admitted for one key
	// in any window of the scenarios — for a calendar quota, in one
	// calendar period — against WorstOf (the stated quantity at simulation
	// scale), under WorstPattern.
	Worst        int64  `json:"worst"`
	WorstOf      int64  `json:"worst_of"`
	WorstPattern string `json:"worst_pattern"`
	// Across is, for a calendar quota, the most units the recommended
	// limit admitted for one key in any span of Window, across a period's
	// start (up to twice WorstOf), under AcrossPattern; 0 otherwise.
	Across        int64  `json:"across,omitempty"`
	AcrossPattern string `json:"across_pattern,omitempty"`
	// Profile is the recommended limit replayed on one client's traffic at
	// its peak; nil without a traffic rate.
	Profile *ProfileRun `json:"profile,omitempty"`
}

// ProfileRun is a limit replayed on one client's usual traffic at its peak.
type ProfileRun struct {
	Rate     string   `json:"rate"` // requests per second, at the peak
	Duration Duration `json:"duration"`
	Requests int64    `json:"requests"`
	Refused  int64    `json:"refused"`
	// Scale, when above 1, is how much the traffic and the quota were both
	// divided by to replay a calendar quota's periods within the budget:
	// Requests and Refused are of the divided traffic.
	Scale float64 `json:"scale,omitempty"`
}

// Rec returns the recommendation of d.
func (d LimitDesign) Rec() Recommendation { return d.Analysis.Recommendation }

// DesignAPI designs every limit of a whole API — each plan's, the global
// capacity, the anonymous plan, the internal callers' — by Design's method
// (simulating every algorithm on four patterns, then the recommendation on
// each plan's traffic profile), chooses one store, key strategy, headers
// and degradation levels for all of it, and writes the analysis and a
// complete configuration. A recommended limit never admits more than its
// stated quantity in any window unless its precision is loose; a quota
// per calendar week, month or year is a calendar fixed window, which never
// admits more than its quantity in one calendar period (and up to twice it
// across a period's start). It is deterministic for a given Seed. A
// refused value read by ReadAPIRequirements, and not changed since, is
// reported at its file:line:col.
func DesignAPI(ctx context.Context, req APIRequirements) (*APIAnalysis, error) {
	a, err := designWholeAPI(ctx, req)
	return a, req.src.locate(req, err)
}

func designWholeAPI(ctx context.Context, req APIRequirements) (*APIAnalysis, error) {
	req, err := req.withDefaults()
	if err != nil {
		return nil, err
	}
	a := &APIAnalysis{Requirements: req}
	a.Store, a.RedisMode = req.Store, req.RedisMode
	if a.Store == "auto" {
		a.Store = "memory"
		if req.Instances > 1 {
			a.Store = "redis"
		}
	}
	if err := a.designAll(ctx); err != nil {
		return nil, err
	}
	if a.Store == "memory" && req.Store == "auto" && a.stateBytes() > memoryBudget {
		a.Store = "redis"
		a.Plans, a.Global, a.Rules = nil, nil, nil
		if err := a.designAll(ctx); err != nil {
			return nil, err
		}
	}
	if a.Store == "memory" {
		if err := memoryHolds(a.memoryNeed()); err != nil {
			return nil, fmt.Errorf("requirements: %w", err)
		}
	}
	if a.Store == "redis" {
		if a.RedisMode == "" {
			a.RedisMode = "standalone"
			if a.stateBytes() > redisBudget {
				a.RedisMode = "cluster"
			}
		}
		if err := oneServer(a.RedisMode, req.RedisAddresses); err != nil {
			return nil, fmt.Errorf("requirements: %w", err)
		}
		a.OnStoreError = map[string]string{PriorityBalanced: "local", PriorityAvailability: "allow", PriorityProtection: "deny"}[req.Priority]
	}
	a.costs()
	a.Config = a.configYAML()
	a.Markdown = a.markdown()
	return a, nil
}

// globalLimitName is the name of the global limit the designer writes for
// capacity, which no plan's limit beside it may take (config refuses it).
const globalLimitName = "global"

// designAll designs every plan and the global limit on a.Store.
func (a *APIAnalysis) designAll(ctx context.Context) error {
	req := a.Requirements
	for i, p := range req.Plans {
		pd, err := a.designPlan(ctx, PlanDesign{Name: p.Name, Clients: p.Clients, Upgrade: p.Upgrade, Traffic: p.Traffic}, p.Limits, fmt.Sprintf("plans[%d]", i))
		if err != nil {
			return err
		}
		a.Plans = append(a.Plans, pd)
	}
	a.DefaultPlan = req.Plans[0].Name
	for _, p := range req.Plans {
		if p.Default {
			a.DefaultPlan = p.Name
		}
	}
	a.AnonymousPlan = req.Identity.Anonymous
	switch {
	case a.AnonymousPlan != "":
	case !req.Identity.APIKeys && req.Identity.UserHeader == "":
		a.AnonymousPlan = a.DefaultPlan // every client is known by address only
	default:
		if err := a.designAnonymous(ctx); err != nil {
			return err
		}
	}
	for i, in := range req.Internal {
		pd, err := a.designPlan(ctx, PlanDesign{Name: "internal-" + in.Name, Clients: 1, Internal: true},
			[]APILimit{{Rate: in.Rate, Precision: req.Precision}}, fmt.Sprintf("internal[%d]", i))
		if err != nil {
			return err
		}
		a.Plans = append(a.Plans, pd)
	}
	if err := a.designRules(ctx); err != nil {
		return err
	}
	if req.Capacity != "" {
		d, err := a.designLimit(ctx, APILimit{Rate: req.Capacity, Precision: req.Precision, Name: globalLimitName}, 1, APITraffic{}, false)
		if err != nil {
			return fmt.Errorf("capacity: %w", limitError("capacity", true, err))
		}
		a.Global = &d
	}
	return nil
}

// designRules designs each endpoint's own limits, per client: one rule of
// Limit for every plan's clients (or, beside Limits, for the plans Limits
// does not name), and one of each plan's limit in Limits, scoped to that
// plan. A request of the route spends 1 of it (cost: 1), whatever it costs
// in the plans. Each rule is sized for the clients of every plan it covers:
// the anonymous plan's and the internal callers' among them.
func (a *APIAnalysis) designRules(ctx context.Context) error {
	used := map[string]bool{}
	// The plans' limits' names, which a rule's limit's is not (a plan's
	// limit may be named with a dot); the global limit's, "global", has
	// none.
	planLimits := map[string]bool{}
	for _, p := range a.Plans {
		for _, l := range p.Limits {
			planLimits[l.Rec().Name] = true
		}
	}
	for i, e := range a.Requirements.Endpoints {
		if e.Exempt {
			continue
		}
		type part struct {
			at           string // the rate's field path
			rate, suffix string
			plans        []string // nil: every plan
			clients      int64
		}
		var parts []part
		if e.Limit != "" {
			all := part{at: fmt.Sprintf("endpoints[%d].limit", i), rate: e.Limit}
			for _, p := range a.Plans {
				if _, own := e.Limits[p.Name]; !own {
					all.clients += p.Clients
					if len(e.Limits) > 0 {
						all.plans = append(all.plans, p.Name)
					}
				}
			}
			parts = append(parts, all)
		}
		for _, p := range a.Requirements.Plans {
			if rate, ok := e.Limits[p.Name]; ok {
				parts = append(parts, part{at: fmt.Sprintf("endpoints[%d].limits.%s", i, p.Name), rate: rate, suffix: "-" + p.Name, plans: []string{p.Name}, clients: p.Clients})
			}
		}
		method, path, _ := strings.Cut(e.Route, " ")
		for _, pt := range parts {
			rt, _ := parseRate(pt.rate)
			l := APILimit{Rate: pt.rate, Precision: a.Requirements.Precision, Name: limitName(APILimit{}, rt)}
			// The rule's limit is named <rule>.<limit>, within maxNameLen:
			// the route's part of the rule's name gives way to the plan's.
			// That name is no plan's limit's, which config refuses.
			most := maxNameLen - len("."+l.Name)
			taken := maps.Clone(used)
			for n := range planLimits {
				if rule, ok := strings.CutSuffix(n, "."+l.Name); ok {
					taken[rule] = true
				}
			}
			name := freeName(ruleName(e.Route, most-suffixRoom-len(pt.suffix))+pt.suffix, most, taken)
			used[name] = true
			d, err := a.designLimit(ctx, l, max(pt.clients, 1), APITraffic{}, true)
			if err != nil {
				return fmt.Errorf("endpoint %s: %w", e.Route, limitError(pt.at, true, err))
			}
			a.Rules = append(a.Rules, RuleDesign{Name: name, Route: e.Route, Limit: d, Method: method, Path: path, Plans: pt.plans})
		}
	}
	return nil
}

// ruleName makes a rule name of a route: "GET /api/export" →
// "get-api-export", cut to most characters (at least 12, at most 40).
func ruleName(route string, most int) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(route) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			b.WriteRune(r)
			dash = false
		} else {
			dash = true
		}
	}
	name := b.String()
	name = strings.TrimRight(name[:min(len(name), min(max(most, 12), 40))], "-")
	if name == "" {
		name = "route"
	}
	return name
}

// designAnonymous adds the plan of address-only clients: the default plan's
// limits, divided by ten unless many clients share an address (NAT).
func (a *APIAnalysis) designAnonymous(ctx context.Context) error {
	req := a.Requirements
	var base APIPlan
	at := ""
	for i, p := range req.Plans {
		if p.Name == a.DefaultPlan {
			base, at = p, fmt.Sprintf("plans[%d]", i)
		}
	}
	var limits []APILimit
	for _, l := range base.Limits {
		rt, _ := parseRate(l.Rate)
		q := rt.q
		l.Name = limitName(l, rt)
		if !req.Identity.NAT {
			// A tenth, but never below what the costliest request needs;
			// a stated burst stays a bound (a tenth of 5 is 1, not 0,
			// which states none: the whole quantity at once).
			q = max(q/10, min(q, a.maxCost(false)+1))
			if l.Burst > 0 {
				l.Burst = min(max(l.Burst/10, 1), q)
			}
		}
		l.Rate = rt.withQuantity(q).String()
		limits = append(limits, l)
	}
	name := "anonymous"
	for contains(req.Plans, name) {
		name += "-ip"
	}
	pd, err := a.designPlan(ctx, PlanDesign{Name: name, Clients: base.Clients, Anonymous: true, Upgrade: a.DefaultPlan}, limits, at)
	if err != nil {
		return err
	}
	a.Plans = append(a.Plans, pd)
	a.AnonymousPlan = name
	return nil
}

// designPlan designs each of limits for pd; at is the field path of the
// plan the limits were stated in ("plans[1]"; an internal caller's
// "internal[0]", whose one limit is its rate).
func (a *APIAnalysis) designPlan(ctx context.Context, pd PlanDesign, limits []APILimit, at string) (PlanDesign, error) {
	for i, l := range limits {
		d, err := a.designLimit(ctx, l, pd.Clients, pd.Traffic, pd.Internal)
		if err != nil {
			lat := fmt.Sprintf("%s.limits[%d]", at, i)
			if pd.Internal {
				lat = at
			}
			return pd, fmt.Errorf("plan %s, limit %d (%s): %w", pd.Name, i+1, l.Rate, limitError(lat, false, err))
		}
		pd.Limits = append(pd.Limits, d)
	}
	return pd, nil
}

// designLimit designs one stated limit with Design on the API's store, and
// replays the recommendation on the client traffic profile.
func (a *APIAnalysis) designLimit(ctx context.Context, l APILimit, clients int64, traffic APITraffic, internal bool) (LimitDesign, error) {
	req := a.Requirements
	rt, err := calendarOf(l.Rate, l.Zone, l.Starts)
	if err != nil {
		return LimitDesign{}, rateError("", err)
	}
	q := rt.q
	if c := a.maxCost(internal); c > q {
		// Such a request could never be admitted, and the configuration
		// would be refused at load: say so here.
		return LimitDesign{}, fieldErrorf("rate", "a request may cost %d (%s), more than %s ever admits: raise the limit or lower the cost", c, a.costliest(), l.Rate)
	}
	if c := a.maxCost(internal); l.Burst > 0 && l.Burst < c {
		a.Warnings = append(a.Warnings, fmt.Sprintf("%s costs %d, more than the stated burst of %d of %s: the burst is raised to %d, or those requests could never pass.", a.costliest(), c, l.Burst, l.Rate, c))
		l.Burst = c
	}
	one := Requirements{Rate: l.Rate, Zone: l.Zone, Starts: l.Starts, Burst: l.Burst, Precision: l.Precision, Keys: clients, Instances: req.Instances,
		Store: a.Store, RedisMode: a.RedisMode, RedisAddresses: req.RedisAddresses, Name: limitName(l, rt),
		Seed: req.Seed, MaxArrivals: req.MaxArrivals, minCapacity: a.maxCost(internal)}
	an, err := Design(ctx, one)
	if err != nil {
		return LimitDesign{}, err
	}
	if s := an.Recommendation.burstAcross(an.Requirements); s != "" {
		a.Warnings = append(a.Warnings, s)
	}
	d := LimitDesign{Stated: statedText(rt, l.Burst), Quantity: q, Window: Duration(rt.w), Burst: l.Burst,
		Precision: an.Requirements.Precision, Analysis: an, WorstOf: an.Scale.Quantity}
	d.Worst, d.WorstPattern = an.worst(an.Recommendation.Label)
	if rt.calendar() {
		d.Period = rt.period.String()
		d.Across, d.AcrossPattern = d.Worst, d.WorstPattern
		d.Worst, d.WorstPattern = an.worstPeriod(an.Recommendation.Label)
	}
	if traffic.Rate != "" {
		if d.Profile, err = profile(ctx, an, traffic, req); err != nil {
			return d, err
		}
	}
	return d, nil
}

// statedText writes a stated limit: "100/1m", "100/1m, bursts ≤ 20",
// "100000/month" or "100000/month from the 15th, UTC+09:00".
func statedText(rt rate, burst int64) string {
	s := rt.String()
	if rt.calendar() && (rt.zone != "" || rt.starts != "") {
		s += " " + rt.startText()
	}
	if burst > 0 && burst < rt.q {
		s += fmt.Sprintf(", bursts ≤ %d", burst)
	}
	return s
}

// profile replays the configured limit (one instance's share when the
// quota is divided) on one client's Poisson traffic at its peak rate, for
// ten windows or as long as the arrival budget allows. A calendar quota's
// ten periods are replayed whole: when they hold more than the budget, the
// traffic and the quota are both divided by ProfileRun.Scale, which keeps
// the share refused. Traffic too thin to send one request in that time
// replays none: 0 refused of 0.
func profile(ctx context.Context, an *Analysis, t APITraffic, req APIRequirements) (*ProfileRun, error) {
	tq, tw, _ := ParseRate(t.Rate)
	perSecond := float64(tq) / tw.Seconds() * t.Peak
	rec := an.Recommendation
	quantity, burst := rec.Quantity, rec.Burst
	if rec.PerInstance { // the client's requests reach every instance in turn
		perSecond /= float64(req.Instances)
	}
	rt := rec.rate()
	d := 10 * rec.Window.D()
	rateSim, scale := perSecond, int64(1)
	if n := perSecond * d.Seconds(); rt.calendar() && n > float64(req.MaxArrivals) {
		scale = min(int64(math.Ceil(n/float64(req.MaxArrivals))), quantity)
		rt = rt.withQuantity(quantity / scale)
		rateSim = perSecond * float64(rt.q) / float64(quantity) // the same share of the quota
	}
	if most := float64(req.MaxArrivals) / rateSim; most < d.Seconds() { // converted only when in range
		d = max(time.Duration(most*float64(time.Second)).Truncate(time.Millisecond), time.Millisecond)
	}
	alg, err := sluice.ParseAlgorithm(rec.Algorithm)
	if err != nil {
		return nil, err
	}
	l, err := rt.limit(alg, burst, rec.MaxWait.D())
	if err != nil {
		return nil, err
	}
	tr, err := generateFor(ctx, Pattern{Name: PatternSteady, Rate: rateSim, Duration: Duration(d), Keys: 1, Seed: req.Seed},
		rt, 2*req.MaxArrivals)
	if err != nil {
		return nil, fmt.Errorf("traffic profile: %w", err)
	}
	p := &ProfileRun{Rate: fmt.Sprintf("%.3g/s", perSecond), Duration: Duration(d)}
	if len(tr.Arrivals) == 0 {
		return p, nil
	}
	res, err := Run(ctx, tr, Config{Quantity: rt.q, Window: rt.w, Period: rt.period, Offset: rt.offset,
		Contenders: []Contender{{Label: "profile", Limit: l}}, Seed: req.Seed})
	if err != nil {
		return nil, fmt.Errorf("traffic profile: %w", err)
	}
	f := res.Algorithms[0]
	p.Requests, p.Refused = f.Decisions, f.Rejected
	if scale > 1 {
		p.Scale = float64(quantity) / float64(rt.q)
	}
	return p, nil
}

// stateBytes is the state every limit of the design needs at most, with
// the store's bookkeeping.
func (a *APIAnalysis) stateBytes() float64 {
	var total float64
	for _, p := range a.Plans {
		for _, l := range p.Limits {
			total += stateEstimate(l.Rec(), l.Analysis.Requirements)
		}
	}
	for _, r := range a.Rules {
		total += stateEstimate(r.Limit.Rec(), r.Limit.Analysis.Requirements)
	}
	return total
}

// memoryNeed is what every limit of the design keeps at most in a memory
// store: a state per client and limit, the units they count toward
// max_keys (a sliding log's room counts too), and the longest log.
func (a *APIAnalysis) memoryNeed() storeNeed {
	var n storeNeed
	for _, p := range a.Plans {
		for _, l := range p.Limits {
			n.add(l.Analysis.Requirements.Keys, l.Rec())
		}
	}
	for _, r := range a.Rules {
		n.add(r.Limit.Analysis.Requirements.Keys, r.Limit.Rec())
	}
	if a.Global != nil {
		n.add(1, a.Global.Rec())
	}
	return n
}

// costs collects the endpoints' costs and warns of traffic that the
// limits refuse even without peaks.
func (a *APIAnalysis) costs() {
	a.Costs = map[string]int64{}
	for _, e := range a.Requirements.Endpoints {
		if e.Cost != nil && !e.Exempt {
			a.Costs[e.Route] = *e.Cost
		}
	}
	for _, p := range a.Plans {
		if p.Traffic.Rate == "" {
			continue
		}
		tq, tw, _ := ParseRate(p.Traffic.Rate)
		for _, l := range p.Limits {
			if usual := float64(tq) * l.Window.D().Seconds() / tw.Seconds(); usual > float64(l.Quantity) {
				a.Warnings = append(a.Warnings, fmt.Sprintf("plan %s's usual traffic (%s per client) is %.0f per %s, above its %s limit of %d: even without peaks its clients would be refused.",
					p.Name, p.Traffic.Rate, usual, l.Rec().rate().span(), l.Rec().Name, l.Quantity))
			}
		}
	}
	slices.Sort(a.Warnings)
	a.Warnings = slices.Compact(a.Warnings) // a limit shared by two plans warns once
}

// maxCost is the most one request may cost: the largest endpoint cost (the
// costs apply to every plan but the internal callers'), at least 1.
func (a *APIAnalysis) maxCost(internal bool) int64 {
	c := int64(1)
	for _, e := range a.Requirements.Endpoints {
		if e.Cost != nil && !e.Exempt && !internal {
			c = max(c, *e.Cost)
		}
	}
	return c
}

// costliest names the costliest endpoint.
func (a *APIAnalysis) costliest() string {
	route, c := "", int64(0)
	for _, e := range a.Requirements.Endpoints {
		if e.Cost != nil && !e.Exempt && *e.Cost > c {
			route, c = e.Route, *e.Cost
		}
	}
	return route
}
