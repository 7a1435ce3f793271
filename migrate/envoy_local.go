package migrate

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/sluice-dev/sluice"
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
	var shared, apart []string // where the configurations with rules are, with and without local_cluster_rate_limit
	for _, c := range found {
		n := len(t.SluiceRules)
		t.envoyLocalRules(c, found)
		switch {
		case len(t.SluiceRules) == n:
		case mapValue(c.cfg, "local_cluster_rate_limit") != nil:
			shared = append(shared, c.where())
		default:
			apart = append(apart, c.where())
		}
	}
	if len(t.SluiceRules) == 0 {
		var why []string
		for _, d := range t.Differences {
			if !d.Same && strings.Contains(d.Text, "not imported") && len(why) < 3 {
				why = append(why, d.Where+": "+d.Text)
			}
		}
		if len(why) > 0 {
			return nil, fmt.Errorf("%s: no local rate limit sluice can import: %s", source, strings.Join(why, "; "))
		}
		return nil, fmt.Errorf("%s: no local rate limit sluice can import: a LocalRateLimit with a token_bucket, enabled by filter_enabled", source)
	}
	t.envoyInstances(shared, apart)
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

// where names the configuration in the report: its stat_prefix, its route
// or virtual host, and its line.
func (c envoyLocalConfig) where() string {
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
	return fmt.Sprintf("%s (line %d)", where, c.cfg.Line)
}

// envoyInstances says how the imported buckets count across Envoy
// instances, and chooses the store: shared names the configurations with
// rules that set local_cluster_rate_limit, apart those that do not. Envoy
// gives each member of the local cluster a share of a bucket of the
// first (1/N of its tokens, Envoy 1.31 and later), so the cluster admits
// the limit once: sluice's Redis store, one count for every sluice
// instance (on_store_error: local divides it among them while Redis is
// down, as Envoy always does). A bucket of the others is each Envoy
// process's own: N instances admit N times it.
func (t *Translation) envoyInstances(shared, apart []string) {
	if len(shared) == 0 {
		t.differs("instances", "each Envoy process keeps its own buckets, so N Envoy instances admit N times a limit. One sluice beside each Envoy on its memory store keeps that; on the Redis store a limit is shared by the fleet: multiply its quantity and burst by N for the same total.")
		return
	}
	t.Instances, t.OnStoreError = 2, "local"
	t.differs("instances", "local_cluster_rate_limit (%s) divides each bucket among the N Envoys of the local cluster, each refilling and holding 1/N of its tokens, so the cluster admits the limit once: the import writes sluice's Redis store, one count shared by every sluice instance, the limit as written (set store.redis.addresses to your Redis and instances to your number of sluice instances; on_store_error: local divides the limits among them while Redis is down, as Envoy does). An Envoy sent more than its share of the requests refused them at 1/N of the limit, where sluice admits them while the whole count allows.",
		fewOf(shared, "; "))
	if len(apart) > 0 {
		t.differs("instances", "the configurations without local_cluster_rate_limit (%s) kept each Envoy process's own buckets, so N Envoy instances admitted N times their limits; on the Redis store their rules count once for the fleet: multiply their quantity and burst by N for the same total.", fewOf(apart, "; "))
	}
}

// envoyLocalRules makes the rules of one configuration: its default token
// bucket and its descriptors' buckets. all are every configuration found,
// for the routes that replace a wider one's.
func (t *Translation) envoyLocalRules(c envoyLocalConfig, all []envoyLocalConfig) {
	where := c.where()
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
		limit, sharers := "per-process", "the process's workers and clients"
		if mapValue(c.cfg, "local_cluster_rate_limit") != nil {
			limit, sharers = "per-cluster", "the local cluster's Envoys (local_cluster_rate_limit) and their clients"
		}
		l, ok := t.envoyBucket(bucket, limit, where)
		if ok {
			l.Shadow = shadow
			r := base
			r.Name, r.Key, r.Limits = t.ruleName(name), []string{"rule"}, []Limit{l}
			t.SluiceRules = append(t.SluiceRules, r)
			t.same(where+" bucket", "one token bucket for every request it applies to, as Envoy's is shared by %s (key rule).", sharers)
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
