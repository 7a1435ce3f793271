package migrate

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/routes"
)

// envoyLocalType ends the type URL of the HTTP local rate limit filter's
// configuration.
const envoyLocalType = "local_ratelimit.v3.LocalRateLimit"

// isEnvoyLocal reports whether src configures Envoy's local rate limit
// filter rather than being envoyproxy/ratelimit's rules.
func isEnvoyLocal(src string) bool { return strings.Contains(src, envoyLocalType) }

// envoyLocalConfig is one LocalRateLimit configuration and where it
// applies: to a route, to a virtual host's routes, or (neither) to every
// request of the filter chain.
type envoyLocalConfig struct {
	cfg   *yaml.Node
	vhost *yaml.Node // nil: not inside a virtual host
	route *yaml.Node // nil: not inside a route
	// routes are the routes of the virtual host, in order (first match
	// wins), for the paths a route's rule leaves to the routes before it.
	routes []*yaml.Node
	// vhosts are the virtual hosts of the route configuration, vhost's
	// among them: Envoy gives a "*" virtual host only the hosts that none
	// of the others names.
	vhosts []*yaml.Node
}

// EnvoyLocal translates Envoy's HTTP local rate limit filter
// (envoy.filters.http.local_ratelimit): its configuration in the filter
// chain, a virtual host's or a route's typed_per_filter_config, in an Envoy
// bootstrap, a route configuration or an Istio EnvoyFilter, in one or
// several YAML documents. Each token bucket becomes a rule: the route's
// paths, headers and hosts, counted as one (Envoy's buckets are per process,
// shared by every client) or, for a descriptor without a value, per value of
// what its rate_limits action reads (a header, the client's address).
func EnvoyLocal(src, source string) (*Translation, error) {
	t := &Translation{Format: FormatEnvoy, Source: source, local: true}
	var found []envoyLocalConfig
	err := eachDocument(src, source, func(doc *yaml.Node) error {
		n := len(found)
		if err := findLocalConfigs(doc, envoyLocalConfig{}, 0, &found); err != nil {
			return err
		}
		if len(found) > n {
			t.istioWorkloads(doc)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(found) > MaxPlaces {
		return nil, fmt.Errorf("%s: %w", source, tooManyPlaces(len(found), "local rate limit configurations"))
	}
	descriptors := 0 // each a rule
	for _, c := range found {
		if d := mapValue(c.cfg, "descriptors"); d != nil {
			descriptors += len(d.Content)
		}
	}
	if descriptors > MaxPlaces {
		return nil, fmt.Errorf("%s: %w", source, tooManyPlaces(descriptors, "local rate limit descriptors"))
	}
	for _, c := range found {
		if err := envoyFillIntervals(c.cfg); err != nil {
			return nil, fmt.Errorf("%s: %w", source, err)
		}
	}
	for _, c := range found {
		t.envoyLocalRules(c, found)
	}
	if len(t.SluiceRules) == 0 {
		return nil, fmt.Errorf("%s: no local rate limit sluice can import: a LocalRateLimit with a token_bucket, enabled by filter_enabled", source)
	}
	t.differs("instances", "each Envoy process keeps its own buckets, so N Envoy instances admit N times a limit. One sluice beside each Envoy on its memory store keeps that; on the Redis store a limit is shared by the fleet: multiply its quantity and burst by N for the same total.")
	t.differs("headers", "Envoy's local rate limit answers 429 with x-envoy-ratelimited (and x-ratelimit-* when enable_x_ratelimit_headers is set); sluice sends RateLimit-Policy and RateLimit (IETF draft) on every response, and Retry-After with a problem+json body on 429.")
	return t, nil
}

// istioWorkloads reports the workloads doc, an Istio EnvoyFilter, limits
// when it selects some (spec.workloadSelector's labels): Istio applies it to
// their proxies only, sluice's rules to every request sluice sees.
func (t *Translation) istioWorkloads(doc *yaml.Node) {
	root := doc
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	if kind := mapValue(root, "kind"); kind == nil || kind.Value != "EnvoyFilter" {
		return
	}
	labels := mapValue(mapValue(mapValue(root, "spec"), "workloadSelector"), "labels")
	if labels == nil || labels.Kind != yaml.MappingNode || len(labels.Content) == 0 {
		return
	}
	var sel []string
	for i := 0; i+1 < len(labels.Content); i += 2 {
		sel = append(sel, labels.Content[i].Value+"="+labels.Content[i+1].Value)
	}
	name := ""
	if md := mapValue(mapValue(root, "metadata"), "name"); md != nil {
		name = md.Value
	}
	t.differs("EnvoyFilter "+name, "Istio applies it to the proxies of the workloads labelled %s only; sluice's rules limit every request sluice sees: put sluice in front of those workloads alone, or give the rules their hosts or paths.", strings.Join(sel, ", "))
}

// findLocalConfigs walks n, which lies where at says (its cfg unset), for
// LocalRateLimit configurations, noting the virtual host and route each
// lies in.
func findLocalConfigs(n *yaml.Node, at envoyLocalConfig, depth int, out *[]envoyLocalConfig) error {
	if depth > 64 {
		return fmt.Errorf("line %d: nested more than 64 deep", n.Line)
	}
	switch n.Kind {
	case yaml.DocumentNode, yaml.SequenceNode:
		for _, c := range n.Content {
			if err := findLocalConfigs(c, at, depth+1, out); err != nil {
				return err
			}
		}
	case yaml.MappingNode:
		if ty := mapValue(n, "@type"); ty != nil && strings.HasSuffix(ty.Value, envoyLocalType) {
			at.cfg = n
			*out = append(*out, at)
			return nil
		}
		// Istio writes it as a TypedStruct: its type_url, and the
		// configuration in value.
		if tu, v := mapValue(n, "type_url"), mapValue(n, "value"); tu != nil && strings.HasSuffix(tu.Value, envoyLocalType) && v != nil && v.Kind == yaml.MappingNode {
			at.cfg = v
			*out = append(*out, at)
			return nil
		}
		if mapValue(n, "domains") != nil {
			at.vhost, at.route, at.routes = n, nil, nil
			if rs := mapValue(n, "routes"); rs != nil && rs.Kind == yaml.SequenceNode {
				at.routes = rs.Content
			}
		} else if mapValue(n, "match") != nil && at.vhost != nil {
			at.route = n
		}
		for i := 1; i < len(n.Content); i += 2 {
			in := at
			if n.Content[i-1].Value == "virtual_hosts" && n.Content[i].Kind == yaml.SequenceNode {
				in.vhosts = n.Content[i].Content
			}
			if err := findLocalConfigs(n.Content[i], in, depth+1, out); err != nil {
				return err
			}
		}
	}
	return nil
}

// envoyLocalRules makes the rules of one configuration: its default token
// bucket and its descriptors' buckets. all are every configuration found,
// for the routes that replace a wider one's.
func (t *Translation) envoyLocalRules(c envoyLocalConfig, all []envoyLocalConfig) {
	where := "local_ratelimit"
	if p := mapValue(c.cfg, "stat_prefix"); p != nil && p.Value != "" {
		where += " " + p.Value
	}
	switch {
	case c.route != nil:
		where += " on route " + routeName(c.route, c.routes)
	case c.vhost != nil:
		where += " on virtual host " + scalar(mapValue(c.vhost, "name"))
	}
	where = fmt.Sprintf("%s (line %d)", where, c.cfg.Line)
	enabled, enforced := fraction(mapValue(c.cfg, "filter_enabled")), fraction(mapValue(c.cfg, "filter_enforced"))
	bucket := mapValue(c.cfg, "token_bucket")
	descs := mapValue(c.cfg, "descriptors")
	if bucket == nil && (descs == nil || len(descs.Content) == 0) {
		return // the filter is in the chain; routes configure its buckets
	}
	if enabled == 0 {
		t.differs(where, "filter_enabled is 0%% (its default): Envoy does not apply it, so it is not imported.")
		return
	}
	shadow := enforced == 0
	switch {
	case enabled < 1:
		t.differs(where, "filter_enabled applies it to %.4g%% of requests; sluice applies a rule to every request it matches.", enabled*100)
	case shadow:
		t.same(where, "filter_enforced is 0%%: Envoy only counts what it would refuse; imported in shadow mode.")
	case enforced < 1:
		t.differs(where, "filter_enforced refuses %.4g%% of what it would refuse; sluice refuses all of it.", enforced*100)
	}
	base := Rule{}
	if !t.envoyLocalMatch(&base, c, all, where) {
		return
	}
	name := "local"
	if c.route != nil {
		name = routeName(c.route, c.routes)
	} else if c.vhost != nil {
		name = scalar(mapValue(c.vhost, "name"))
	}
	if bucket != nil {
		l, ok := t.envoyBucket(bucket, "per-process", where)
		if ok {
			l.Shadow = shadow
			r := base
			r.Name, r.Key, r.Limits = t.ruleName(name), []string{"rule"}, []Limit{l}
			t.SluiceRules = append(t.SluiceRules, r)
			t.same(where+" bucket", "one token bucket for every request it applies to, as Envoy's is shared by the process's workers and clients (key rule).")
		}
	}
	if v := mapValue(c.cfg, "local_rate_limit_per_downstream_connection"); v != nil && v.Value == "true" {
		t.differs(where, "local_rate_limit_per_downstream_connection gives each connection its own buckets; sluice has no count per connection: the imported buckets are shared. Key them by the client's address (ip/32/128) if that is what a connection stood for.")
	}
	if v := mapValue(c.cfg, "status"); v != nil {
		if code := scalar(mapValue(v, "code")); code != "" && code != "TooManyRequests" && code != "429" {
			t.differs(where+" status", "Envoy answered %s; sluice answers 429 Too Many Requests with Retry-After and a problem+json body.", code)
		}
	}
	if descs != nil {
		if len(descs.Content) > 0 && bucket != nil {
			t.differs(where, "Envoy spends a matching descriptor's token before it asks the default bucket, and keeps it spent when the default bucket refuses; sluice checks a request's rules in one atomic call, so a refused request spends nothing.")
		}
		if dynamicOverlap(descs) {
			t.differs(where, "a descriptor whose entries all have values has a bucket of its own in Envoy, and one of the same keys without a value counts every other value; sluice's rule for the one without a value counts the first one's requests too, so they are limited by both.")
		}
		for i, d := range descs.Content {
			t.envoyLocalDescriptor(d, c, base, fmt.Sprintf("%s-%d", name, i+1), fmt.Sprintf("%s descriptor %d", where, i+1), shadow)
		}
		if v := mapValue(c.cfg, "always_consume_default_token_bucket"); v != nil && v.Value == "false" && bucket != nil {
			t.differs(where, "always_consume_default_token_bucket: false spends only a matching descriptor's bucket; sluice's rules also count such a request in the default bucket.")
		}
	}
}

// envoyBucket reads a token_bucket as a sluice token bucket named name.
func (t *Translation) envoyBucket(b *yaml.Node, name, where string) (Limit, bool) {
	maxTokens, err := strconv.ParseInt(scalar(mapValue(b, "max_tokens")), 10, 64)
	if err != nil || maxTokens < 1 || maxTokens > sluice.MaxQuantity {
		t.differs(where, "not imported: max_tokens %q is not a count sluice holds (0 refuses every request).", scalar(mapValue(b, "max_tokens")))
		return Limit{}, false
	}
	perFill := int64(1)
	if n := mapValue(b, "tokens_per_fill"); n != nil {
		v := scalar(n)
		if n.Kind == yaml.MappingNode {
			v = scalar(mapValue(n, "value"))
		}
		if perFill, err = strconv.ParseInt(v, 10, 64); err != nil || perFill < 1 || perFill > sluice.MaxQuantity {
			t.differs(where, "not imported: tokens_per_fill %q is not a count.", v)
			return Limit{}, false
		}
	}
	interval, err := protoDuration(scalar(mapValue(b, "fill_interval")))
	if err != nil {
		t.differs(where, "not imported: fill_interval: %v.", err)
		return Limit{}, false
	}
	t.same(where, "Envoy's token bucket (continuous since Envoy 1.31) holds %d tokens, starts full and refills %d every %s: sluice's token-bucket of %d per %s with burst %d. (Envoy before 1.31 added the %d at once at the end of each interval.)",
		maxTokens, perFill, formatWindow(interval), perFill, formatWindow(interval), maxTokens, perFill)
	return Limit{Name: name, Algorithm: "token-bucket", Quantity: perFill, Window: interval, Burst: maxTokens,
		Source: fmt.Sprintf("%s: max_tokens %d, tokens_per_fill %d, fill_interval %s", where, maxTokens, perFill, formatWindow(interval))}, true
}

// envoyMinFill is the shortest fill_interval Envoy accepts for a token
// bucket that holds tokens.
const envoyMinFill = 50 * time.Millisecond

// envoyFillIntervals refuses cfg, a LocalRateLimit, as Envoy refuses it
// when loading it (whether the filter is enabled or not): its default
// token_bucket, unless it holds no tokens or its fill_interval is 0 (no
// default bucket), and each descriptor's token_bucket that holds tokens
// must fill at most every 50ms.
func envoyFillIntervals(cfg *yaml.Node) error {
	check := func(b *yaml.Node, what string, zeroIsNone bool) error {
		if b == nil || scalar(mapValue(b, "max_tokens")) == "0" {
			return nil
		}
		s := scalar(mapValue(b, "fill_interval"))
		d, err := time.ParseDuration(s)
		if err != nil || !strings.HasSuffix(s, "s") || zeroIsNone && d == 0 || d >= envoyMinFill {
			return nil // read, or reported, where the bucket is imported
		}
		return fmt.Errorf("line %d: %s fill_interval %s: Envoy refuses a token bucket that fills more often than every %s (\"fill timer must be >= 50ms\")",
			b.Line, what, s, formatWindow(envoyMinFill))
	}
	if err := check(mapValue(cfg, "token_bucket"), "token_bucket", true); err != nil {
		return err
	}
	if descs := mapValue(cfg, "descriptors"); descs != nil {
		for i, d := range descs.Content {
			if err := check(mapValue(d, "token_bucket"), fmt.Sprintf("descriptor %d token_bucket", i+1), false); err != nil {
				return err
			}
		}
	}
	return nil
}

// protoDuration reads a protobuf Duration as YAML writes it ("1s", "0.5s",
// "60s"), whole microseconds, within sluice's windows.
func protoDuration(s string) (time.Duration, error) {
	if !strings.HasSuffix(s, "s") {
		return 0, fmt.Errorf("%q is not a duration such as 1s or 0.5s", s)
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < time.Millisecond || d%time.Microsecond != 0 || d > sluice.MaxWindow {
		return 0, fmt.Errorf("%q is not a duration sluice holds (1ms to %s, whole microseconds)", s, formatWindow(sluice.MaxWindow))
	}
	return d, nil
}

// fraction reads a RuntimeFractionalPercent's default value: 0 when absent.
func fraction(n *yaml.Node) float64 {
	if n == nil {
		return 0
	}
	v := mapValue(n, "default_value")
	if v == nil {
		return 0
	}
	num, _ := strconv.ParseFloat(scalar(mapValue(v, "numerator")), 64)
	den := map[string]float64{"": 100, "HUNDRED": 100, "TEN_THOUSAND": 10000, "MILLION": 1e6}[scalar(mapValue(v, "denominator"))]
	if den == 0 {
		return 0
	}
	return min(max(num/den, 0), 1)
}

func scalar(n *yaml.Node) string {
	if n == nil || n.Kind != yaml.ScalarNode {
		return ""
	}
	return n.Value
}

// routeName names a route: its name, else its place in its virtual host.
func routeName(route *yaml.Node, routes []*yaml.Node) string {
	if n := scalar(mapValue(route, "name")); n != "" {
		return n
	}
	for i, r := range routes {
		if r == route {
			return fmt.Sprintf("route-%d", i+1)
		}
	}
	return "route"
}

// envoyLocalMatch narrows r to the requests c applies to: its route's
// match and its virtual host's domains, leaving out the routes before it
// that take some of its requests (first match wins) and, for a wider
// configuration, the routes and virtual hosts with their own. It reports
// false, having said why, when sluice cannot match them.
func (t *Translation) envoyLocalMatch(r *Rule, c envoyLocalConfig, all []envoyLocalConfig, where string) bool {
	if c.vhost != nil {
		var hosts []string
		for _, d := range mapValue(c.vhost, "domains").Content {
			host := strings.ToLower(d.Value)
			if host == "*" {
				hosts = nil
				break
			}
			if !validHostName(host) {
				t.differs(where, "the virtual host's domain %q is not a host name sluice's rules match (no wildcards, no ports): the rule matches every host.", d.Value)
				hosts = nil
				break
			}
			hosts = append(hosts, host)
		}
		r.Hosts = hosts
		if slices.Contains(domainsOf(c.vhost), "*") {
			t.leaveOutOtherHosts(r, c.vhost, c.vhosts, where)
		}
	}
	// A "*" virtual host with a bucket of its own takes every host the
	// others do not name: the filter chain's bucket counts theirs alone.
	wildcard := c.route == nil && c.vhost == nil && chainOnOtherHosts(r, c, all)
	if c.route != nil {
		own, ok := t.routePatterns(c.route, r, where)
		if !ok {
			return false
		}
		r.Paths = own
		for _, before := range c.routes {
			if before == c.route {
				break
			}
			t.leaveOutEarlier(r, before, own, where)
		}
	}
	// Routes and virtual hosts below this configuration that have their
	// own replace it there.
	for _, o := range all {
		if o.cfg == c.cfg || mapValue(o.cfg, "token_bucket") == nil || wildcard && slices.Contains(domainsOf(o.vhost), "*") {
			continue
		}
		switch {
		case c.route == nil && c.vhost == nil && o.vhost != nil, c.route == nil && c.vhost != nil && o.vhost == c.vhost && o.route != nil:
			hosts, exact := exactDomains(o.vhost)
			if o.route == nil {
				if exact {
					r.Except = append(r.Except, RuleMatch{Hosts: hosts})
					continue
				}
				t.differs(where, "virtual host %s has a bucket of its own, which replaces this one there; sluice counts its requests in both. Add hosts to this rule's match to leave them out.", scalar(mapValue(o.vhost, "name")))
				continue
			}
			if c.vhost != nil || !exact {
				if ps, simple := plainPatterns(o.route); simple && len(ps) > 0 && r.leaveOut(ps, r.Paths) {
					if c.vhost == nil && !slices.Contains(domainsOf(o.vhost), "*") {
						t.differs(where, "route %s of virtual host %s has a bucket of its own; the rule leaves its paths out on every host, not only on %s.", routeName(o.route, o.routes), scalar(mapValue(o.vhost, "name")), strings.Join(domainsOf(o.vhost), ", "))
					} else if others, inexact := otherHosts(o.vhost, o.vhosts); c.vhost == nil && len(others)+len(inexact) > 0 {
						for _, v := range inexact {
							others = append(others, domainsOf(v)...)
						}
						t.differs(where, "route %s of virtual host %s has a bucket of its own; the rule leaves its paths out on every host, also on %s, which Envoy gives the other virtual hosts and this bucket.", routeName(o.route, o.routes), scalar(mapValue(o.vhost, "name")), strings.Join(others, ", "))
					}
					t.earlierTaken(o, where)
					continue
				}
			}
			if c.vhost != nil || exact {
				// On another virtual host, its domains; on this one, the
				// rule's hosts already are.
				if e, note, ok := routeExcept(o.route); ok && (c.vhost == nil || len(e.Paths)+len(e.Methods)+len(e.Headers) > 0) {
					if c.vhost == nil {
						e.Hosts = hosts
					}
					r.Except = append(r.Except, e)
					if note != "" {
						t.differs(where, "route %s has a bucket of its own, which this rule leaves out: its %s.", routeName(o.route, o.routes), note)
					}
					t.earlierTaken(o, where)
					continue
				}
			}
			t.differs(where, "route %s has a bucket of its own, which replaces this one there; sluice cannot leave its requests out of this rule: both count them.", routeName(o.route, o.routes))
		}
	}
	return true
}

// leaveOutOtherHosts leaves out of r, the rule of a configuration of the
// "*" virtual host vhost, the domains of the other virtual hosts of its
// route configuration (vhosts): Envoy gives their requests to them. It
// says so where sluice cannot (a wildcard or a port in a domain).
func (t *Translation) leaveOutOtherHosts(r *Rule, vhost *yaml.Node, vhosts []*yaml.Node, where string) {
	hosts, inexact := otherHosts(vhost, vhosts)
	for _, v := range inexact {
		t.differs(where, "virtual host %s takes its domains (%s) before the \"*\" one, and sluice cannot leave them out of this rule (a wildcard or a port): it counts their requests too.", scalar(mapValue(v, "name")), strings.Join(domainsOf(v), ", "))
	}
	if len(hosts) > 0 {
		r.Except = append(r.Except, RuleMatch{Hosts: hosts})
	}
}

// chainOnOtherHosts restricts r, the filter chain's rule of c, to the
// hosts of the virtual hosts beside a "*" one that has a bucket of its own
// (which replaces the chain's on every other host), and reports whether it
// did. It does not when a domain of theirs has a wildcard or a port, or
// there is no other virtual host: envoyLocalMatch then says both count.
func chainOnOtherHosts(r *Rule, c envoyLocalConfig, all []envoyLocalConfig) bool {
	for _, o := range all {
		if o.cfg == c.cfg || o.route != nil || o.vhost == nil || mapValue(o.cfg, "token_bucket") == nil || !slices.Contains(domainsOf(o.vhost), "*") {
			continue
		}
		hosts, inexact := otherHosts(o.vhost, o.vhosts)
		if len(hosts) == 0 || len(inexact) > 0 {
			return false
		}
		r.Hosts = hosts
		return true
	}
	return false
}

// otherHosts returns the domains, in lower case, of the virtual hosts of
// vhosts other than vhost whose domains are all exact host names
// (exactDomains), and the others.
func otherHosts(vhost *yaml.Node, vhosts []*yaml.Node) (hosts []string, inexact []*yaml.Node) {
	for _, v := range vhosts {
		if v == vhost {
			continue
		}
		if ds, exact := exactDomains(v); exact {
			hosts = append(hosts, ds...)
		} else {
			inexact = append(inexact, v)
		}
	}
	return hosts, inexact
}

// leaveOutEarlier leaves before, a route listed before the one of r's
// configuration in its virtual host (own: that route's patterns), out of
// r: Envoy gives it the requests both match (first match wins). A route of
// paths alone is left out by except_paths where they can; another, or one
// whose path is r's, by an except entry of its paths, methods and
// headers. It says so when sluice cannot.
func (t *Translation) leaveOutEarlier(r *Rule, before *yaml.Node, own []string, where string) {
	if ps, simple := plainPatterns(before); simple {
		if len(ps) == 0 {
			return // every path: the route is never reached
		}
		below := belowAny(ps, own)
		if len(below) == len(overlapping(ps, own)) && r.leaveOut(below, own) {
			return
		}
	}
	e, note, ok := routeExcept(before)
	if !ok {
		t.differs(where, "an earlier route of the virtual host takes some of these requests (first match wins), and sluice cannot leave it out here: both count them.")
		return
	}
	if len(e.Paths) > 0 {
		if e.Paths = overlapping(e.Paths, own); len(e.Paths) == 0 {
			return // none of these requests
		}
	}
	if len(e.Paths)+len(e.Methods)+len(e.Headers) == 0 {
		return // every request: the route is never reached
	}
	r.Except = append(r.Except, e)
	if note != "" {
		t.differs(where, "an earlier route of the virtual host takes some of these requests (first match wins), which the rule leaves out: its %s.", note)
	}
}

// earlierTaken says where a route before o's, in its virtual host, may
// take some requests of o's match first: Envoy limits those by the
// configuration of where, which leaves o's requests out with them.
func (t *Translation) earlierTaken(o envoyLocalConfig, where string) {
	e, _, ok := routeExcept(o.route)
	for _, before := range o.routes {
		if before == o.route {
			return
		}
		b, _, bok := routeExcept(before)
		if ok && bok && len(e.Paths) > 0 && len(b.Paths) > 0 && len(overlapping(b.Paths, e.Paths)) == 0 {
			continue
		}
		t.differs(where, "route %s comes before route %s, which has a bucket of its own, and may take some of its requests (first match wins), which Envoy counts here; the rule leaves them out with route %s's.",
			routeName(before, o.routes), routeName(o.route, o.routes), routeName(o.route, o.routes))
		return
	}
}

// routeExcept returns the requests of route's match as an except entry:
// its paths, the methods of its :method matchers, its headers' presence
// or exact values; note says what it matches that the entry does not (a
// prefix not ending in a slash also takes "/apix"). It reports false for
// a match sluice cannot leave out exactly or by less: a regular
// expression, query parameters, another kind of header matcher, paths in
// any case.
func routeExcept(route *yaml.Node) (e RuleMatch, note string, ok bool) {
	m := mapValue(route, "match")
	if m == nil || m.Kind != yaml.MappingNode {
		return e, "", false
	}
	plain := &yaml.Node{Kind: yaml.MappingNode}
	for i := 0; i+1 < len(m.Content); i += 2 {
		switch k := m.Content[i].Value; k {
		case "prefix", "path", "path_separated_prefix":
			plain.Content = append(plain.Content, m.Content[i], m.Content[i+1])
		case "headers":
		case "case_sensitive":
			if m.Content[i+1].Value == "false" {
				return e, "", false
			}
		default:
			return e, "", false
		}
	}
	if hs := mapValue(m, "headers"); hs != nil {
		for _, h := range hs.Content {
			if v := mapValue(h, "invert_match"); v != nil && v.Value == "true" {
				return e, "", false
			}
			name := scalar(mapValue(h, "name"))
			value, exact := headerExact(h)
			switch {
			case !exact:
				return e, "", false
			case strings.EqualFold(name, ":method"):
				if value != "" {
					e.Methods = append(e.Methods, value)
				}
			case !validHeaderName(name) || strings.HasPrefix(name, ":") || !printable(value):
				return e, "", false
			default:
				e.Headers = append(e.Headers, HeaderMatch{Name: http.CanonicalHeaderKey(name), Value: value})
			}
		}
	}
	var scratch Translation
	var sr Rule
	ps, ok := scratch.routePatterns(&yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{{Kind: yaml.ScalarNode, Value: "match"}, plain}}, &sr, "")
	if !ok {
		return e, "", false
	}
	e.Paths = ps
	if p := scalar(mapValue(m, "prefix")); p != "" && p != "/" && !strings.HasSuffix(p, "/") {
		note = fmt.Sprintf("prefix %s also takes paths such as %sx, which the rule still counts", p, p)
	}
	return e, note, true
}

// overlapping returns the patterns of ps that some path of own may match
// too (routes.PathsOverlap); all of ps when own is empty (every path).
func overlapping(ps, own []string) []string {
	if len(own) == 0 {
		return ps
	}
	var out []string
	for _, p := range ps {
		if slices.ContainsFunc(own, func(o string) bool { return routes.PathsOverlap(p, o) }) {
			out = append(out, p)
		}
	}
	return out
}

// exactDomains returns a virtual host's domains, in lower case, and
// whether each is a host name that sluice matches as Envoy does: no
// wildcard (Envoy gives a name under "*.example.com" to a virtual host of
// that very name first), no port.
func exactDomains(vhost *yaml.Node) ([]string, bool) {
	var hosts []string
	for _, d := range domainsOf(vhost) {
		h := strings.ToLower(d)
		if !validHostName(h) {
			return nil, false
		}
		hosts = append(hosts, h)
	}
	return hosts, len(hosts) > 0
}

// plainPatterns returns the ServeMux patterns of a route matched by path
// alone, and whether it is so matched.
func plainPatterns(route *yaml.Node) ([]string, bool) {
	m := mapValue(route, "match")
	if m == nil || mapValue(m, "headers") != nil || mapValue(m, "query_parameters") != nil {
		return nil, false
	}
	var scratch Translation
	var r Rule
	ps, ok := scratch.routePatterns(route, &r, "")
	return ps, ok && len(r.Headers) == 0
}

// routePatterns returns the ServeMux patterns of a route's match (nil:
// every path) and adds its header matchers to r; false, having said why,
// for a match sluice cannot express.
func (t *Translation) routePatterns(route *yaml.Node, r *Rule, where string) ([]string, bool) {
	m := mapValue(route, "match")
	var patterns []string
	switch {
	case mapValue(m, "prefix") != nil:
		p := scalar(mapValue(m, "prefix"))
		switch {
		case p == "/" || p == "":
		case !validPathValue(p):
			t.differs(where, "not imported: prefix %q is not a path sluice matches.", p)
			return nil, false
		default:
			patterns = prefixPatterns(p)
			if !strings.HasSuffix(p, "/") {
				t.differs(where+" path", "prefix %s also matches paths such as %sx; sluice's rule matches %s and the paths below %s/.", p, p, p, p)
			}
		}
	case mapValue(m, "path") != nil || mapValue(m, "path_separated_prefix") != nil:
		p := scalar(mapValue(m, "path"))
		sep := p == ""
		if sep {
			p = scalar(mapValue(m, "path_separated_prefix"))
		}
		if !validPathValue(p) {
			t.differs(where, "not imported: path %q is not a path sluice matches.", p)
			return nil, false
		}
		if sep {
			patterns = prefixPatterns(p)
		} else {
			patterns = []string{exactPattern(p)}
		}
	default:
		t.differs(where, "not imported: the route matches by a regular expression or a template; sluice's rules match paths and prefixes.")
		return nil, false
	}
	if cs := mapValue(m, "case_sensitive"); cs != nil && cs.Value == "false" {
		t.differs(where+" path", "the route matches paths in any case; sluice's rule matches them as written.")
	}
	if hs := mapValue(m, "headers"); hs != nil {
		for _, h := range hs.Content {
			name := scalar(mapValue(h, "name"))
			value, ok := headerExact(h)
			if v := mapValue(h, "invert_match"); v != nil && v.Value == "true" {
				// The route takes the requests the matcher does not match:
				// the rule leaves out those it does.
				if !validHeaderName(name) || !ok || !printable(value) {
					t.differs(where, "not imported: the route's inverted header matcher on %q is not a header's presence or exact value.", name)
					return nil, false
				}
				r.Except = append(r.Except, RuleMatch{Headers: []HeaderMatch{{Name: http.CanonicalHeaderKey(name), Value: value}}})
				continue
			}
			if strings.EqualFold(name, ":method") && ok {
				if !t.routeMethod(r, value, where) {
					return nil, false
				}
				continue
			}
			if !validHeaderName(name) || strings.HasPrefix(name, ":") || !ok || !printable(value) {
				t.differs(where, "not imported: the route's header matcher on %q is not a header's presence or exact value.", name)
				return nil, false
			}
			r.Headers = append(r.Headers, HeaderMatch{Name: http.CanonicalHeaderKey(name), Value: value})
		}
	}
	if mapValue(m, "query_parameters") != nil {
		t.differs(where, "the route also matches query parameters; sluice's rule matches the path alone.")
	}
	return patterns, true
}

// routeMethod makes r, a route's rule, match method, the exact value of
// the route's :method matcher ("" for its presence, which every request
// has); false, having said why, for a method a rule cannot match exactly
// (a standard method in another case, a second method: two :method
// matchers match nothing). A rule's GET matches HEAD too, which Envoy's
// exact GET does not: the rule leaves HEAD out.
func (t *Translation) routeMethod(r *Rule, method, where string) bool {
	_, otherCase := routes.MethodInOtherCase(method)
	switch {
	case method == "":
		return true
	case !validHeaderName(method) || otherCase:
		t.differs(where, "not imported: the route matches :method %q, not a method sluice's rules match as written.", method)
		return false
	case len(r.Methods) > 0:
		t.differs(where, "not imported: the route matches :method %q and %q, both exactly.", r.Methods[0], method)
		return false
	}
	r.Methods = []string{method}
	if method == http.MethodGet {
		r.Except = append(r.Except, RuleMatch{Methods: []string{http.MethodHead}})
	}
	return true
}

// headerExact reads a route's header matcher: its exact value, or "" for
// presence; false for another kind of match.
func headerExact(h *yaml.Node) (string, bool) {
	if v := mapValue(h, "exact_match"); v != nil {
		return scalar(v), scalar(v) != ""
	}
	if sm := mapValue(h, "string_match"); sm != nil {
		if v := mapValue(sm, "exact"); v != nil && len(sm.Content) == 2 {
			return scalar(v), scalar(v) != ""
		}
		return "", false
	}
	if v := mapValue(h, "present_match"); v != nil && v.Value == "true" {
		return "", true
	}
	return "", false
}

// envoyLocalDescriptor makes the rule of one descriptor of a
// configuration: its entries name what the route's rate_limits actions
// read, matched (a value) or counted apart (no value).
func (t *Translation) envoyLocalDescriptor(d *yaml.Node, c envoyLocalConfig, base Rule, name, where string, shadow bool) {
	bucket := mapValue(d, "token_bucket")
	if bucket == nil {
		t.differs(where, "not imported: a descriptor without a token_bucket.")
		return
	}
	r := base
	r.Name, r.Headers = t.ruleName(name), append([]HeaderMatch(nil), base.Headers...)
	entries := mapValue(d, "entries")
	if entries == nil || len(entries.Content) == 0 {
		t.differs(where, "not imported: a descriptor without entries.")
		return
	}
	for _, e := range entries.Content {
		key, value := scalar(mapValue(e, "key")), scalar(mapValue(e, "value"))
		action := descriptorAction(c, key)
		if action == nil {
			t.differs(where, "not imported: no rate_limits action of its route makes the entry %q, so Envoy never matches it.", key)
			return
		}
		switch {
		case mapValue(action, "request_headers") != nil:
			header := scalar(mapValue(mapValue(action, "request_headers"), "header_name"))
			attr, match := headerAttribute(header)
			switch {
			case attr == "":
				t.differs(where, "not imported: sluice cannot read the header %q.", header)
				return
			case value == "":
				r.Key = append(r.Key, attr)
				if strings.HasPrefix(attr, "header:") {
					r.HeaderFrom = "any"
				}
				r.Fallback = "skip"
			case match == "path" && validPathValue(value):
				r.Paths = []string{value}
			case match == "header" && printable(value):
				r.Headers = append(r.Headers, HeaderMatch{Name: strings.TrimPrefix(attr, "header:"), Value: value})
			default:
				t.differs(where, "not imported: sluice's rules cannot match %s = %q.", header, value)
				return
			}
		case mapValue(action, "generic_key") != nil:
			if value != "" && value != scalar(mapValue(mapValue(action, "generic_key"), "descriptor_value")) {
				t.differs(where, "not imported: the generic_key action never makes the value %q.", value)
				return
			}
		case mapValue(action, "remote_address") != nil && value == "":
			r.Key = append(r.Key, "ip/32/128")
		case mapValue(action, "masked_remote_address") != nil && value == "":
			mra := mapValue(action, "masked_remote_address")
			v4, v6 := 32, 128
			if n, err := strconv.Atoi(scalar(mapValue(mra, "v4_prefix_mask_len"))); err == nil && n >= 1 && n <= 32 {
				v4 = n
			}
			if n, err := strconv.Atoi(scalar(mapValue(mra, "v6_prefix_mask_len"))); err == nil && n >= 1 && n <= 128 {
				v6 = n
			}
			r.Key = append(r.Key, fmt.Sprintf("ip/%d/%d", v4, v6))
		default:
			t.differs(where, "not imported: sluice's rules cannot match or count the entry %q as its action makes it.", key)
			return
		}
	}
	if len(r.Key) == 0 {
		r.Key = []string{"rule"}
	}
	if len(r.Key) > 1 && r.Fallback == "skip" {
		r.Fallback = "shared"
	}
	l, ok := t.envoyBucket(bucket, "per-descriptor", where)
	if !ok {
		return
	}
	l.Shadow = shadow
	r.Limits = []Limit{l}
	t.same(where, "a descriptor entry without a value gives each value its own bucket (key %s), as Envoy's dynamic descriptors do; one with a value matches it.", strings.Join(r.Key, ", "))
	t.SluiceRules = append(t.SluiceRules, r)
}

// descriptorAction finds the rate_limits action of c's route (or virtual
// host) that makes a descriptor entry of key.
func descriptorAction(c envoyLocalConfig, key string) *yaml.Node {
	for _, owner := range []*yaml.Node{c.route, c.vhost} {
		if owner == nil {
			continue
		}
		rls := mapValue(owner, "rate_limits")
		if owner == c.route {
			if rt := mapValue(owner, "route"); rt != nil && mapValue(rt, "rate_limits") != nil {
				rls = mapValue(rt, "rate_limits")
			}
		}
		if rls == nil {
			continue
		}
		for _, rl := range rls.Content {
			acts := mapValue(rl, "actions")
			if acts == nil {
				continue
			}
			for _, a := range acts.Content {
				if actionKey(a) == key {
					return a
				}
			}
		}
	}
	return nil
}

// actionKey is the descriptor key an action makes.
func actionKey(a *yaml.Node) string {
	switch {
	case mapValue(a, "request_headers") != nil:
		return scalar(mapValue(mapValue(a, "request_headers"), "descriptor_key"))
	case mapValue(a, "remote_address") != nil:
		return "remote_address"
	case mapValue(a, "masked_remote_address") != nil:
		return "masked_remote_address"
	case mapValue(a, "generic_key") != nil:
		if k := scalar(mapValue(mapValue(a, "generic_key"), "descriptor_key")); k != "" {
			return k
		}
		return "generic_key"
	}
	return ""
}

// headerAttribute maps a header an action reads onto a rule key attribute,
// and says how a value of it is matched ("path", "header").
func headerAttribute(header string) (attr, match string) {
	switch strings.ToLower(header) {
	case ":path":
		return "path", "path"
	case ":authority", "host":
		return "host", ""
	}
	if !validHeaderName(header) {
		return "", ""
	}
	return "header:" + http.CanonicalHeaderKey(header), "header"
}

// domainsOf lists a virtual host's domains.
func domainsOf(vhost *yaml.Node) []string {
	var out []string
	if d := mapValue(vhost, "domains"); d != nil {
		for _, n := range d.Content {
			out = append(out, n.Value)
		}
	}
	return out
}

// dynamicOverlap reports whether descs has a descriptor with an entry
// without a value and another of the same keys with every value given:
// Envoy gives the second its own bucket, which the first then does not
// count.
func dynamicOverlap(descs *yaml.Node) bool {
	type shape struct {
		keys    string
		dynamic bool
	}
	var shapes []shape
	for _, d := range descs.Content {
		var keys []string
		dynamic := false
		if es := mapValue(d, "entries"); es != nil {
			for _, e := range es.Content {
				keys = append(keys, scalar(mapValue(e, "key")))
				dynamic = dynamic || scalar(mapValue(e, "value")) == ""
			}
		}
		shapes = append(shapes, shape{strings.Join(keys, "\x00"), dynamic})
	}
	for _, a := range shapes {
		for _, b := range shapes {
			if a.dynamic && !b.dynamic && a.keys == b.keys {
				return true
			}
		}
	}
	return false
}
