package migrate

import (
	"fmt"
	"net/http"
	"net/netip"
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
				Method  string `yaml:"method"`
				Headers []any  `yaml:"headers"`
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
}

type egRateLimits struct {
	Rules []egRule `yaml:"rules"`
}

// egRule is one rate limit rule of a BackendTrafficPolicy.
type egRule struct {
	ClientSelectors []struct {
		Headers []struct {
			Name   string `yaml:"name"`
			Value  string `yaml:"value"`
			Type   string `yaml:"type"`
			Invert bool   `yaml:"invert"`
		} `yaml:"headers"`
		SourceCIDR *struct {
			Type  string `yaml:"type"`
			Value string `yaml:"value"`
		} `yaml:"sourceCIDR"`
	} `yaml:"clientSelectors"`
	Limit struct {
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

// egRoute is an HTTPRoute as a rule matches it: its path patterns (nil:
// every path) and host names.
type egRoute struct {
	paths, hosts []string
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
	routes := map[string]*egRoute{}
	owners := map[string]string{} // an HTTPRoute: the policy targeting it
	var policies []*egDoc
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
			routes[d.Metadata.Name] = r
		case "BackendTrafficPolicy":
			for _, ref := range d.targets() {
				if ref.Kind == "HTTPRoute" {
					owners[ref.Name] = d.Metadata.Name
				}
			}
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

// egRoute reads an HTTPRoute's path patterns and host names.
func (t *Translation) egRoute(d *egDoc) *egRoute {
	where := "HTTPRoute " + d.Metadata.Name
	r := &egRoute{hosts: t.egHostnames(where, d.Spec.Hostnames)}
	narrowed := false
	defer func() {
		if narrowed {
			t.differs(where, "its matches on methods and headers are not imported: its limits count every request to its paths.")
		}
	}()
	for _, rule := range d.Spec.Rules {
		if len(rule.Matches) == 0 {
			return &egRoute{hosts: r.hosts} // a rule matching every request
		}
		for _, m := range rule.Matches {
			narrowed = narrowed || m.Method != "" || len(m.Headers) > 0
			value := "/"
			if m.Path != nil && m.Path.Value != "" {
				value = m.Path.Value
			}
			switch {
			case !strings.HasPrefix(value, "/"):
				t.differs(where, "path %q does not start with a slash: its limits count every request.", value)
				return &egRoute{hosts: r.hosts}
			case m.Path == nil || m.Path.Type == "" || m.Path.Type == "PathPrefix":
				if value == "/" {
					return &egRoute{hosts: r.hosts}
				}
				pats := prefixPatterns(value)
				if len(pats) == 0 {
					t.differs(where, "path prefix %q is not a path sluice's rules match (a * or an empty segment): its limits count every request.", value)
					return &egRoute{hosts: r.hosts}
				}
				r.paths = append(r.paths, pats...)
			case m.Path.Type == "Exact" && validPattern(exactPattern(m.Path.Value)):
				r.paths = append(r.paths, exactPattern(m.Path.Value))
			default:
				t.differs(where, "path %s %q is not a prefix or an exact path: its limits count every request.", m.Path.Type, m.Path.Value)
				return &egRoute{hosts: r.hosts}
			}
		}
	}
	return r
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
func (t *Translation) egPolicy(p *egDoc, routes map[string]*egRoute, owners map[string]string) error {
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
			if routes[ref.Name] == nil {
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
		for i := range k.rules.Rules {
			base := fmt.Sprintf("%s-%d", p.Metadata.Name, i+1)
			if sets > 1 {
				base = fmt.Sprintf("%s-%s%d", p.Metadata.Name, k.tag, i+1)
			}
			routeOf := func(ref egRef) *egRoute {
				if ref.Kind == "HTTPRoute" {
					return routes[ref.Name]
				}
				return nil
			}
			if k.rules.Rules[i].Shared && !k.local && len(targets) > 1 {
				var rs []*egRoute
				for _, ref := range targets {
					if rt := routeOf(ref); rt == nil || !slices.Contains(rs, rt) {
						rs = append(rs, rt)
					}
				}
				name := t.ruleName(base)
				if err := t.egRule(name, &k.rules.Rules[i], rs, false); err != nil {
					return fmt.Errorf("rule %d: %w", i+1, err)
				}
				if slices.Contains(rs, nil) {
					t.same("rule "+name, "shared: true: Envoy Gateway keeps one bucket for the rule across the policy's %d targets, one of which is every request here: one rule of every request it selects, one count.", len(targets))
				} else {
					t.same("rule "+name, "shared: true: Envoy Gateway keeps one bucket for the rule across the policy's %d targets: one rule with an alternative per HTTPRoute (match: a list), each matching the route's hostnames and paths, one count across them.", len(targets))
				}
				continue
			}
			for _, ref := range targets {
				name := base
				if len(targets) > 1 {
					name += "-" + ref.Name
				}
				if err := t.egRule(t.ruleName(name), &k.rules.Rules[i], []*egRoute{routeOf(ref)}, k.local); err != nil {
					return fmt.Errorf("rule %d: %w", i+1, err)
				}
			}
		}
		if k.local {
			t.differs("policy "+p.Metadata.Name+" local", "Envoy's local rate limit keeps a bucket in each Envoy replica, so N replicas admit N times the limit; sluice on the Redis store keeps one for the fleet: multiply the quantities by N for the same total, or run sluice on its memory store beside each replica.")
		}
	}
	return nil
}

// egRule adds the sluice rule called name of one policy rule on routes
// (a nil one: every path), an alternative of it for each where they are
// several, one count across them. A rule whose clients sluice cannot
// select alike is not imported, and reported.
func (t *Translation) egRule(name string, r *egRule, routes []*egRoute, local bool) error {
	where := "rule " + name
	window, ok := egUnit(r.Limit.Unit)
	if !ok {
		return fmt.Errorf("limit unit %q: want Second, Minute, Hour, Day, Month or Year", r.Limit.Unit)
	}
	if r.Limit.Requests < 0 || r.Limit.Requests > sluice.MaxQuantity {
		return fmt.Errorf("limit requests %d is out of range", r.Limit.Requests)
	}
	out := Rule{Name: name}
	switch {
	case slices.Contains(routes, nil):
	case len(routes) == 1:
		out.Paths, out.Hosts = routes[0].paths, routes[0].hosts
	default:
		for _, rt := range routes {
			out.Any = append(out.Any, RuleMatch{Paths: rt.paths, Hosts: rt.hosts})
		}
	}
	var key []string
	for _, sel := range r.ClientSelectors {
		for _, h := range sel.Headers {
			if !validHeaderName(h.Name) {
				return fmt.Errorf("header %q is not a header name", h.Name)
			}
			h.Name = http.CanonicalHeaderKey(h.Name)
			switch {
			case h.Invert && (h.Type == "" || h.Type == "Exact") && h.Value != "" && printable(h.Value):
				// Selected: the requests whose header is not h.Value (those
				// without it too); the rule leaves out those with it.
				out.Except = append(out.Except, RuleMatch{Headers: []HeaderMatch{{Name: h.Name, Value: h.Value}}})
			case h.Invert:
				t.differs(where, "it selects requests whose %s does not match by a %s: sluice leaves out a header's exact value only; not imported.", h.Name, h.Type)
				return nil
			case h.Type == "Distinct" && t.claimHeaders[h.Name] != "" && t.JWT != nil:
				// Envoy wrote the header from a verified token's claim.
				claim := t.claimHeaders[h.Name]
				if claim == "sub" {
					key = append(key, "user")
				} else {
					key = append(key, "claim:"+claim)
				}
				t.same(where, "%s is claim %s of the verified token, copied by Envoy: sluice keys by the claim itself; a request without a verified token is counted by its address.", h.Name, claim)
			case h.Type == "Distinct":
				key = append(key, "header:"+h.Name)
				out.HeaderFrom, out.Fallback = "any", "skip"
			case h.Type == "" || h.Type == "Exact":
				if claim := t.claimHeaders[h.Name]; claim != "" {
					t.differs(where, "it selects %s %q, which Envoy copied from claim %s of the verified token; sluice matches the header as the request carries it, which a client can set: key a rule by claim:%s instead, or keep a proxy in front that sets the header (identity.trusted_proxies).", h.Name, h.Value, claim, claim)
				}
				out.Headers = append(out.Headers, HeaderMatch{Name: h.Name, Value: h.Value})
			default:
				t.differs(where, "it selects %s by a %s: sluice matches a header's exact value; not imported.", h.Name, h.Type)
				return nil
			}
		}
		if c := sel.SourceCIDR; c != nil {
			prefix, err := netip.ParsePrefix(c.Value)
			if err != nil {
				return fmt.Errorf("sourceCIDR %q: %w", c.Value, err)
			}
			switch {
			case prefix.Bits() != 0:
				t.differs(where, "it selects the clients of %s: sluice's rules select requests, not address ranges; not imported (exempt.addresses leaves a range unlimited).", c.Value)
				return nil
			case c.Type == "Distinct":
				key = append(key, "ip/32/128")
			}
		}
	}
	if len(key) == 0 {
		key = []string{"rule"} // every request it selects counts together
	}
	out.Key = key
	l := Limit{Name: "per-" + strings.ToLower(r.Limit.Unit), Algorithm: "fixed-window", Quantity: r.Limit.Requests, Window: window,
		Shadow: r.ShadowMode, Source: fmt.Sprintf("%s: %d requests per %s", where, r.Limit.Requests, r.Limit.Unit)}
	if local {
		l.Algorithm, l.Burst = "token-bucket", r.Limit.Requests
		t.same(where, "Envoy's local rate limit is a token bucket of %d refilled at %d per %s, starting full: sluice's token-bucket.", r.Limit.Requests, r.Limit.Requests, r.Limit.Unit)
	} else {
		t.same(where, "Envoy Gateway's global rate limit is envoyproxy/ratelimit's fixed window of %d per %s aligned to the clock: sluice's fixed-window.", r.Limit.Requests, r.Limit.Unit)
	}
	if r.Limit.Unit == "Month" || r.Limit.Unit == "Year" {
		t.differs(where, "a %s is counted as %s from the Unix epoch, as envoyproxy/ratelimit counts it, not a calendar %s.", r.Limit.Unit, formatWindow(window), strings.ToLower(r.Limit.Unit))
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
	for j := range out.Any {
		out.Any[j].Headers = out.Headers
	}
	if len(out.Any) > 0 {
		out.Headers = nil
	}
	out.Limits = []Limit{l}
	t.SluiceRules = append(t.SluiceRules, out)
	return nil
}
