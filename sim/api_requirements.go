package sim

import (
	"fmt"
	"io"
	"net/netip"
	"regexp"
	"strings"
	"unicode"

	"go.yaml.in/yaml/v3"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/headername"
	"github.com/sluice-dev/sluice/internal/routes"
	"github.com/sluice-dev/sluice/internal/yamlcheck"
)

// Failure priorities of APIRequirements: what matters most when the shared
// store cannot be reached.
const (
	// PriorityBalanced decides in memory with each quota divided between
	// the instances (on_store_error: local).
	PriorityBalanced = "balanced"
	// PriorityAvailability admits every request while the store is down
	// (on_store_error: allow).
	PriorityAvailability = "availability"
	// PriorityProtection refuses every request while the store is down
	// (on_store_error: deny).
	PriorityProtection = "protection"
)

// Endpoint classes of APIEndpoint.Class, as the degradation section of the
// configuration names them.
const (
	ClassExpensive = "expensive" // refused (503) from level 1
	ClassCritical  = "critical"  // writes still accepted at level 2
	ClassHealth    = "health"    // the only thing served at level 3
)

// APIRequirements are what `sluice design -requirements api.yaml` asks for a
// whole API: its plans with their limits and traffic, its endpoints, its
// global capacity, how clients are identified, where state lives, its
// internal callers and when it is overloaded. They read from YAML
// (ReadAPIRequirements):
//
//	name: Acme API
//	precision: approximate        # default of every limit: strict | approximate | loose
//	priority: balanced            # store down: balanced | availability | protection
//	instances: 3
//	store: auto                   # auto | memory | redis
//	identity: {api_keys: true, user_header: X-User-ID, nat: true, trusted_proxies: [10.0.0.0/8]}
//	capacity: 2000/1s             # what the backend can take from everyone together
//	plans:
//	  - name: free
//	    clients: 10000            # clients of the plan live at once
//	    traffic: {rate: 1/1m, peak: 3}    # one client's usual rate and its peak factor
//	    limits: [{rate: 20/1s, burst: 10}, {rate: 100/1m}, {rate: 2000/1d, precision: loose}]
//	  - name: pro
//	    limits: [{rate: 50/1s}, {rate: 100000/month}]   # a quota per calendar month
//	endpoints:
//	  - {route: "POST /api/generate", cost: 10, class: expensive}
//	  - {route: "GET /healthz", class: health, exempt: true}
//	internal:
//	  - {name: billing-batch, rate: 50/1s}
//	overload: {in_flight: 500, p99: 2s, error_rate: 0.1}
type APIRequirements struct {
	// Name names the API in the analysis. Default "the API".
	Name string `yaml:"name" json:"name,omitempty"`
	// Precision is the default precision of every limit (see
	// Requirements.Precision); a limit may set its own.
	Precision string `yaml:"precision" json:"precision,omitempty"`
	// Priority is PriorityBalanced (default), PriorityAvailability or
	// PriorityProtection.
	Priority string `yaml:"priority" json:"priority,omitempty"`
	// Instances, Store, RedisMode and RedisAddresses are as in Requirements.
	Instances      int      `yaml:"instances" json:"instances,omitempty"`
	Store          string   `yaml:"store" json:"store,omitempty"`
	RedisMode      string   `yaml:"redis_mode" json:"redis_mode,omitempty"`
	RedisAddresses []string `yaml:"redis_addresses" json:"redis_addresses,omitempty"`
	// Identity says how clients are recognised.
	Identity APIIdentity `yaml:"identity" json:"identity"`
	// Capacity is what the backend takes from all clients together, as
	// ParseRate reads it ("2000/1s"); empty: no global limit.
	Capacity string `yaml:"capacity" json:"capacity,omitempty"`
	// Plans are the client tiers, at least one. The first is the default
	// plan of identified clients unless another says default: true.
	Plans []APIPlan `yaml:"plans" json:"plans"`
	// Endpoints are the routes that cost more (or nothing), have a limit
	// of their own, or belong to a degradation class.
	Endpoints []APIEndpoint `yaml:"endpoints" json:"endpoints,omitempty"`
	// Internal are the services and batch jobs that call the API.
	Internal []APIInternal `yaml:"internal" json:"internal,omitempty"`
	// Overload holds the thresholds at which the API sheds load; zero:
	// no degradation section.
	Overload APIOverload `yaml:"overload" json:"overload"`
	// Headers are the RateLimit header modes clients read (ietf, draft-7,
	// draft-6, legacy). Default [ietf].
	Headers []string `yaml:"headers" json:"headers,omitempty"`
	// Shadow writes every limit with shadow: true, for a first rollout
	// that reports and never refuses.
	Shadow bool `yaml:"shadow" json:"shadow,omitempty"`
	// Seed drives the simulations. Default 1.
	Seed uint64 `yaml:"seed" json:"seed,omitempty"`
	// MaxArrivals bounds each simulated scenario (≤ 0: 60,000 per limit).
	// It is not read from YAML or JSON.
	MaxArrivals int `yaml:"-" json:"-"`
	// src is where ReadAPIRequirements read r; nil for requirements built
	// otherwise.
	src *source
}

// APIIdentity says how the API's clients are recognised.
type APIIdentity struct {
	// APIKeys is true when clients send API keys (Authorization: Bearer
	// or X-API-Key).
	APIKeys bool `yaml:"api_keys" json:"api_keys,omitempty"`
	// UserHeader is the header a trusted auth layer sets to the user id;
	// empty when there is none.
	UserHeader string `yaml:"user_header" json:"user_header,omitempty"`
	// NAT is true when many clients share an address (offices, mobile
	// carriers): an address then stands for many people.
	NAT bool `yaml:"nat" json:"nat,omitempty"`
	// TrustedProxies are the CIDRs of the proxies (and internal callers)
	// whose forwarding and identity headers are believed.
	TrustedProxies []string `yaml:"trusted_proxies" json:"trusted_proxies,omitempty"`
	// Anonymous names the plan of clients known only by address; empty:
	// a plan of their own is designed (a tenth of the default plan's
	// limits, or the default plan's when NAT is true).
	Anonymous string `yaml:"anonymous" json:"anonymous,omitempty"`
}

// APIPlan is one tier of clients.
type APIPlan struct {
	// Name is the plan's name in the config, headers and bodies. Required.
	Name string `yaml:"name" json:"name"`
	// Default makes this the plan of identified clients without another.
	Default bool `yaml:"default" json:"default,omitempty"`
	// Clients is how many clients of the plan are live at once. Default 1000.
	Clients int64 `yaml:"clients" json:"clients,omitempty"`
	// Limits are the plan's stated limits, at least one.
	Limits []APILimit `yaml:"limits" json:"limits"`
	// Traffic is one client's usual traffic.
	Traffic APITraffic `yaml:"traffic" json:"traffic"`
	// Upgrade is the plan a refused client is told about.
	Upgrade string `yaml:"upgrade" json:"upgrade,omitempty"`
}

// APILimit is one stated limit: Requirements for one rate. A rate per
// week, month or year ("100000/month") is a quota per calendar period,
// whose periods Zone and Starts may shift (see Requirements).
type APILimit struct {
	Rate      string `yaml:"rate" json:"rate"`
	Zone      string `yaml:"zone" json:"zone,omitempty"`
	Starts    Starts `yaml:"starts" json:"starts,omitempty"`
	Burst     int64  `yaml:"burst" json:"burst,omitempty"`
	Precision string `yaml:"precision" json:"precision,omitempty"`
	Name      string `yaml:"name" json:"name,omitempty"`
}

// APITraffic is one client's usual traffic: a mean rate (ParseRate's
// form, "20/1m"; a rate per week, month or year is per the period's
// longest, 31 days for a month) and the factor its busiest hour reaches,
// from 1 to 1000 (0: 1).
type APITraffic struct {
	Rate string  `yaml:"rate" json:"rate,omitempty"`
	Peak float64 `yaml:"peak" json:"peak,omitempty"`
}

// APIEndpoint is one route: a ServeMux pattern ("POST /api/generate").
type APIEndpoint struct {
	Route string `yaml:"route" json:"route"`
	// Cost is the units one request spends (0 is free); nil: 1.
	Cost *int64 `yaml:"cost" json:"cost,omitempty"`
	// Limit is the route's own limit per client ("10/1h"), apart from the
	// plan's: for the clients of every plan Limits does not name.
	Limit string `yaml:"limit" json:"limit,omitempty"`
	// Limits are the route's own limits per client of the plans they name
	// ("free: 10/1h"), in place of Limit for those plans' clients.
	Limits map[string]string `yaml:"limits" json:"limits,omitempty"`
	// Class is ClassExpensive, ClassCritical, ClassHealth or empty.
	Class string `yaml:"class" json:"class,omitempty"`
	// Exempt routes are never limited: an exempt route has no limit,
	// limits or cost.
	Exempt bool `yaml:"exempt" json:"exempt,omitempty"`
}

// APIInternal is a service or batch job calling the API.
type APIInternal struct {
	Name string `yaml:"name" json:"name"`
	// Rate is the most it may send (ParseRate's form).
	Rate string `yaml:"rate" json:"rate"`
}

// APIOverload holds the load at which the API is overloaded: in-flight
// requests, the upstream's p99 latency and its error rate (0..1). The
// designer derives three degradation levels from them.
type APIOverload struct {
	InFlight  int      `yaml:"in_flight" json:"in_flight,omitempty"`
	P99       Duration `yaml:"p99" json:"p99,omitempty"`
	ErrorRate float64  `yaml:"error_rate" json:"error_rate,omitempty"`
}

func (o APIOverload) set() bool { return o.InFlight > 0 || o.P99 > 0 || o.ErrorRate > 0 }

// ReadAPIRequirements reads API requirements from YAML, at most 1 MiB of
// it; name labels errors (usually the file name). An unknown field, a key
// set twice or a value of the wrong type is an error naming the field and
// its name:line:col; so is, from DesignAPI, a value it refuses (while it is
// still the one read).
func ReadAPIRequirements(r io.Reader, name string) (APIRequirements, error) {
	req, src, err := readYAML[APIRequirements](r, name, "plans:")
	req.src = src
	return req, err
}

// IsAPIRequirements reports whether YAML data describes a whole API (it has
// a top-level plans field) rather than one limit, whatever mistakes the
// rest of it holds.
func IsAPIRequirements(data []byte) bool {
	top, err := yamlcheck.Parse("", data)
	if err != nil || top.Kind != yaml.MappingNode {
		return false
	}
	for i := 0; i+1 < len(top.Content); i += 2 {
		if top.Content[i].Value == "plans" {
			return true
		}
	}
	return false
}

// planName is what the config accepts as a plan or limit name.
var planName = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,62}$`)

// maxNameLen is the most characters of a name of the configuration: a
// plan's, a rule's, a limit's, or a rule's and its limit's joined by a
// dot (sluice.ValidName).
const maxNameLen = 64

// withDefaults returns r with defaults applied, or the first reason it
// cannot be designed.
func (r APIRequirements) withDefaults() (APIRequirements, error) {
	// The fields shared with Requirements take its defaults and checks.
	one, err := Requirements{Rate: "1/1s", Precision: r.Precision, Instances: r.Instances, Store: r.Store,
		RedisMode: r.RedisMode, RedisAddresses: r.RedisAddresses, Seed: r.Seed}.withDefaults()
	if err != nil {
		return r, err
	}
	r.Precision, r.Instances, r.Store, r.RedisAddresses, r.Seed = one.Precision, one.Instances, one.Store, one.RedisAddresses, one.Seed
	if r.Name == "" {
		r.Name = "the API"
	}
	if r.Priority == "" {
		r.Priority = PriorityBalanced
	}
	if len(r.Headers) == 0 {
		r.Headers = []string{"ietf"}
	}
	if r.MaxArrivals <= 0 {
		r.MaxArrivals = 60_000
	}
	if err := r.validate(); err != nil {
		return r, fmt.Errorf("requirements: %w", err)
	}
	plans := make([]APIPlan, len(r.Plans))
	for i, p := range r.Plans {
		if p.Clients == 0 {
			p.Clients = 1000
		}
		if p.Traffic.Peak == 0 {
			p.Traffic.Peak = 1
		}
		p.Limits = append([]APILimit(nil), p.Limits...)
		for j := range p.Limits {
			if p.Limits[j].Precision == "" {
				p.Limits[j].Precision = r.Precision
			}
		}
		plans[i] = p
	}
	r.Plans = plans
	return r, nil
}

// validate checks what withDefaults cannot fill in, beyond the fields
// Requirements checks.
func (r APIRequirements) validate() error {
	switch r.Priority {
	case PriorityBalanced, PriorityAvailability, PriorityProtection:
	default:
		return fieldErrorf("priority", "%q: use balanced, availability or protection", r.Priority)
	}
	for i, h := range r.Headers {
		if h != "ietf" && h != "draft-7" && h != "draft-6" && h != "legacy" {
			return fieldErrorf(fmt.Sprintf("headers[%d]", i), "%q: use ietf, draft-7, draft-6 or legacy", h)
		}
	}
	if unexpanded(r.Identity.UserHeader) {
		return fieldErrorf("identity.user_header", "%q: environment variables (${NAME}) are not expanded in the configuration: write the header's name itself", r.Identity.UserHeader)
	}
	if h := r.Identity.UserHeader; h != "" {
		if err := headername.Check(h); err != nil {
			return &fieldError{path: "identity.user_header", err: err}
		}
	}
	for i, c := range r.Identity.TrustedProxies {
		at := fmt.Sprintf("identity.trusted_proxies[%d]", i)
		p, err := netip.ParsePrefix(c)
		if err != nil {
			return fieldErrorf(at, "%q is not a CIDR (e.g. 10.0.0.0/8)", c)
		}
		if p != p.Masked() {
			return fieldErrorf(at, "%q has bits set past its length: write %v for the network, or %v for the one address", c, p.Masked(), p.Addr())
		}
	}
	if r.Capacity != "" {
		if _, _, err := ParseRate(r.Capacity); err != nil {
			return &fieldError{path: "capacity", err: err}
		}
	}
	if !printable(r.Name) {
		return fieldErrorf("name", "%q: use printable characters on one line", r.Name)
	}
	if len(r.Plans) == 0 {
		return fieldErrorf("plans", "at least one plan is required")
	}
	seen := map[string]bool{}
	defaults := 0
	for i, p := range r.Plans {
		at := fmt.Sprintf("plans[%d]", i)
		if !planName.MatchString(p.Name) || seen[p.Name] {
			return fieldErrorf(at+".name", "%q must be a new name of lower-case letters, digits, '.', '_' or '-'", p.Name)
		}
		seen[p.Name] = true
		if p.Default {
			if defaults++; defaults > 1 {
				return fieldErrorf(at+".default", "a second plan says default: true")
			}
		}
		if len(p.Limits) == 0 || len(p.Limits) > 6 {
			return fieldErrorf(at+".limits", "want 1 to 6 limits, got %d", len(p.Limits))
		}
		if p.Clients < 0 || p.Clients > 1<<40 {
			return fieldErrorf(at+".clients", "%d must be in [1, 2^40]", p.Clients)
		}
		if p.Traffic.Rate != "" {
			if _, _, err := ParseRate(p.Traffic.Rate); err != nil {
				return &fieldError{path: at + ".traffic.rate", err: err}
			}
		}
		if pk := p.Traffic.Peak; pk != 0 && (pk < 1 || pk > 1000) {
			return fieldErrorf(at+".traffic.peak", "%g must be in [1, 1000]", p.Traffic.Peak)
		}
		names := map[string]bool{}
		for j, l := range p.Limits {
			lat := fmt.Sprintf("%s.limits[%d]", at, j)
			rt, err := calendarOf(l.Rate, l.Zone, l.Starts)
			if err != nil {
				return rateError(lat, err)
			}
			q := rt.q
			if l.Name != "" && !planName.MatchString(l.Name) {
				return fieldErrorf(lat+".name", "%q: use lower-case letters, digits, '.', '_' or '-'", l.Name)
			}
			if rt.calendar() && l.Burst > 0 && l.Burst < q {
				return fieldErrorf(lat+".burst", "a quota per calendar %v has no burst of its own; bound its bursts with a second limit in the plan, such as a rate per second or minute", rt.period)
			}
			n := limitName(l, rt)
			if n == globalLimitName && r.Capacity != "" {
				return fieldErrorf(lat+".name", "%q is the name of the global limit that capacity is written as: give this limit another name", n)
			}
			if names[n] {
				return fieldErrorf(lat, "a second limit named %q: give one a name", n)
			}
			names[n] = true
			if l.Burst < 0 || l.Burst > q {
				return fieldErrorf(lat+".burst", "%d must be in [0, %d]", l.Burst, q)
			}
		}
		switch {
		case p.Upgrade != "" && p.Upgrade == p.Name:
			return fieldErrorf(at+".upgrade", "%q is this plan: name the plan with more quota that its refused clients are told about", p.Upgrade)
		case p.Upgrade != "" && !contains(r.Plans, p.Upgrade):
			return fieldErrorf(at+".upgrade", "no plan %q", p.Upgrade)
		}
	}
	if a := r.Identity.Anonymous; a != "" && !contains(r.Plans, a) {
		return fieldErrorf("identity.anonymous", "no plan %q", a)
	}
	if err := r.validateEndpoints(); err != nil {
		return err
	}
	for i, in := range r.Internal {
		at := fmt.Sprintf("internal[%d]", i)
		if !planName.MatchString(in.Name) || seen["internal-"+in.Name] {
			return fieldErrorf(at+".name", "%q must be a new name of lower-case letters, digits, '.', '_' or '-'", in.Name)
		}
		if len("internal-"+in.Name) > maxNameLen {
			return fieldErrorf(at+".name", "%q is longer than %d characters: the caller's plan is named internal-%s, at most %d", in.Name, maxNameLen-len("internal-"), in.Name, maxNameLen)
		}
		seen["internal-"+in.Name] = true
		if _, _, err := ParseRate(in.Rate); err != nil {
			return &fieldError{path: at + ".rate", err: err}
		}
	}
	switch o := r.Overload; {
	case o.InFlight < 0:
		return fieldErrorf("overload.in_flight", "%d must be ≥ 0", o.InFlight)
	case o.P99 < 0:
		return fieldErrorf("overload.p99", "%s must be ≥ 0", o.P99)
	case !(o.ErrorRate >= 0 && o.ErrorRate <= 1):
		return fieldErrorf("overload.error_rate", "%g must be in [0, 1]", o.ErrorRate)
	}
	return nil
}

// validateEndpoints checks r.Endpoints, each alone and with the others of
// its route: a route has one cost and one class, and one that an endpoint
// exempts has no limit, limits or cost on another. Nor has a route whose
// every request the exempt routes take, as the server's exempt list
// matches them (routes.Mux.Covering: "GET /x/{id}" or "GET /x/" takes
// "GET /x/y", "GET /x" takes "HEAD /x"); a route some of whose requests
// they take ("GET /x/{id}" beside an exempt "GET /x/y") keeps its limit
// for the others. One route is the requests a pattern matches, however
// it is written (routes.Normal: "GET /x/{a}" is "GET /x/{b}", "GET /a%62"
// is "GET /ab", "GET /x/" is "GET /x/{rest...}"), as config tells routes.
// The path of a route with a limit or limits is one a rule's match.paths
// takes (routes.CheckPath). The routes of a list of the
// configuration (the costs, the exempt routes, a class) are those one
// ServeMux holds together, as config loads them.
func (r APIRequirements) validateEndpoints() error {
	exemptMux, exempt, exemptAt := exemptRoutes(r.Endpoints)
	costed := map[string]int{}  // route (routes.Normal) → the endpoint costing it
	classed := map[string]int{} // route (routes.Normal) → the first endpoint with a class
	var costs, exempts routeList
	classes := map[string]*routeList{}
	for i, e := range r.Endpoints {
		at := fmt.Sprintf("endpoints[%d]", i)
		method, path, ok := strings.Cut(e.Route, " ")
		if !ok || method == "" || !strings.HasPrefix(path, "/") || strings.ContainsAny(path, " \t") ||
			strings.ContainsAny(e.Route, "\"#") || !printable(e.Route) {
			return fieldErrorf(at+".route", "%q: want METHOD /path, e.g. \"POST /api/generate\"", e.Route)
		}
		if unexpanded(method) || unexpanded(path) {
			return fieldErrorf(at+".route", "%q: environment variables (${NAME}) are not expanded in the configuration: write the route itself", e.Route)
		}
		if up, ok := routes.MethodInOtherCase(method); ok {
			return fieldErrorf(at+".route", "%q never matches: methods are case-sensitive, and clients send %s", e.Route, up)
		}
		if err := routes.Check(e.Route); err != nil {
			return &fieldError{path: at + ".route", err: err}
		}
		if err := routes.GlobError(path); err != nil {
			return fieldErrorf(at+".route", "%q: %v", e.Route, err)
		}
		if e.Limit != "" || len(e.Limits) > 0 {
			if err := routes.CheckPath(path); err != nil {
				return fieldErrorf(at+".route", "%q: %v; a limit of the route is a rule, whose match.paths takes no such path", e.Route, err)
			}
		}
		route := routes.Normal(e.Route)
		if e.Cost != nil && (*e.Cost < 0 || *e.Cost > 1_000_000) {
			return fieldErrorf(at+".cost", "%d must be in [0, 1000000]", *e.Cost)
		}
		if e.Cost != nil {
			if j, ok := costed[route]; ok {
				return fieldErrorf(at+".cost", "endpoints[%d] already costs %q%s: a route has one cost", j, r.Endpoints[j].Route, sameRoute(r.Endpoints, i, j))
			}
			costed[route] = i
			if j := costs.add(r.Endpoints, i); j >= 0 {
				return conflictError(at+".cost", r.Endpoints, i, j, "costs")
			}
		}
		if e.Limit != "" {
			if _, _, err := ParseRate(e.Limit); err != nil {
				return &fieldError{path: at + ".limit", err: err}
			}
		}
		for _, plan := range sortedKeys(e.Limits) {
			if !contains(r.Plans, plan) {
				return fieldErrorf(at+".limits."+plan, "no plan %q", plan)
			}
			if _, _, err := ParseRate(e.Limits[plan]); err != nil {
				return &fieldError{path: at + ".limits." + plan, err: err}
			}
		}
		limited := e.Limit != "" || len(e.Limits) > 0 || e.Cost != nil
		if e.Exempt && limited {
			return fieldErrorf(at+".exempt", "an exempt route is never limited: drop its limit, limits and cost, or exempt")
		}
		if j, ok := exempt[route]; ok && limited {
			return fieldErrorf(at+"."+limitField(e), "endpoints[%d] exempts %q%s, and an exempt route is never limited: drop this endpoint's limit, limits and cost, or that exemption", j, r.Endpoints[j].Route, sameRoute(r.Endpoints, i, j))
		}
		if limited {
			if p := exemptMux.Covering(e.Route); p != "" {
				return fieldErrorf(at+"."+limitField(e), "endpoints[%d] exempts %q, which takes every request of %q, and an exempt route is never limited: drop this endpoint's limit, limits and cost, or that exemption", exemptAt[p], p, e.Route)
			}
		}
		if e.Exempt {
			if j := exempts.add(r.Endpoints, i); j >= 0 {
				return conflictError(at+".exempt", r.Endpoints, i, j, "exempt routes")
			}
		}
		if e.Class != "" && e.Class != ClassExpensive && e.Class != ClassCritical && e.Class != ClassHealth {
			return fieldErrorf(at+".class", "%q: use expensive, critical or health", e.Class)
		}
		if e.Class != "" {
			if j, ok := classed[route]; ok && r.Endpoints[j].Class != e.Class {
				return fieldErrorf(at+".class", "endpoints[%d] puts %q%s in %s: a route is in one class", j, r.Endpoints[j].Route, sameRoute(r.Endpoints, i, j), r.Endpoints[j].Class)
			} else if !ok {
				classed[route] = i
			}
			if classes[e.Class] == nil {
				classes[e.Class] = &routeList{}
			}
			if j := classes[e.Class].add(r.Endpoints, i); j >= 0 {
				return conflictError(at+".class", r.Endpoints, i, j, "routes of the class "+e.Class)
			}
		}
	}
	return nil
}

// exemptRoutes returns the routes eps exempt, in a Mux as the
// configuration's exempt list holds them (each route once; one it cannot
// hold beside another left out, for validateEndpoints to refuse), the
// first endpoint exempting each route (by routes.Normal), and that
// endpoint by its route as written.
func exemptRoutes(eps []APIEndpoint) (mux *routes.Mux, exempt, at map[string]int) {
	mux, exempt, at = &routes.Mux{}, map[string]int{}, map[string]int{}
	for i, e := range eps {
		if !e.Exempt || routes.Check(e.Route) != nil {
			continue
		}
		n := routes.Normal(e.Route)
		if _, ok := exempt[n]; !ok {
			exempt[n], at[e.Route] = i, i
			mux.Handle(e.Route)
		}
	}
	return mux, exempt, at
}

// routeList holds the endpoints whose routes one list of the
// configuration holds, in one ServeMux.
type routeList struct {
	mux    routes.Mux
	at     []int           // the endpoints added
	normal map[string]bool // their routes (routes.Normal)
}

// add adds the route of endpoint i of eps, returning -1, or an endpoint
// added before whose route a ServeMux cannot hold beside it: one neither
// more nor less specific ("GET /x/{a}/b", "GET /x/a/{b}"). A route added
// before, however it is written ("GET /x/{a}", "GET /x/{b}"), is not added
// again: the configuration's list holds it once.
func (l *routeList) add(eps []APIEndpoint, i int) int {
	n := routes.Normal(eps[i].Route)
	if l.normal[n] {
		return -1
	}
	if l.normal == nil {
		l.normal = map[string]bool{}
	}
	if l.mux.Handle(eps[i].Route) == nil {
		l.normal[n] = true
		l.at = append(l.at, i)
		return -1
	}
	for _, j := range l.at {
		var pair routes.Mux
		if pair.Handle(eps[j].Route) == nil && pair.Handle(eps[i].Route) != nil {
			return j
		}
	}
	return l.at[len(l.at)-1]
}

// sameRoute returns, for an error of endpoint i quoting the route of
// endpoint j of eps, a note of how i writes that route when it writes it
// otherwise; "" when both write it alike.
func sameRoute(eps []APIEndpoint, i, j int) string {
	if eps[i].Route == eps[j].Route {
		return ""
	}
	return fmt.Sprintf(" (written %q here: they match the same requests)", eps[i].Route)
}

// conflictError refuses the field at of endpoint i, whose route a
// ServeMux cannot hold beside endpoint j's in the configuration's list.
func conflictError(at string, eps []APIEndpoint, i, j int, list string) error {
	return fieldErrorf(at, "%q conflicts with %q of endpoints[%d]: they match the same requests, or neither is more specific, "+
		"and one ServeMux holds the configuration's %s", eps[i].Route, eps[j].Route, j, list)
}

// limitField names the first of e's limit, limits and cost that is set.
func limitField(e APIEndpoint) string {
	switch {
	case e.Limit != "":
		return "limit"
	case len(e.Limits) > 0:
		return "limits"
	}
	return "cost"
}

// printable reports whether s is one line of printable characters, as the
// comments and names of a configuration must be.
func printable(s string) bool {
	for _, r := range s {
		if !unicode.IsPrint(r) {
			return false
		}
	}
	return true
}

func contains(plans []APIPlan, name string) bool {
	for _, p := range plans {
		if p.Name == name {
			return true
		}
	}
	return false
}

// limitName is a limit's name: its own, or after its window
// ("per-minute", "per-month").
func limitName(l APILimit, rt rate) string {
	if l.Name != "" {
		return l.Name
	}
	if rt.calendar() {
		return sluice.Calendar(1, rt.period).Name()
	}
	return sluice.NewLimit(sluice.AlgorithmFixedWindow, 1, rt.w).Name()
}
