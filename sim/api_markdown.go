package sim

import (
	"fmt"
	"math/big"
	"slices"
	"strings"
	"time"
)

// APISections returns the headings of an API analysis, in order: a new
// slice on each call.
func APISections() []string { return slices.Clone(apiSections[:]) }

// apiSections are the headings of an API analysis, in order.
var apiSections = [...]string{"## Context Assessment", "## Recommended Approach", "## Implementation Steps",
	"## Trade-offs and Considerations", "## Next Steps"}

// planList names plans in prose: "plan free", "plans free, pro and team".
func planList(plans []string) string {
	if len(plans) == 1 {
		return "plan " + plans[0]
	}
	return "plans " + strings.Join(plans[:len(plans)-1], ", ") + " and " + plans[len(plans)-1]
}

// PolicyHeader returns the RateLimit-Policy header (ietf mode) that a
// client of plan is sent under the design's configuration on a request
// matched by the rules of routes (endpoints with limits of their own, by
// their route as the requirements write it): the plan's limits, the limits
// of those rules that apply to plan's clients (named rule.limit), then the
// global limit — the order in
// which they are checked — each as
// "name";q=…;w=…. A window algorithm's quota is its quantity per its
// window; a bucket's (GCRA) is its burst per the time the whole burst
// takes to refill, as draft-ietf-httpapi-ratelimit-headers states a
// bucket; w is in whole seconds, rounded up. A calendar quota's periods
// differ in length, so it is stated without w ("per-month";q=100000). It
// is "" for a plan the design does not have.
func (a *APIAnalysis) PolicyHeader(plan string, routes ...string) string {
	var items []string
	for _, p := range a.Plans {
		if p.Name != plan {
			continue
		}
		for _, l := range p.Limits {
			items = append(items, policyItem(l.Rec(), ""))
		}
		for _, r := range a.Rules {
			if slices.Contains(routes, r.Route) && r.appliesTo(plan) {
				items = append(items, policyItem(r.Limit.Rec(), r.Name+"."))
			}
		}
		if a.Global != nil {
			items = append(items, policyItem(a.Global.Rec(), ""))
		}
	}
	return strings.Join(items, ", ")
}

// policyItem is one limit's RateLimit-Policy item, its name after prefix.
func policyItem(r Recommendation, prefix string) string {
	if r.Period != "" {
		return fmt.Sprintf("%q;q=%d", prefix+r.Name, r.Quantity)
	}
	q, span := r.Quantity, r.Window.D()
	if r.Burst > 0 { // a bucket: its burst, refilled in ⌈burst·W/Q⌉ µs, plus any queue wait
		q = r.Burst
		refill := new(big.Int).Mul(big.NewInt(r.Burst), big.NewInt(int64(span/time.Microsecond)))
		refill.Add(refill, big.NewInt(r.Quantity-1)).Quo(refill, big.NewInt(r.Quantity))
		span = time.Duration(refill.Int64())*time.Microsecond + r.MaxWait.D()
	}
	return fmt.Sprintf("%q;q=%d;w=%d", prefix+r.Name, q, (span+time.Second-1)/time.Second)
}

// markdown writes the analysis in the five sections of APISections.
func (a *APIAnalysis) markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Rate Limiter Designer Analysis: %s\n\n", a.Requirements.Name)
	a.contextSection(&b)
	a.approachSection(&b)
	a.stepsSection(&b)
	a.tradeOffsSection(&b)
	a.nextSection(&b)
	b.WriteString("## Configuration\n\nSave as `sluice.yaml` (`sluice check sluice.yaml` validates it):\n\n```yaml\n")
	b.WriteString(a.Config)
	b.WriteString("```\n")
	return b.String()
}

func (a *APIAnalysis) contextSection(b *strings.Builder) {
	req := a.Requirements
	clients := int64(0)
	for _, p := range req.Plans {
		clients += p.Clients
	}
	fmt.Fprintf(b, "%s\n\n", apiSections[0])
	fmt.Fprintf(b, "%s serves %s to about %s at once, through %s.", req.Name, plural(len(req.Plans), "plan"), plural(clients, "client"), plural(req.Instances, "instance"))
	if req.Capacity != "" {
		fmt.Fprintf(b, " The backend takes at most %s from everyone together.", req.Capacity)
	}
	b.WriteString(" Limits are simulated on sluice's own algorithm code before they are recommended.\n\n")
	b.WriteString("| plan | clients | stated limits | one client's traffic (peak) |\n|---|---:|---|---|\n")
	for _, p := range req.Plans {
		var stated []string
		for _, l := range p.Limits {
			rt, _ := calendarOf(l.Rate, l.Zone, l.Starts)
			stated = append(stated, fmt.Sprintf("%s (%s)", statedText(rt, l.Burst), l.Precision))
		}
		traffic := "not stated"
		if p.Traffic.Rate != "" {
			traffic = fmt.Sprintf("%s (× %g at peak)", p.Traffic.Rate, p.Traffic.Peak)
		}
		fmt.Fprintf(b, "| %s | %d | %s | %s |\n", p.Name, p.Clients, strings.Join(stated, ", "), traffic)
	}
	b.WriteString("\n")
	id := req.Identity
	var who []string
	if id.APIKeys {
		who = append(who, "API keys")
	}
	if id.UserHeader != "" {
		who = append(who, "user ids in "+id.UserHeader)
	}
	who = append(who, "IP addresses")
	fmt.Fprintf(b, "- Clients are known by %s.", strings.Join(who, ", then "))
	if id.NAT {
		b.WriteString(" Many share an address (NAT): one address is many people.")
	}
	b.WriteString("\n")
	fmt.Fprintf(b, "- Precision by default: %s; store: %s; when the store fails, priority to %s.\n", req.Precision, req.Store, req.Priority)
	if len(req.Endpoints) > 0 {
		fmt.Fprintf(b, "- %s with costs, limits of their own, exemptions or degradation classes.\n", plural(len(req.Endpoints), "endpoint"))
	}
	if len(req.Internal) > 0 {
		fmt.Fprintf(b, "- Internal callers: %d.\n", len(req.Internal))
	}
	if req.Overload.set() {
		fmt.Fprintf(b, "- Overloaded at %s.\n", thresholdsYAML(req.Overload, 1))
	}
	for _, w := range a.Warnings {
		fmt.Fprintf(b, "- **Warning**: %s\n", w)
	}
	b.WriteString("\n")
}

func (a *APIAnalysis) approachSection(b *strings.Builder) {
	req := a.Requirements
	fmt.Fprintf(b, "%s\n\n### Limits\n\n", apiSections[1])
	b.WriteString("Every stated limit was designed on its own (algorithm chosen from its burst tolerance, precision and memory), then simulated with every algorithm on four traffic patterns — boundary bursts, a ten-fold spike, steady overload, a Zipf-skewed population — and on the plan's own traffic at its peak. *Worst window* is the most the recommended limit admitted for one client in any window, against the stated quantity (at simulation scale)")
	if a.hasCalendar() {
		b.WriteString("; for a quota per calendar period, the most in one period, then the most in any span of its longest period, across a period's start")
	}
	b.WriteString(".\n\n")
	b.WriteString("| plan | limit | stated (precision) | recommended | worst window | at the plan's peak |\n|---|---|---|---|---:|---|\n")
	each := func(plan string, d LimitDesign) {
		rec := d.Rec()
		worst := fmt.Sprintf("%d of %d", d.Worst, d.WorstOf)
		if d.Worst > d.WorstOf {
			worst += fmt.Sprintf(" (%s, %s)", overshootText(100*float64(d.Worst-d.WorstOf)/float64(d.WorstOf)), d.WorstPattern)
		}
		if d.Period != "" {
			worst = fmt.Sprintf("%s in one %s; %d in %s", worst, d.Period, d.Across, rec.rate().span())
			if d.Across > d.WorstOf {
				worst += fmt.Sprintf(" (%s, %s)", overshootText(100*float64(d.Across-d.WorstOf)/float64(d.WorstOf)), d.AcrossPattern)
			}
		}
		peak := "—"
		if p := d.Profile; p != nil {
			peak = fmt.Sprintf("%s refused of %d at %s over %s", formatPct(100*float64(p.Refused)/float64(max(p.Requests, 1))), p.Requests, p.Rate, p.Duration)
			if p.Scale > 1 {
				peak = fmt.Sprintf("%s refused at %s over %s (replayed at 1/%.4g of the traffic and of the quota: %s)",
					formatPct(100*float64(p.Refused)/float64(max(p.Requests, 1))), p.Rate, p.Duration, p.Scale, plural(p.Requests, "request"))
			}
		}
		fmt.Fprintf(b, "| %s | %s | %s (%s) | %s | %s | %s |\n", plan, rec.Name, d.Stated, d.Precision, limitText(rec), worst, peak)
	}
	for _, p := range a.Plans {
		for _, l := range p.Limits {
			each(p.Name, l)
		}
	}
	for _, r := range a.Rules {
		each("(rule "+r.Name+")", r.Limit)
	}
	if a.Global != nil {
		each("(global)", *a.Global)
	}
	b.WriteString("\nWhy each algorithm:\n\n")
	seen := map[string]bool{}
	why := func(plan string, d LimitDesign) {
		r := d.Rec().Reasons[0]
		if seen[r] {
			return
		}
		seen[r] = true
		fmt.Fprintf(b, "- %s %s: %s\n", plan, d.Rec().Name, r)
	}
	for _, p := range a.Plans {
		for _, l := range p.Limits {
			why(p.Name, l)
		}
	}
	for _, r := range a.Rules {
		why("rule "+r.Name, r.Limit)
	}
	if a.Global != nil {
		why("global", *a.Global)
	}

	b.WriteString("\n### Key strategy\n\n")
	id := req.Identity
	if id.APIKeys {
		b.WriteString("- An API key (`Authorization: Bearer`, `X-API-Key`) is the client: it is hashed (SHA-256) before it becomes a store key, a metric label or a log line. Only keys listed under `keys:` get their plan; an unlisted key is limited by address (`unknown_keys: ip`), so a client cannot mint fresh quota by inventing keys.\n")
	}
	if id.UserHeader != "" {
		fmt.Fprintf(b, "- Without a key, the user id in `%s` — believed only from `trusted_proxies`, which must strip a client's own copy.\n", id.UserHeader)
	}
	fmt.Fprintf(b, "- Otherwise the address (IPv4 /32, IPv6 /64), on plan **%s**.", a.AnonymousPlan)
	if id.NAT {
		b.WriteString(" Many clients share addresses here, so the address plan keeps the default plan's limits rather than a tenth of them: an office behind one NAT is not one person. Prefer keys or user ids wherever you can.")
	}
	b.WriteString("\n")
	if len(id.TrustedProxies) > 0 {
		fmt.Fprintf(b, "- `X-Forwarded-For` is believed only from %s (its rightmost untrusted hop is the client).\n", strings.Join(id.TrustedProxies, ", "))
	} else {
		b.WriteString("- No trusted proxies were stated: the peer address is the client. Behind a load balancer, list its addresses under `identity.trusted_proxies` or every client will look like the balancer.\n")
	}

	b.WriteString("\n### Store and failure policy\n\n")
	switch a.Store {
	case "redis":
		fmt.Fprintf(b, "A Redis store (%s) shared by %s: one Lua script per decision checks all of a request's limits atomically (all or nothing) with Redis's clock, so instances' clocks cannot leak quota. ", a.RedisMode, plural(req.Instances, "instance"))
		fmt.Fprintf(b, "Redis down: `on_store_error: %s` — %s.\n", a.OnStoreError, map[string]string{
			"local": "each instance decides in memory with every quota divided by the number of instances, roughly right instead of open or closed",
			"allow": "every request is admitted until Redis is back (availability first; the backend must take the load)",
			"deny":  "every request is refused until Redis is back (protection first; clients see 503s)",
		}[a.OnStoreError])
	default:
		if req.Instances > 1 {
			fmt.Fprintf(b, "Each of the %d instances keeps its own count in memory, configured with its share of every quota: right as far as the load balancer spreads each client evenly.\n", req.Instances)
		} else {
			fmt.Fprintf(b, "One instance: the in-memory store decides in well under a microsecond, for about %s of state at most. A restart forgets it.\n", formatBytes(a.stateBytes()))
		}
	}

	b.WriteString("\n### Headers and refusals\n\n")
	fmt.Fprintf(b, "Every response carries the RateLimit headers (%s); a refusal is a 429 with `Retry-After` (seconds, rounded up, never earlier than the quota returns), `Cache-Control: no-store` and an RFC 9457 problem body naming the violated limits and the plan to upgrade to. Clients of each plan are told:\n\n", strings.Join(req.Headers, ", "))
	for _, p := range a.Plans {
		fmt.Fprintf(b, "- %s: `RateLimit-Policy: %s`\n", p.Name, a.PolicyHeader(p.Name))
	}

	a.endpointsText(b)
	if a.Global != nil {
		rec := a.Global.Rec()
		worst := fmt.Sprintf("Its worst simulated window was %d of %d.", a.Global.Worst, a.Global.WorstOf)
		if g := a.Global; g.Period != "" {
			worst = fmt.Sprintf("Its worst simulated %s admitted %d of %d, and %d within %s across a %s's start.", g.Period, g.Worst, g.WorstOf, g.Across, rec.rate().span(), g.Period)
		}
		fmt.Fprintf(b, "\n### Global limit\n\n%s across all clients (`global:`), checked in the same atomic call as each client's limits: %s. %s\n",
			a.Global.Stated, limitText(rec), worst)
	}
	if len(req.Internal) > 0 {
		b.WriteString("\n### Internal callers\n\nInternal services and batch jobs are limited too, so that a retry loop cannot take the API down from inside. Each has a plan of its own, chosen with the `X-Plan` header, which is believed only from `trusted_proxies` (add the callers' addresses there):\n\n")
		for _, p := range a.Plans {
			if p.Internal {
				fmt.Fprintf(b, "- `X-Plan: %s` — %s. A batch job can pace itself with sluice's client package (a RoundTripper that honours Retry-After).\n", p.Name, limitText(p.Limits[0].Rec()))
			}
		}
	}
	a.degradationText(b)
	b.WriteString("\n")
}

func (a *APIAnalysis) endpointsText(b *strings.Builder) {
	req := a.Requirements
	if len(req.Endpoints) == 0 {
		return
	}
	b.WriteString("\n### Endpoints\n\n")
	exempt, _, _ := exemptRoutes(req.Endpoints)
	for _, e := range req.Endpoints {
		var what []string
		if e.Exempt {
			what = append(what, "never limited (`exempt`)")
		} else if p := exempt.Covering(e.Route); p != "" {
			what = append(what, fmt.Sprintf("never limited: the exempt route `%s` takes every request of it", p))
		} else if e.Cost != nil {
			what = append(what, fmt.Sprintf("costs %s of every plan limit", plural(*e.Cost, "unit")))
		}
		for _, r := range a.Rules {
			if r.Route == e.Route {
				whose := "per client"
				if len(r.Plans) > 0 {
					whose = "per client of " + planList(r.Plans)
				}
				what = append(what, fmt.Sprintf("its own limit of %s %s is the rule `%s` (%s), checked with the plan's limits in one atomic call; each request spends 1 of it, and clients see it as `%s.%s`",
					r.Limit.Stated, whose, r.Name, limitText(r.Limit.Rec()), r.Name, r.Limit.Rec().Name))
			}
		}
		if e.Class != "" {
			what = append(what, "degradation class "+e.Class)
		}
		if len(what) == 0 {
			what = append(what, "costs 1 unit")
		}
		fmt.Fprintf(b, "- `%s`: %s.\n", e.Route, strings.Join(what, "; "))
	}
}

func (a *APIAnalysis) degradationText(b *strings.Builder) {
	o := a.Requirements.Overload
	b.WriteString("\n### Degradation tiers\n\n")
	if !o.set() {
		b.WriteString("No overload thresholds were stated, so the configuration has no degradation section. State `overload: {in_flight, p99, error_rate}` to get three levels.\n")
		return
	}
	classes := func(c string) string {
		var r []string
		for _, e := range a.Requirements.Endpoints {
			if e.Class == c {
				r = append(r, "`"+e.Route+"`")
			}
		}
		if len(r) == 0 {
			return "(none stated)"
		}
		return strings.Join(r, ", ")
	}
	behaviour := map[string]string{
		"elevated": "every limit × 0.5; expensive endpoints " + classes(ClassExpensive) + " answer 503",
		"high":     "reads served from a 30 s stale cache (proxy mode); writes refused except critical " + classes(ClassCritical),
		"critical": "only health checks " + classes(ClassHealth) + " answer",
	}
	b.WriteString("Entered when any signal reaches its threshold, left when all are below the lower one for 10 s (hysteresis), one level at a time; a 503 carries `Retry-After`.\n\n| level | enter at | leave below | behaviour |\n|---|---|---|---|\n")
	for _, s := range degradationSteps {
		fmt.Fprintf(b, "| %s | %s | %s | %s |\n", s.level, thresholdsYAML(o, s.enter), thresholdsYAML(o, s.leave), behaviour[s.level])
	}
}

func (a *APIAnalysis) stepsSection(b *strings.Builder) {
	req := a.Requirements
	fmt.Fprintf(b, "%s\n\n", apiSections[2])
	steps := []string{
		"Save the configuration below as `sluice.yaml` and validate it: `sluice check sluice.yaml` prints every plan and limit.",
	}
	if req.Identity.APIKeys {
		steps = append(steps, "List your API keys under `keys:` by SHA-256 (`printf %s KEY | sha256sum`) with their plans; never the keys themselves.")
	}
	if a.Store == "redis" {
		steps = append(steps, fmt.Sprintf("Run Redis (%s) where every instance reaches it with a round trip well under a millisecond, and point `store.redis.addresses` at it.", a.RedisMode))
	}
	steps = append(steps,
		"Deploy in shadow mode first: `sluice design -requirements … -shadow` writes every limit with `shadow: true` — evaluated, reported in headers and metrics, never refusing. Put sluice in front of the API (reverse proxy with `upstream:`, or forward-auth from nginx, Traefik or Caddy).",
		"Watch for a week: `sluice_decisions_total{result=\"shadow\"}` by plan and limit (what enforcing would refuse), `sluice_near_limit_total` (clients near their quota), `sluice_decision_seconds` (the decision's cost) and, on Redis, `sluice_store_errors_total` and `sluice_fallback_decisions_total`. The refusals you see should be the ones you want.",
		"Enforce plan by plan (remove `shadow: true`), starting with the anonymous plan, and keep watching the same metrics plus the 429 rate.",
	)
	if req.Overload.set() {
		steps = append(steps, "Check the degradation levels by pinning one: `curl -X PUT …/v1/degradation -d '{\"level\":\"elevated\"}'` on the admin listener (scope admin), then release it with DELETE.")
	}
	steps = append(steps, "Publish the client documentation sluice serves at `/docs` (plans, limits, costs, headers, how to back off).")
	for i, s := range steps {
		fmt.Fprintf(b, "%d. %s\n", i+1, s)
	}
	b.WriteString("\n")
}

func (a *APIAnalysis) tradeOffsSection(b *strings.Builder) {
	req := a.Requirements
	fmt.Fprintf(b, "%s\n\n", apiSections[3])
	var out []string
	for _, p := range a.Plans {
		for _, l := range p.Limits {
			rec := l.Rec()
			switch {
			case l.Period != "":
				out = append(out, calendarTradeOff(p, l))
			case l.Precision == PrecisionLoose && l.Worst > l.WorstOf:
				out = append(out, fmt.Sprintf("%s %s is loose by request: it admitted up to %d of %d in one window (%s), the price of the simplest limit.", p.Name, rec.Name, l.Worst, l.WorstOf, l.WorstPattern))
			case rec.Algorithm == "gcra" && l.Precision != PrecisionLoose && rec.Quantity < l.Quantity:
				out = append(out, fmt.Sprintf("%s %s sustains %d per %s, not %d: its burst of %d is the headroom that keeps every window within %d. For the full rate sustained, use the exact sliding-window-log (16 bytes per admission in the window).", p.Name, rec.Name, rec.Quantity, rec.Window, l.Quantity, rec.Burst, l.Quantity))
			case rec.Algorithm == "sliding-window-log":
				out = append(out, fmt.Sprintf("%s %s is exact but keeps every admission still in the window: up to %s per client.", p.Name, rec.Name, formatBytes(16*float64(rec.Quantity))))
			}
		}
	}
	if a.Store == "redis" {
		out = append(out, "Every decision is a Redis round trip; one script checks all of a request's limits, so the cost does not grow with their number. A standalone Redis is a single point of failure: Sentinel or Cluster adds failover.")
	} else if req.Instances > 1 {
		out = append(out, "Per-instance quotas drift when a client's requests are spread unevenly; a Redis store shares one exact count.")
	}
	if req.Identity.NAT {
		out = append(out, "Limiting by address is unfair behind NAT either way: strict address limits block an office together, loose ones let one abuser take more. Keys or user ids are the real fix.")
	}
	if a.Global != nil {
		out = append(out, "The global limit protects the backend but is shared: one heavy plan can use it up for everyone. Per-plan limits that add up to less than the capacity keep that rare.")
	}
	out = append(out, "Conflicting requirements are resolved by the stated precision: strict and approximate limits never exceed what you stated (approximate may refuse a little earlier to save memory); only loose limits may exceed it.")
	if a.Store == "memory" && req.Instances == 1 {
		out = append(out, "Scale: one instance with the in-memory store is the simplest deployment that meets these requirements; revisit the store (Redis) when a second instance is added or restarts must not reset quotas.")
	}
	out = append(out, "Simpler alternative, if this is more than the team wants to run at first: the same plans with loose precision (fixed windows, 16 bytes a client, quotas that reset at the top of each window) — at the price of bursts up to twice a limit across a window boundary. docs/designer.md explains each algorithm, and `sluice simulate -pattern boundary-burst` shows the difference on a chart.")
	for _, t := range out {
		fmt.Fprintf(b, "- %s\n", t)
	}
	b.WriteString("\n")
}

// hasCalendar reports whether a limit of the design is a calendar quota.
func (a *APIAnalysis) hasCalendar() bool {
	for _, p := range a.Plans {
		for _, l := range p.Limits {
			if l.Period != "" {
				return true
			}
		}
	}
	for _, r := range a.Rules {
		if r.Limit.Period != "" {
			return true
		}
	}
	return a.Global != nil && a.Global.Period != ""
}

// calendarTradeOff is what plan p's calendar quota l gives up, and what
// bounds its bursts.
func calendarTradeOff(p PlanDesign, l LimitDesign) string {
	rec := l.Rec()
	s := fmt.Sprintf("%s %s is a quota per calendar %s, whole again when the next %s starts: never more than %d of %d in one %s in the simulations, but %d within %s across a %s's start (%s) — the end of one %s's quota and the whole of the next's.",
		p.Name, rec.Name, l.Period, l.Period, l.Worst, l.WorstOf, l.Period, l.Across, rec.rate().span(), l.Period, l.AcrossPattern, l.Period)
	var beside []string
	for _, o := range p.Limits {
		if o.Period == "" && o.Window.D() < 24*time.Hour {
			beside = append(beside, o.Rec().Name)
		}
	}
	if len(beside) > 0 {
		return s + fmt.Sprintf(" The plan's %s bound%s how fast it is spent.", strings.Join(beside, " and "), map[bool]string{true: "s", false: ""}[len(beside) == 1])
	}
	return s + " Nothing in the plan bounds how fast it is spent: add a limit per second or minute beside it."
}

func (a *APIAnalysis) nextSection(b *strings.Builder) {
	fmt.Fprintf(b, "%s\n\n", apiSections[4])
	b.WriteString("- Now: validate the configuration and start it in shadow mode in front of one instance.\n")
	for _, p := range a.Plans {
		if p.Internal || p.Anonymous {
			continue
		}
		l := p.Limits[0]
		rec := l.Rec()
		rt := rec.rate()
		fmt.Fprintf(b, "- Replay a day of %s's real traffic (`time,key,cost` lines): `sluice simulate -trace %s.csv -limit %s", p.Name, p.Name, rt)
		if rec.Burst > 0 {
			fmt.Fprintf(b, " -burst %d", rec.Burst)
		}
		algorithms := rec.Algorithm + ",sliding-window-log"
		if rec.Algorithm == "sliding-window-log" {
			algorithms = "sliding-window-log,sliding-window-counter"
		}
		fmt.Fprintf(b, " -reference %s -algorithms %s", rt.withQuantity(l.Quantity), algorithms)
		if rt.zone != "" {
			fmt.Fprintf(b, " -zone %s", rt.zone)
		}
		if rt.starts != "" {
			fmt.Fprintf(b, " -starts %s", rt.starts)
		}
		fmt.Fprintf(b, " -chart %s.svg`.\n", p.Name)
	}
	b.WriteString("- Already limiting in nginx, Envoy, Envoy Gateway, Kong, Traefik, HAProxy, ingress-nginx or Amazon API Gateway? `sluice import` translates those limits and lists every difference in behaviour (docs/migration.md): migrate gradually, not by rewrite.\n")
	b.WriteString("- Revisit the design when a plan's peak traffic or client count changes by half, or when a second region needs its own store.\n\n")
}
