package migrate

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/sluice-dev/sluice"
)

// egDoc is the part of an Envoy Gateway BackendTrafficPolicy, or of a
// Gateway API HTTPRoute, that the import reads.
type egDoc struct {
	Kind     string `yaml:"kind"`
	Metadata struct {
		Name      string `yaml:"name"`
		Namespace string `yaml:"namespace"`
	} `yaml:"metadata"`
	Spec struct {
		// A BackendTrafficPolicy's.
		TargetRefs []egRef `yaml:"targetRefs"`
		TargetRef  *egRef  `yaml:"targetRef"`
		RateLimit  *struct {
			Type   string        `yaml:"type"`
			Global *egRateLimits `yaml:"global"`
			Local  *egRateLimits `yaml:"local"`
		} `yaml:"rateLimit"`
		// A SecurityPolicy's.
		JWT *struct {
			Providers []egJWTProvider `yaml:"providers"`
		} `yaml:"jwt"`
		// An HTTPRoute's.
		ParentRefs []egRef  `yaml:"parentRefs"`
		Hostnames  []string `yaml:"hostnames"`
		Rules      []struct {
			Matches []struct {
				Path *struct {
					Type  string `yaml:"type"`
					Value string `yaml:"value"`
				} `yaml:"path"`
				Method      string `yaml:"method"`
				Headers     []any  `yaml:"headers"`
				QueryParams []any  `yaml:"queryParams"`
			} `yaml:"matches"`
		} `yaml:"rules"`
	} `yaml:"spec"`
}

// egJWTProvider is a SecurityPolicy's JWT provider: whose tokens Envoy
// verifies, and the claims it copies into request headers.
type egJWTProvider struct {
	Name       string   `yaml:"name"`
	Issuer     string   `yaml:"issuer"`
	Audiences  []string `yaml:"audiences"`
	RemoteJWKS *struct {
		URI string `yaml:"uri"`
	} `yaml:"remoteJWKS"`
	ClaimToHeaders []struct {
		Header string `yaml:"header"`
		Claim  string `yaml:"claim"`
	} `yaml:"claimToHeaders"`
}

// egRef is a policy's target.
type egRef struct {
	Kind string `yaml:"kind"`
	Name string `yaml:"name"`
	// Namespace is a parentRef's (a policy's targets are in its own).
	Namespace string `yaml:"namespace"`
	// key is an HTTPRoute target's key in the file's routes (egRoutes),
	// resolved in the policy's namespace.
	key string
}

type egRateLimits struct {
	Rules []egRule `yaml:"rules"`
}

// egRule is one rate limit rule of a BackendTrafficPolicy.
type egRule struct {
	ClientSelectors []egSelector `yaml:"clientSelectors"`
	Limit           struct {
		Requests int64  `yaml:"requests"`
		Unit     string `yaml:"unit"`
	} `yaml:"limit"`
	Cost *struct {
		Request *egCost `yaml:"request"`
		// Response is charged once the response has been sent.
		Response *egCost `yaml:"response"`
	} `yaml:"cost"`
	ShadowMode bool `yaml:"shadowMode"`
	// Shared (Envoy Gateway 1.3): one bucket across the policy's targets,
	// where each route otherwise has its own.
	Shared bool `yaml:"shared"`
}

// egCost is a rule's cost: a number, or dynamic metadata (the AI gateway's
// token counts).
type egCost struct {
	From   string `yaml:"from"`
	Number *int64 `yaml:"number"`
}

// egRoute is an HTTPRoute as a rule matches it: the path patterns of each
// match of each of its rules, in order (nil: every path), and its host
// names. Envoy Gateway makes each match an Envoy route of its own
// (".../rule/<i>/match/<j>"), and a policy's limits count on each apart.
type egRoute struct {
	name    string
	matches [][]string
	hosts   []string
	// gateways are the Gateways the route is attached to (its parentRefs
	// of kind Gateway, the default kind), each in the namespace its
	// parentRef names, else the route's.
	gateways []egRef
}

// egUnit returns the window of an Envoy Gateway limit unit: the
// envoyproxy/ratelimit unit it configures (a month and a year fixed spans
// from the Unix epoch, not calendar ones; Envoy Gateway has no week).
func egUnit(unit string) (time.Duration, bool) {
	switch unit {
	case "Second", "Minute", "Hour", "Day", "Month", "Year":
		return envoyUnits[strings.ToLower(unit)], true
	}
	return 0, false
}

// EnvoyGateway translates the rate limits of Envoy Gateway's
// BackendTrafficPolicy resources (gateway.envoyproxy.io/v1alpha1), with the
// Gateway API HTTPRoutes they target when the file holds them, in one or
// several YAML documents; source names the file. Each rule becomes a sluice
// rule of the routes' paths: header values it selects become matches,
// Distinct headers and addresses its key, its limit a fixed window (Global,
// counted by envoyproxy/ratelimit) or a token bucket (Local, Envoy's
// local rate limit).
func EnvoyGateway(src, source string) (*Translation, error) {
	t := &Translation{Format: FormatEnvoyGateway, Source: source}
	routes := &egRoutes{byKey: map[string]*egRoute{}, byName: map[string][]string{}}
	var policies, all []*egDoc
	err := eachDocument(src, source, func(d *egDoc) error {
		switch d.Kind {
		case "SecurityPolicy":
			if d.Spec.JWT != nil {
				t.egJWT(d)
			}
		case "HTTPRoute":
			r := t.egRoute(d)
			for _, p := range d.Spec.ParentRefs {
				if p.Kind == "" || p.Kind == "Gateway" {
					r.gateways = append(r.gateways, egRef{Kind: "Gateway", Name: p.Name, Namespace: or(p.Namespace, d.Metadata.Namespace)})
				}
			}
			routes.add(d.Metadata.Namespace, d.Metadata.Name, r)
		case "BackendTrafficPolicy":
			all = append(all, d)
			if d.Spec.RateLimit != nil {
				policies = append(policies, d)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(policies) == 0 {
		return nil, fmt.Errorf("%s: no BackendTrafficPolicy with a rateLimit", source)
	}
	owners := routes.owners(all)
	for _, p := range policies {
		if err := t.egPolicy(p, routes, owners); err != nil {
			return nil, fmt.Errorf("%s: BackendTrafficPolicy %s: %w", source, p.Metadata.Name, err)
		}
		if len(t.SluiceRules) > MaxPlaces {
			return nil, fmt.Errorf("%s: %w", source, tooManyPlaces(len(t.SluiceRules), "rules"))
		}
	}
	if len(t.SluiceRules) == 0 {
		return nil, fmt.Errorf("%s: no rate limit rule sluice can import (see the differences)", source)
	}
	t.differs("headers", "Envoy Gateway sends x-ratelimit-* headers (when enabled) and refuses with a bare 429; sluice sends the IETF RateLimit and RateLimit-Policy headers, Retry-After and a problem+json body.")
	return t, nil
}

// egJWT reads a SecurityPolicy's JWT providers: the first with remote keys
// becomes identity.jwt, and the headers every provider copies claims into
// are remembered, for rules keyed by them to key by the claims.
func (t *Translation) egJWT(d *egDoc) {
	for _, p := range d.Spec.JWT.Providers {
		where := "SecurityPolicy " + d.Metadata.Name + " provider " + p.Name
		for _, c := range p.ClaimToHeaders {
			if validHeaderName(c.Header) && c.Claim != "" && !strings.Contains(c.Claim, ".") {
				if t.claimHeaders == nil {
					t.claimHeaders = map[string]string{}
				}
				t.claimHeaders[http.CanonicalHeaderKey(c.Header)] = c.Claim
			}
		}
		switch {
		case p.RemoteJWKS == nil || p.RemoteJWKS.URI == "":
			t.differs(where, "its keys are not fetched from a URL (remoteJWKS): set identity.jwt's jwks_file to its JWK Set.")
		case !strings.HasPrefix(p.RemoteJWKS.URI, "https://"):
			t.differs(where, "sluice fetches a JWK Set over https only (or from a loopback host), not from %s: set identity.jwt's jwks_url or jwks_file yourself.", p.RemoteJWKS.URI)
		case t.JWT != nil:
			t.differs(where, "sluice verifies the tokens of one issuer (identity.jwt); this provider's tokens are not verified: its clients are limited by address.")
		default:
			t.JWT = &JWT{JWKSURL: p.RemoteJWKS.URI, Issuer: p.Issuer, Audiences: p.Audiences}
			t.same(where, "tokens verified against %s, as Envoy's jwt_authn verifies them: sluice's identity.jwt, each client limited as the user (sub) its token names.", p.RemoteJWKS.URI)
			t.differs(where, "Envoy Gateway refuses a request without a valid token (401) before any rate limit; sluice does not authenticate: it limits such a request by its address and passes it on, for the upstream to refuse.")
		}
	}
}

// egRoute reads an HTTPRoute's matches and host names. A match sluice's
// patterns cannot say makes the whole route one match of every path.
func (t *Translation) egRoute(d *egDoc) *egRoute {
	where := "HTTPRoute " + d.Metadata.Name
	r := &egRoute{hosts: t.egHostnames(where, d.Spec.Hostnames)}
	every := &egRoute{hosts: r.hosts, matches: [][]string{nil}}
	narrowed := false
	defer func() {
		if narrowed {
			t.differs(where, "its matches on methods, headers and query parameters are not imported: its limits count every request to its paths.")
		}
	}()
	for _, rule := range d.Spec.Rules {
		if len(rule.Matches) == 0 {
			r.matches = append(r.matches, nil) // a rule matching every request
			continue
		}
		for _, m := range rule.Matches {
			narrowed = narrowed || m.Method != "" || len(m.Headers) > 0 || len(m.QueryParams) > 0
			typ, value := "PathPrefix", "/"
			if m.Path != nil {
				typ, value = or(m.Path.Type, typ), or(m.Path.Value, value)
			}
			pats, ok := egPathPatterns(typ, value)
			switch {
			case !strings.HasPrefix(value, "/"):
				t.differs(where, "path %q does not start with a slash: its limits count every request.", value)
				return every
			case !ok && typ == "PathPrefix":
				t.differs(where, "path prefix %q is not a path sluice's rules match (a * or an empty segment): its limits count every request.", value)
				return every
			case !ok:
				t.differs(where, "path %s %q is not a prefix or an exact path: its limits count every request.", typ, value)
				return every
			}
			r.matches = append(r.matches, pats)
		}
	}
	if len(r.matches) == 0 {
		return every
	}
	return r
}

// paths returns the patterns of all of r's matches: nil (every path) when
// one of them matches every path.
func (r *egRoute) paths() []string {
	var out []string
	for _, m := range r.matches {
		if m == nil {
			return nil
		}
		for _, p := range m {
			if !slices.Contains(out, p) {
				out = append(out, p)
			}
		}
	}
	return out
}

// egHostnames returns an HTTPRoute's hostnames as its rule's hosts: nil,
// every host, when one of them is neither a host name nor *.domain (the
// Gateway API refuses it, and no rule could match it), which the report
// then says.
func (t *Translation) egHostnames(where string, hostnames []string) []string {
	for _, h := range hostnames {
		if !validHostName(h) && !wildcardHost(h) {
			t.differs(where, "hostname %q is not a host name or *.domain that sluice's rules match: its limits count requests to its paths on every host.", h)
			return nil
		}
	}
	return hostnames
}

// egPolicy translates the rate limit rules of one policy, once for each
// route it targets.
func (t *Translation) egPolicy(p *egDoc, routes *egRoutes, owners map[string]string) error {
	rl := p.Spec.RateLimit
	// Both kinds may be set; an older policy's type names the one in force.
	kinds := []struct {
		rules *egRateLimits
		local bool
		tag   string
	}{{rl.Global, false, "g"}, {rl.Local, true, "l"}}
	var sets int
	for i, k := range kinds {
		if k.rules == nil || rl.Type == "Local" && !k.local || rl.Type == "Global" && k.local {
			kinds[i].rules = nil
			continue
		}
		sets++
	}
	if sets == 0 {
		return fmt.Errorf("rateLimit has neither global nor local rules")
	}
	targets := t.egTargets(p, routes, owners)
	if len(targets) == 0 && len(p.targets()) > 0 {
		return nil // its Gateways' routes in the file each have a policy of their own
	}
	if len(targets) == 0 {
		t.differs("policy "+p.Metadata.Name, "it names no target (targetRefs), so the import cannot tell which routes its labels select (targetSelectors): its limits count every request.")
		targets = []egRef{{}}
	}
	for _, ref := range targets {
		switch ref.Kind {
		case "HTTPRoute":
			if routes.byKey[ref.key] == nil {
				t.differs("policy "+p.Metadata.Name, "HTTPRoute %s is not in the file: its limits count every request. Import the route with the policy to limit only its paths.", ref.Name)
			}
		case "":
		default:
			t.differs("policy "+p.Metadata.Name, "it targets %s %s: Envoy Gateway keeps a count per route of it, sluice one count for every request.", ref.Kind, ref.Name)
		}
	}
	for _, k := range kinds {
		if k.rules == nil {
			continue
		}
		var dflt *egDefault
		if k.local {
			dflt = egLocalDefault(k.rules.Rules)
		}
		for i := range k.rules.Rules {
			base := fmt.Sprintf("%s-%d", p.Metadata.Name, i+1)
			if sets > 1 {
				base = fmt.Sprintf("%s-%s%d", p.Metadata.Name, k.tag, i+1)
			}
			opts := egOpts{local: k.local}
			if k.local && len(k.rules.Rules[i].ClientSelectors) == 0 {
				opts.dflt = dflt
			}
			if err := t.egPlaces(base, &k.rules.Rules[i], targets, routes, opts); err != nil {
				return fmt.Errorf("rule %d: %w", i+1, err)
			}
		}
		if k.local {
			t.differs("policy "+p.Metadata.Name+" local", "Envoy's local rate limit keeps a bucket in each Envoy replica, so N replicas admit N times the limit; sluice on the Redis store keeps one for the fleet: multiply the quantities by N for the same total, or run sluice on its memory store beside each replica.")
		}
	}
	return nil
}

// egOpts are how a policy rule is counted: local (Envoy's token bucket,
// else envoyproxy/ratelimit's fixed window), and for a local rule without
// clientSelectors, the route's default bucket, what the others take from
// it.
type egOpts struct {
	local bool
	dflt  *egDefault
}

// egDefault is what a local policy's rules with clientSelectors take from
// its rule without them, the route's default bucket: Envoy Gateway sets
// always_consume_default_token_bucket: false, so a request one of them
// selects is counted by its bucket alone. except are those requests as
// except: entries; missed names the rules whose requests no entry can say.
type egDefault struct {
	except []RuleMatch
	missed []string
}

// egLocalDefault returns what the local rules with clientSelectors take
// from the default bucket.
func egLocalDefault(rules []egRule) *egDefault {
	d := &egDefault{}
	for i := range rules {
		if len(rules[i].ClientSelectors) == 0 {
			continue
		}
		m, why := egSelected(&rules[i])
		if why != "" {
			d.missed = append(d.missed, fmt.Sprintf("rule %d (by %s)", i+1, why))
			continue
		}
		d.except = append(d.except, m)
	}
	return d
}

// egPlaces adds the sluice rules of policy rule r, called base, on the
// policy's targets: a rule for each match of each targeted route, each its
// own count as in Envoy Gateway; one rule across them all when r is shared
// (a global rule's one bucket).
func (t *Translation) egPlaces(base string, r *egRule, targets []egRef, routes *egRoutes, opts egOpts) error {
	routeOf := func(ref egRef) *egRoute {
		if ref.Kind == "HTTPRoute" {
			return routes.byKey[ref.key]
		}
		return nil
	}
	if r.Shared && !opts.local && (len(targets) > 1 || routeOf(targets[0]) != nil && len(routeOf(targets[0]).matches) > 1) {
		var alts []RuleMatch
		every := false
		for _, ref := range targets {
			rt := routeOf(ref)
			if rt == nil {
				every = true
				break
			}
			if alt := (RuleMatch{Paths: rt.paths(), Hosts: rt.hosts}); !slices.ContainsFunc(alts, func(a RuleMatch) bool { return slices.Equal(a.Paths, alt.Paths) && slices.Equal(a.Hosts, alt.Hosts) }) {
				alts = append(alts, alt)
			}
		}
		if every {
			alts = nil
		}
		name := t.ruleName(base)
		if err := t.egRule(name, r, alts, opts); err != nil {
			return err
		}
		if every {
			t.same("rule "+name, "shared: true: Envoy Gateway keeps one bucket for the rule across the policy's %d targets, one of which is every request here: one rule of every request it selects, one count.", len(targets))
		} else {
			t.same("rule "+name, "shared: true: Envoy Gateway keeps one bucket for the rule across the policy's %d targets and their routes' matches: one rule with an alternative per HTTPRoute (match: a list), each matching the route's hostnames and paths, one count across them.", len(targets))
		}
		return nil
	}
	for _, ref := range targets {
		name := base
		if len(targets) > 1 {
			name += "-" + ref.Name
		}
		rt := routeOf(ref)
		if rt == nil {
			if err := t.egRule(t.ruleName(name), r, nil, opts); err != nil {
				return err
			}
			continue
		}
		if len(rt.matches) == 1 {
			if err := t.egRule(t.ruleName(name), r, []RuleMatch{{Paths: rt.matches[0], Hosts: rt.hosts}}, opts); err != nil {
				return err
			}
			continue
		}
		for j, m := range rt.matches {
			alt := RuleMatch{Paths: m, Hosts: rt.hosts, ExceptPaths: egMoreSpecific(rt.matches, j)}
			if err := t.egRule(t.ruleName(fmt.Sprintf("%s-m%d", name, j+1)), r, []RuleMatch{alt}, opts); err != nil {
				return err
			}
		}
		t.same("rule "+name, "HTTPRoute %s has %d matches, each an Envoy route of its own in Envoy Gateway (…/rule/<i>/match/<j>), where the rule counts apart: a rule per match (-m1, -m2, …), each leaving out the paths of the more specific matches, which Envoy routes first.", ref.Name, len(rt.matches))
	}
	return nil
}

// egRule adds the sluice rule called name of one policy rule on alts,
// the places it counts (none: every request), one count across them. A
// rule whose requests sluice cannot select alike is not imported, and
// reported.
func (t *Translation) egRule(name string, r *egRule, alts []RuleMatch, opts egOpts) error {
	where := "rule " + name
	window, ok := egUnit(r.Limit.Unit)
	if !ok {
		return fmt.Errorf("limit unit %q: want Second, Minute, Hour, Day, Month or Year", r.Limit.Unit)
	}
	if r.Limit.Requests < 0 || r.Limit.Requests > sluice.MaxQuantity {
		return fmt.Errorf("limit requests %d is out of range", r.Limit.Requests)
	}
	sel, ok, err := t.egSelect(where, r)
	if err != nil || !ok {
		return err
	}
	if alts = egSelectedPlaces(alts, sel); len(alts) == 0 {
		t.differs(where, "its path selector lies outside its route's paths: it selects no request there; not imported.")
		return nil
	}
	out := Rule{Name: name, Except: sel.except, Key: sel.key, HeaderFrom: sel.headerFrom, Fallback: sel.fallback}
	if len(alts) == 1 {
		a := alts[0]
		out.Paths, out.Hosts, out.Methods, out.Headers, out.ExceptPaths = a.Paths, a.Hosts, a.Methods, a.Headers, a.ExceptPaths
	} else {
		out.Any = alts
	}
	if len(out.Key) == 0 {
		out.Key = []string{"rule"} // every request it selects counts together
	}
	shadow := r.ShadowMode
	if opts.dflt != nil {
		shadow = false
		t.egDefaultRule(where, &out, r, opts.dflt)
	}
	l := Limit{Name: "per-" + strings.ToLower(r.Limit.Unit), Algorithm: "fixed-window", Quantity: r.Limit.Requests, Window: window,
		Shadow: shadow, Source: fmt.Sprintf("%s: %d requests per %s", where, r.Limit.Requests, r.Limit.Unit)}
	if opts.local {
		l.Algorithm, l.Burst = "token-bucket", r.Limit.Requests
		t.same(where, "Envoy's local rate limit is a token bucket of %d refilled at %d per %s, starting full: sluice's token-bucket.", r.Limit.Requests, r.Limit.Requests, r.Limit.Unit)
	} else {
		t.same(where, "Envoy Gateway's global rate limit is envoyproxy/ratelimit's fixed window of %d per %s aligned to the clock: sluice's fixed-window.", r.Limit.Requests, r.Limit.Unit)
	}
	if r.Limit.Unit == "Month" || r.Limit.Unit == "Year" {
		t.egUnixWindow(where, r.Limit.Unit, window, opts.local)
	}
	if r.Limit.Requests == 0 {
		t.differs(where, "0 requests refuses every request it selects; sluice's limits hold at least 1: not imported.")
		return nil
	}
	if c := r.Cost; c != nil {
		if c.Request != nil {
			if c.Request.From == "Number" && c.Request.Number != nil && *c.Request.Number >= 0 && *c.Request.Number <= r.Limit.Requests {
				n := *c.Request.Number
				out.Cost = &n
			} else {
				t.differs(where, "its request cost comes from %s: sluice costs each request 1 here (a rule's cost is a number).", or(c.Request.From, "nowhere"))
			}
		}
		if c.Response != nil {
			t.differs(where, "Envoy Gateway charges a response cost after the answer (from %s), which may take the count past the limit. In sluice, give the rule the most a request may use as its cost and count: \"header:<Name>\" with the upstream reporting what it used in that header: the rest is refunded after the answer, and the limit is never passed (docs/rules.md).", or(c.Response.From, "a number"))
		}
	}
	out.Limits = []Limit{l}
	t.SluiceRules = append(t.SluiceRules, out)
	return nil
}

// egSelectedPlaces returns alts (none: every request) narrowed to the
// paths, headers and methods sel selects: the alternatives of the sluice
// rule, without those the selector's paths leave nothing of.
func egSelectedPlaces(alts []RuleMatch, sel egSelection) []RuleMatch {
	if len(alts) == 0 {
		alts = []RuleMatch{{}}
	}
	var out []RuleMatch
	for _, a := range alts {
		switch {
		case sel.paths == nil:
		case a.Paths == nil:
			a.Paths = sel.paths
		default:
			if a.Paths = egNarrow(a.Paths, sel.paths); len(a.Paths) == 0 {
				continue
			}
		}
		a.Headers, a.Methods = sel.headers, sel.methods
		out = append(out, a)
	}
	return out
}

// egDefaultRule makes out, of local rule r without clientSelectors, the
// route's default bucket: Envoy Gateway builds it from the rule's limit
// alone, always enforced, and counts in it only the requests no other
// rule of the policy selects (d).
func (t *Translation) egDefaultRule(where string, out *Rule, r *egRule, d *egDefault) {
	if r.ShadowMode {
		t.same(where, "shadowMode is not applied to a local rule without clientSelectors: Envoy Gateway makes it the route's default bucket, from its requests and unit alone, and enforces it (filter_enforced 100%%): enforced here too.")
	}
	for _, e := range d.except {
		if slices.ContainsFunc(out.alternatives(), func(a RuleMatch) bool { return a.Paths == nil || e.Paths == nil || len(egNarrow(a.Paths, e.Paths)) > 0 }) {
			out.Except = append(out.Except, e)
		}
	}
	if len(d.except) > 0 {
		t.same(where, "the policy's other local rules select some of its requests, which Envoy Gateway counts in their own buckets only (always_consume_default_token_bucket: false): except: leaves them out of this one.")
	}
	if len(d.missed) > 0 {
		t.differs(where, "the requests %s selects are counted by Envoy Gateway in that rule's bucket only, never in this default one (always_consume_default_token_bucket: false); sluice's except: cannot say them, so they are counted here too and spend this bucket sooner: raise its quantity by what they use, or keep it in shadow mode (shadow: true) to compare.", strings.Join(d.missed, ", "))
	}
}

// egUnixWindow reports how a Month or a Year (window) of rule where is
// counted. envoyproxy/ratelimit counts it as a span of 30 or 365 days
// whose windows start where the Unix time is a multiple of it; sluice's
// fixed windows start where the time since sluice.Epoch (2020-01-01) is
// one, which for these spans is some days later: the two reset at other
// moments. Envoy's local token bucket refills by the span, with no
// boundary to align.
func (t *Translation) egUnixWindow(where, unit string, window time.Duration, local bool) {
	if local {
		t.differs(where, "a %s is a span of %s, not a calendar %s.", unit, formatWindow(window), strings.ToLower(unit))
		return
	}
	w := int64(window / time.Second)
	off := time.Duration(kongSluiceEpoch%w) * time.Second
	t.differs(where, "envoyproxy/ratelimit counts a %s as %s windows starting where the Unix time is a multiple of %ds, not a calendar %s; sluice's %s windows start where the time since 2020-01-01 00:00 UTC is one, %d days later than envoyproxy/ratelimit's boundaries: a count resets at another moment, so a client's share of two windows differs by up to the limit around a boundary. No sluice window starts where envoyproxy/ratelimit's do: accept the offset, or use a calendar month or year (window: month, window: year) with a quantity to match.", unit, formatWindow(window), w, strings.ToLower(unit), formatWindow(window), off/(24*time.Hour))
}
