package migrate

import (
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/sluice-dev/sluice"
)

// kongFile is the part of a decK file that carries plugins.
type kongFile struct {
	// FormatVersion is decK's _format_version: "1.1" for Kong before
	// 3.0, "3.0" after (kongLegacyFormat).
	FormatVersion  string              `yaml:"_format_version"`
	Plugins        []kongPlugin        `yaml:"plugins"`
	Services       []kongService       `yaml:"services"`
	Routes         []kongRoute         `yaml:"routes"`
	Consumers      []kongConsumer      `yaml:"consumers"`
	ConsumerGroups []kongConsumerGroup `yaml:"consumer_groups"`
	// consumerServices are the rate-limiting plugins that name both a
	// consumer and a service (kongPluginOwners).
	consumerServices []kongConsumerService
	// limitsAdvanced: the imported plan's limits are a
	// rate-limiting-advanced plugin's (else a rate-limiting one's, or
	// none); advancedRules names the rules made of rate-limiting-advanced
	// plugins. A consumer's plan without a plugin of a name keeps the
	// wider plugins of that name (kongConsumers).
	limitsAdvanced bool
	advancedRules  map[string]bool
	// namedOnlyRules names the rules that apply to the plans with a
	// plugin of their name only (kongScope.namedOnly).
	namedOnlyRules map[string]bool
}

// kongService is a service, its plugins and its routes.
type kongService struct {
	Name    string       `yaml:"name"`
	ID      string       `yaml:"id"`
	Plugins []kongPlugin `yaml:"plugins"`
	Routes  []kongRoute  `yaml:"routes"`
}

// kongConsumer is a consumer, its plugins, its key-auth credentials and
// the consumer groups it is a member of.
type kongConsumer struct {
	Username    string           `yaml:"username"`
	ID          string           `yaml:"id"`
	Plugins     []kongPlugin     `yaml:"plugins"`
	Credentials []kongCredential `yaml:"keyauth_credentials"`
	Groups      []kongName       `yaml:"groups"`
}

// kongConsumerGroup is a consumer group (Kong 3.4 and later): its plugins,
// and members it names (consumers may name their groups instead).
type kongConsumerGroup struct {
	Name      string       `yaml:"name"`
	ID        string       `yaml:"id"`
	Plugins   []kongPlugin `yaml:"plugins"`
	Consumers []kongName   `yaml:"consumers"`
}

// kongName is a reference to a consumer group by name or to a consumer by
// username.
type kongName struct {
	Name     string `yaml:"name"`
	Username string `yaml:"username"`
}

// kongCredential is a key-auth credential.
type kongCredential struct {
	Key string `yaml:"key"`
}

// kongRoute is a route: what it matches, its plugins, and (at the top
// level of a decK file) its service.
type kongRoute struct {
	Name  string   `yaml:"name"`
	ID    string   `yaml:"id"`
	Paths []string `yaml:"paths"`
	Hosts []string `yaml:"hosts"`
	// SNIs are the TLS server names it matches (kongRouteSNIs).
	SNIs []string `yaml:"snis"`
	// RegexPriority orders the routes whose regular-expression paths
	// match a request: the highest first.
	RegexPriority int            `yaml:"regex_priority"`
	Methods       []string       `yaml:"methods"`
	Headers       map[string]any `yaml:"headers"`
	Plugins       []kongPlugin   `yaml:"plugins"`
	Service       kongServiceRef `yaml:"service"`
	// Expression is the route's match under Kong's expressions router
	// (router_flavor = expressions), in place of paths and methods
	// (kongExpressions).
	Expression string `yaml:"expression"`
	// segmented are the paths matched element by element (the Kong
	// Ingress Controller's Prefix paths, which it writes as a regular
	// expression of the path and the prefix of the path and a slash);
	// Kong matches every other prefix path as a string prefix.
	segmented []string
	// authenticated: an authentication plugin runs on the route (its own,
	// its service's or a global one), so Kong names its consumer.
	authenticated bool
	// at numbers the route among the file's routes (kongNumberRoutes).
	at int
}

type kongPlugin struct {
	Name    string     `yaml:"name"`
	Enabled *bool      `yaml:"enabled"`
	Config  kongConfig `yaml:"config"`
	// Service, Route, Consumer and ConsumerGroup are the entity a
	// top-level plugin of Kong's declarative configuration applies to, by
	// name or id ("" for none: a global plugin).
	Service       kongServiceRef `yaml:"service"`
	Route         kongServiceRef `yaml:"route"`
	Consumer      kongServiceRef `yaml:"consumer"`
	ConsumerGroup kongServiceRef `yaml:"consumer_group"`
}

// kongConfig is the rate-limiting plugin's configuration.
type kongConfig struct {
	Second     *float64 `yaml:"second"`
	Minute     *float64 `yaml:"minute"`
	Hour       *float64 `yaml:"hour"`
	Day        *float64 `yaml:"day"`
	Month      *float64 `yaml:"month"`
	Year       *float64 `yaml:"year"`
	LimitBy    string   `yaml:"limit_by"`
	HeaderName string   `yaml:"header_name"`
	Path       string   `yaml:"path"`
	Policy     string   `yaml:"policy"`
	// Redis is policy redis's server: redis.host and redis.port (Kong
	// 3.x) or redis_host and redis_port (earlier), and its database
	// and password.
	Redis *struct {
		Host     string `yaml:"host"`
		Port     int    `yaml:"port"`
		Database int    `yaml:"database"`
		Password string `yaml:"password"`
	} `yaml:"redis"`
	RedisHost         string   `yaml:"redis_host"`
	RedisPort         int      `yaml:"redis_port"`
	RedisDatabase     int      `yaml:"redis_database"`
	RedisPassword     string   `yaml:"redis_password"`
	FaultTolerant     *bool    `yaml:"fault_tolerant"`
	HideClientHeaders bool     `yaml:"hide_client_headers"`
	ErrorCode         *int     `yaml:"error_code"`
	SyncRate          *float64 `yaml:"sync_rate"`

	// rate-limiting-advanced's windows (limit[i] per window_size[i]
	// seconds), window type, identifier (limit_by), strategy (policy) and
	// disable_penalty. advanced marks that plugin's configuration.
	Limit          []float64 `yaml:"limit"`
	WindowSize     []float64 `yaml:"window_size"`
	WindowType     string    `yaml:"window_type"`
	Identifier     string    `yaml:"identifier"`
	Strategy       string    `yaml:"strategy"`
	DisablePenalty bool      `yaml:"disable_penalty"`
	// Namespace is rate-limiting-advanced's namespace: plugins of one
	// namespace share their counters (kongSharedNamespaces).
	Namespace string `yaml:"namespace"`
	// RetryAfterJitterMax is rate-limiting-advanced's retry_after_jitter_max
	// (seconds).
	RetryAfterJitterMax *float64 `yaml:"retry_after_jitter_max"`
	// Issuer is the openid-connect plugin's issuer: its discovery
	// document's URL, or the issuer itself.
	Issuer string `yaml:"issuer"`
	// KeyNames, KeyInHeader and KeyInQuery are the key-auth plugin's:
	// the names a consumer's key is read under (apikey when unset), in
	// headers and in the query string (both by default).
	KeyNames    []string `yaml:"key_names"`
	KeyInHeader *bool    `yaml:"key_in_header"`
	KeyInQuery  *bool    `yaml:"key_in_query"`
	// Anonymous is an authentication plugin's anonymous: the consumer
	// (username or id) Kong names a request without valid credentials.
	Anonymous string `yaml:"anonymous"`
	advanced  bool
	// replaced: a consumer's or consumer group's plugin of this plugin's
	// name runs in its place where Kong names that consumer (kongSplits).
	replaced bool
}

// kongScope is one rate-limiting plugin and where it applies.
type kongScope struct {
	where string   // "plugin on route search"
	name  string   // of the route or service, "global" for a global plugin
	paths []string // nil: every request
	// hosts and methods are those of its routes (nil: any).
	hosts, methods []string
	// groups, when set, are the alternatives of its rule (kongRoutesMatch):
	// its routes' paths, hosts and methods, of which paths, hosts and
	// methods are the union.
	groups []kongMatch
	// route: the plugin is a route's, which Kong runs on the requests the
	// router gives that route.
	route bool
	// routes number the routes it runs on (kongRoute.at); nil for a
	// global plugin's scope of every request.
	routes []int
	// unauth: the plugin's routes here are those no authentication plugin
	// runs on, where another of its routes has one (kongAuthScopes):
	// Kong names no consumer on them.
	unauth bool
	// sibling, when not "", names the plugin whose routes were split by
	// authentication into this scope and another of the same sibling:
	// each part's rule leaves out the other's routes below its own.
	sibling string
	// namedOnly: the scope (unauth) applies to the plans with a consumer's
	// or consumer group's plugin of its name only; its sibling, of every
	// route, to the others (kongAuthScopes).
	namedOnly bool
	config    kongConfig
}

// kongPeriods are the plugin's periods, their names and their sluice
// windows: a duration, or a calendar period. Kong counts each in fixed
// windows of the UTC calendar: a day, 24h from midnight UTC, is a window of
// 24h; a month (28 to 31 days) or a year (365 or 366) is a calendar period.
var kongPeriods = []struct {
	name     string
	window   time.Duration
	calendar string
	get      func(c *kongConfig) *float64
}{
	{"second", time.Second, "", func(c *kongConfig) *float64 { return c.Second }},
	{"minute", time.Minute, "", func(c *kongConfig) *float64 { return c.Minute }},
	{"hour", time.Hour, "", func(c *kongConfig) *float64 { return c.Hour }},
	{"day", 24 * time.Hour, "", func(c *kongConfig) *float64 { return c.Day }},
	{"month", 0, "month", func(c *kongConfig) *float64 { return c.Month }},
	{"year", 0, "year", func(c *kongConfig) *float64 { return c.Year }},
}

// kongOIDC makes identity.jwt of an openid-connect plugin's issuer: its
// keys found by discovery, each client the subject its token names.
func (t *Translation) kongOIDC(where, issuer string) {
	issuer = strings.TrimSuffix(issuer, "/.well-known/openid-configuration")
	if t.JWT != nil {
		if t.JWT.Issuer != issuer {
			t.differs(where, "sluice verifies the tokens of the issuers identity.jwt lists; issuer %s is not imported (add it to the list).", issuer)
		}
		return
	}
	t.JWT = &JWT{Issuer: issuer, Discover: true}
	t.same(where, "tokens of %s, their keys found by OpenID Connect discovery, as Kong's openid-connect plugin finds them: identity.jwt with discover; each client is limited as the subject (sub) its token names, where Kong limited the consumer the token mapped to.", issuer)
	t.differs(where, "Kong refuses a request without a valid token (401) before its rate limit; sluice does not authenticate: it limits such a request by its address and passes it on, for the upstream to refuse. The issuer must be the discovery document's own, with or without its final slash as the document writes it.")
}

// Kong translates the rate-limiting plugins of a decK file (global,
// service, route and consumer plugins), or of the Kong Ingress
// Controller's Kubernetes resources (KongPlugins and KongClusterPlugins
// that Ingresses, Services and KongConsumers name); source names the file.
func Kong(src, source string) (*Translation, error) {
	t := &Translation{Format: FormatKong, Source: source, Costs: map[string]int64{}}
	var f kongFile
	if isKongK8s(src) {
		k, err := t.kongFromK8s(src, source)
		if err != nil {
			return nil, err
		}
		f = *k
	} else if err := yaml.Unmarshal([]byte(src), &f); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%s: %s", source, strings.TrimPrefix(err.Error(), "yaml: "))
	}
	f.Services, f.Routes = withServiceRoutes(f.Services, f.Routes)
	t.kongLegacy = kongLegacyFormat(f.FormatVersion)
	t.kongLegacyPaths(&f)
	t.kongRouteSNIs(&f)
	t.kongPluginOwners(&f)
	t.kongExpressions(&f)
	plugins := slices.Concat(f.Plugins, servicePlugins(f.Services), routePlugins(serviceRoutes(f.Services)), routePlugins(f.Routes))
	t.kongKeyAuth(plugins)
	t.kongSharedNamespaces(slices.Concat(plugins, consumerPlugins(f.Consumers, f.ConsumerGroups)))
	t.kongUnreadAuth(plugins)
	t.kongAnonymousConsumer(plugins, f.Consumers)
	t.kongAnonymous = !slices.ContainsFunc(plugins, isKongAuth)
	t.kongConsumerPlans = kongHasConsumerPlans(f.Consumers, f.ConsumerGroups) || slices.ContainsFunc(f.consumerServices, func(c kongConsumerService) bool {
		_, ok := kongLimitPlugin([]kongPlugin{c.plugin})
		return ok
	})
	if !t.kongAnonymous && !slices.ContainsFunc(f.Plugins, isKongAuth) {
		t.kongMarkAuthenticated(f.Services, f.Routes)
	}
	routes := kongNumberRoutes(f.Services, f.Routes)
	var scopes []kongScope
	named := kongConsumerPluginNames(f.Consumers, f.ConsumerGroups)
	add := func(ps []kongPlugin, where, name string, routes []kongRoute, service bool) {
		scopes = append(scopes, t.kongPluginScopes(ps, where, name, routes, service, named)...)
	}
	var allPaths []string // of every route
	hosts := 0
	for _, r := range routes {
		allPaths, hosts = append(allPaths, routePaths(r)...), hosts+len(r.Hosts)
	}
	if n := len(allPaths) + hosts; n > MaxPlaces {
		return nil, fmt.Errorf("%s: %w", source, tooManyPlaces(n, "route paths and hosts"))
	}
	add(f.Plugins, "global plugin", "global", nil, false)
	for _, s := range f.Services {
		add(s.Plugins, "plugin on service "+s.Name, s.Name, append([]kongRoute{}, s.Routes...), true)
		for _, r := range s.Routes {
			add(r.Plugins, "plugin on route "+r.Name, r.Name, []kongRoute{r}, false)
		}
	}
	for _, r := range f.Routes {
		add(r.Plugins, "plugin on route "+r.Name, r.Name, []kongRoute{r}, false)
	}
	for i := 0; i < len(scopes); i++ {
		if s := scopes[i]; s.paths == nil && s.config.LimitBy == "service" {
			per := t.kongServiceScopes(s, f.Services, f.Routes)
			scopes = slices.Concat(scopes[:i], per, scopes[i+1:])
			i += len(per) - 1
		}
	}
	scopes = t.kongUnauthenticatedScopes(scopes, f.Services, f.Routes)
	if len(scopes) == 0 {
		return t.kongConsumersAlone(&f, source)
	}
	if len(scopes) > MaxPlaces {
		return nil, fmt.Errorf("%s: %w", source, tooManyPlaces(len(scopes), "route paths"))
	}

	// Kong keeps a count per plugin (its route and service are part of
	// the counter's key), so only one plugin can be the plan's limits:
	// two plugins, even of the same configuration, count apart, as rules.
	// A plugin with limit_by path counts one path apart: rules too.
	// A plugin of some routes whose paths Kong's router gives others in
	// part (kongRivals) is a rule too, which leaves those out. So is one
	// that counts otherwise than per consumer (limit_by ip, header,
	// service) beside consumers' plans: Kong runs it on the requests of the
	// consumers without a plugin of its name too, counting them as it
	// counts the others (by address, by header, together), where a plan's
	// limits count per API key; the rule keeps its own key and applies to
	// those plans (kongConsumers).
	main := scopes[0]
	if len(scopes) > 1 || main.unauth || main.config.LimitBy == "path" || !kongByConsumer(main.config) && t.kongConsumerPlans || main.hosts != nil || main.methods != nil || main.groups != nil || main.name != "global" && main.config.LimitBy == "service" ||
		main.paths != nil && (kongHasRivals(main, kongRivals(routes, func(at int) bool { return slices.Contains(main.routes, at) })) || kongHasTies(main, kongRivals(routes, func(int) bool { return false }))) {
		f.advancedRules, f.namedOnlyRules = map[string]bool{}, map[string]bool{}
		if err := t.kongRules(scopes, allPaths, routes, f.advancedRules, f.namedOnlyRules); err != nil {
			return nil, fmt.Errorf("%s: %w", source, err)
		}
		if err := t.kongConsumers(&f); err != nil {
			return nil, fmt.Errorf("%s: %w", source, err)
		}
		return t, nil
	}
	if err := t.kongLimits(main); err != nil {
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	f.limitsAdvanced = main.config.advanced
	if err := t.kongConsumers(&f); err != nil {
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	return t, nil
}

// kongConsumersAlone translates a file whose rate-limiting plugins are all
// consumers' or consumer groups' (or of a consumer on a service): the
// imported plan limits nothing, and those plugins are plans and rules
// (kongConsumers), the policy, error code and headers the first one's. A
// file without any is refused.
func (t *Translation) kongConsumersAlone(f *kongFile, source string) (*Translation, error) {
	var first []kongPlugin
	for _, cs := range f.consumerServices {
		first = append(first, kongLimitPlugins([]kongPlugin{cs.plugin})...)
	}
	for _, g := range f.ConsumerGroups {
		first = append(first, kongLimitPlugins(g.Plugins)...)
	}
	for _, c := range f.Consumers {
		first = append(first, kongLimitPlugins(c.Plugins)...)
	}
	if len(first) == 0 {
		return nil, fmt.Errorf("%s: no enabled rate-limiting plugin that runs on a route", source)
	}
	t.same("plugins", "no rate-limiting plugin runs on a route, a service or every request: only consumers' and consumer groups' do, so the imported plan limits nothing (its one limit only reports), and those plugins are plans and rules of their own.")
	if err := t.kongConsumers(f); err != nil {
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	t.kongSettings(first[0].Config)
	return t, nil
}

// kongNumberRoutes numbers the routes of services, then the routes
// without a service (kongRoute.at, from 0), and returns them all.
func kongNumberRoutes(services []kongService, loose []kongRoute) []kongRoute {
	n := 0
	for i := range services {
		for j := range services[i].Routes {
			services[i].Routes[j].at, n = n, n+1
		}
	}
	for j := range loose {
		loose[j].at, n = n, n+1
	}
	return slices.Concat(serviceRoutes(services), loose)
}

// kongPluginScopes returns the rate-limiting plugins of ps as scopes, and
// notes the token plugins; routes are those they apply to (nil: every
// request), service says they are a service's, whose routes with a plugin
// of the same name run that one instead; named says which names
// (kongPluginIndex) the consumers' and consumer groups' plugins are of.
func (t *Translation) kongPluginScopes(ps []kongPlugin, where, name string, routes []kongRoute, service bool, named [2]bool) []kongScope {
	var out []kongScope
	for _, p := range ps {
		switch {
		case p.Name == "openid-connect" && (p.Enabled == nil || *p.Enabled) && strings.HasPrefix(p.Config.Issuer, "https://"):
			t.kongOIDC(where, p.Config.Issuer)
		case (p.Name == "jwt" || p.Name == "openid-connect") && (p.Enabled == nil || *p.Enabled):
			t.differs(where, "Kong's %s plugin makes a verified token name the consumer; sluice reads a Bearer token as an API key unless sluice.yaml sets identity.jwt (the issuer's jwks_url, issuer, audiences; docs/operations.md): then each client is limited as the subject its token names, and a token that does not verify as its address.", p.Name)
		case p.Name != "rate-limiting" && p.Name != "rate-limiting-advanced":
		case p.Enabled != nil && !*p.Enabled:
			t.same(where, "a disabled %s plugin: not imported.", p.Name)
		default:
			c, w := p.Config, where
			if p.Name == "rate-limiting-advanced" {
				c.advanced, c.LimitBy, c.Policy, w = true, c.Identifier, c.Strategy, where+" (advanced)"
				if c.SyncRate != nil && *c.SyncRate < 0 {
					// sync_rate -1: counters in each node's memory only.
					c.Policy = "local"
				}
			}
			c.replaced = named[kongPluginIndex(c.advanced)]
			sc := kongScope{where: w, name: name, route: routes != nil && !service, config: c}
			if routes == nil {
				out = append(out, sc)
				continue
			}
			var rs []kongRoute
			var rws []string // where each route's match is reported
			for _, r := range routes {
				if service && hasOwnPlugin(r.Plugins, c.advanced) {
					t.same(w, "route %s has a %s plugin of its own, which Kong runs instead: the rule leaves the route out.", r.Name, p.Name)
					continue
				}
				rw := w
				if service {
					rw += " route " + r.Name
				}
				rs, rws = append(rs, r), append(rws, rw)
			}
			if len(rs) == 0 {
				t.same(w, "no route runs it: not imported.")
				continue
			}
			out = append(out, t.kongAuthScopes(sc, rs, rws)...)
		}
	}
	return out
}

// kongAnonymousSame says how limit_by consumer counts without an
// authentication plugin.
const kongAnonymousSame = "no authentication plugin in the file names a consumer, so Kong counted every request by its address (its fallback), and so does sluice; if one runs from elsewhere, import the file with it"

// kongKeyAuth reads where the key-auth plugins of ps read a consumer's key:
// the headers of their key_names become the API key headers
// (kongKeyHeaders); a key read from the query string, which sluice does
// not read, is reported.
func (t *Translation) kongKeyAuth(ps []kongPlugin) {
	for _, p := range ps {
		if p.Name != "key-auth" || p.Enabled != nil && !*p.Enabled {
			continue
		}
		names := p.Config.KeyNames
		if len(names) == 0 {
			names = []string{"apikey"}
		}
		if !slices.ContainsFunc(t.Differences, func(d Difference) bool { return d.Where == "key-auth" && !d.Same }) {
			t.differs("key-auth", "Kong refuses a request without a valid key (401) before its rate limit; sluice authenticates nobody: it passes such a request on, for the upstream to refuse, and limits a made-up key as a client of its own (or by its address when only the listed keys are clients, unknown_keys: ip).")
		}
		if p.Config.KeyInHeader == nil || *p.Config.KeyInHeader {
			for _, n := range names {
				if h := http.CanonicalHeaderKey(n); validHeaderName(n) && !slices.Contains(t.keyAuthHeaders, h) {
					t.keyAuthHeaders = append(t.keyAuthHeaders, h)
				}
			}
		}
		if p.Config.KeyInQuery == nil || *p.Config.KeyInQuery {
			t.differs("key-auth", "Kong also reads a consumer's key from the query parameter %s; sluice reads API keys from headers only, so a client that sends its key in the query string counts by its address: have clients send it in a header (%s).", strings.Join(names, " or "), strings.Join(names, ", "))
		}
	}
}

// kongKeyHeaders returns the headers sluice reads API keys from: those
// the file's key-auth plugins read (apikey, key-auth's default, when it has
// none), then Authorization, whose Bearer token is a key too.
func (t *Translation) kongKeyHeaders() []string {
	if len(t.keyAuthHeaders) == 0 {
		return []string{"Apikey", "Authorization"}
	}
	return append(slices.Clone(t.keyAuthHeaders), "Authorization")
}

// servicePlugins returns the plugins of services.
func servicePlugins(services []kongService) []kongPlugin {
	var out []kongPlugin
	for _, s := range services {
		out = append(out, s.Plugins...)
	}
	return out
}

// routePlugins returns the plugins of routes.
func routePlugins(routes []kongRoute) []kongPlugin {
	var out []kongPlugin
	for _, r := range routes {
		out = append(out, r.Plugins...)
	}
	return out
}

// kongLimits translates the plugin configuration that every plugin of the
// file shares into the plan's limits.
func (t *Translation) kongLimits(s kongScope) error {
	c := s.config
	global := false
	switch c.LimitBy {
	case "", "consumer", "credential":
		if t.kongAnonymous {
			t.IPv6Prefix = 128
			t.same("limit_by "+or(c.LimitBy, "consumer"), kongAnonymousSame+" (ipv6_prefix: 128 keeps one per IPv6 address).")
			break
		}
		t.APIKeyHeaders, t.IPv6Prefix = t.kongKeyHeaders(), 128
		t.same("limit_by "+or(c.LimitBy, "consumer"), "Kong counts per consumer (falling back to the whole address without one); for a consumer named by an API key or a Bearer token, sluice counts per API key (key-auth's %s header, or a Bearer token), falling back to the address (ipv6_prefix: 128: the whole IPv6 address, as Kong's fallback).", strings.Join(t.APIKeyHeaders[:len(t.APIKeyHeaders)-1], " or "))
		if c.LimitBy != "credential" {
			t.differs("limit_by consumer", "a consumer with several credentials shared one count in Kong; in sluice each key counts alone.")
		}
	case "ip":
		t.IPv6Prefix = 128
		t.same("limit_by ip", "one count per client address (ipv6_prefix: 128 keeps one per IPv6 address).")
	case "header":
		if !validHeaderName(c.HeaderName) {
			return fmt.Errorf("limit_by header: header_name %q is not a header name", c.HeaderName)
		}
		t.APIKeyHeaders, t.IPv6Prefix = []string{http.CanonicalHeaderKey(c.HeaderName)}, 128
		t.same("limit_by header", "one count per value of %s, which sluice reads as an API key (hashed); without the header both fall back to the whole address (ipv6_prefix: 128).", c.HeaderName)
	case "service":
		global = true
		if s.name != "global" {
			t.same("limit_by service", "one count for the whole service: a global limit.")
		}
	default:
		t.differs("limit_by "+c.LimitBy, "not translatable: the limits are imported per client address.")
	}
	ls, err := t.kongPeriods(s, t.limitName)
	if err != nil {
		return err
	}
	for _, l := range ls {
		l.Global = global
		t.Limits = append(t.Limits, l)
	}
	if s.paths != nil {
		t.Costs["/"] = 0
		t.kongRouteCosts(s.paths)
		t.same("routes", "the plugin limits only its routes: other paths cost 0 and the routes' path prefixes cost 1.")
	}
	t.kongSettings(c)
	return nil
}

// kongPeriods returns the fixed-window limits of the periods s's plugin
// sets, each named by name from its period ("per-minute").
func (t *Translation) kongPeriods(s kongScope, name func(string) string) ([]Limit, error) {
	c := s.config
	if c.advanced {
		return t.kongWindows(s, name)
	}
	var out []Limit
	for _, p := range kongPeriods {
		v := p.get(&c)
		if v == nil {
			continue
		}
		// Kong takes any number above 0 and admits a request while the
		// period's count is below it: the limit rounded up.
		if *v <= 0 || *v > sluice.MaxQuantity {
			return nil, fmt.Errorf("%s %s must be a number above 0, at most %d", s.where, p.name, sluice.MaxQuantity)
		}
		q, written := int64(math.Ceil(*v)), strconv.FormatFloat(*v, 'f', -1, 64)
		if float64(q) != *v {
			t.same(s.where+" "+p.name, "%s: Kong admits a request while the %s's count is below %s, so %d a %s, as a fixed window of %d.", written, p.name, written, q, p.name, q)
		}
		out = append(out, Limit{Name: name("per-" + p.name), Algorithm: "fixed-window", Quantity: q,
			Window: p.window, Period: p.calendar, Source: fmt.Sprintf("%s: %s %s", s.where, p.name, written)})
		if p.calendar != "" && !slices.ContainsFunc(t.Differences, func(d Difference) bool { return d.Where == p.name }) {
			t.same(p.name, "Kong counts calendar %ss of UTC, from %s at midnight UTC: sluice's window: %s, the same calendar %ss, whatever their length.",
				p.name, map[string]string{"month": "the first of the month", "year": "January 1"}[p.name], p.calendar, p.name)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s sets no period (second, minute, hour, day, month or year)", s.where)
	}
	return out, nil
}

// kongWindows returns the limits of rate-limiting-advanced's windows:
// limit[i] per window_size[i] seconds, sliding (weighted previous window)
// or fixed.
func (t *Translation) kongWindows(s kongScope, name func(string) string) ([]Limit, error) {
	c := s.config
	if len(c.Limit) == 0 || len(c.Limit) != len(c.WindowSize) {
		return nil, fmt.Errorf("%s: limit and window_size must list as many numbers, at least one", s.where)
	}
	alg := "sliding-window-counter"
	switch c.WindowType {
	case "", "sliding":
	case "fixed":
		alg = "fixed-window"
	default:
		return nil, fmt.Errorf("%s: window_type %q: want sliding or fixed", s.where, c.WindowType)
	}
	var out []Limit
	for i, q := range c.Limit {
		w := c.WindowSize[i]
		if q < 1 || q > sluice.MaxQuantity || q != float64(int64(q)) {
			return nil, fmt.Errorf("%s: limit %g must be a whole number ≥ 1", s.where, q)
		}
		if w < 1 || w != float64(int64(w)) || time.Duration(w)*time.Second > sluice.MaxFixedWindow {
			return nil, fmt.Errorf("%s: window_size %g must be a whole number of seconds ≥ 1", s.where, w)
		}
		window := time.Duration(w) * time.Second
		n := name(defaultLimitName(window))
		for k := 2; slices.ContainsFunc(out, func(l Limit) bool { return l.Name == n }); k++ {
			n = name(fmt.Sprintf("%s-%d", defaultLimitName(window), k)) // two limits of one window
		}
		l := Limit{Name: n, Algorithm: alg, Quantity: int64(q), Window: window,
			Source: fmt.Sprintf("%s: limit %d, window_size %d (%s)", s.where, int64(q), int64(w), or(c.WindowType, "sliding"))}
		t.kongUnixAligned(&l, s.where)
		out = append(out, l)
	}
	if alg == "sliding-window-counter" {
		t.same(s.where+" windows", "rate-limiting-advanced's sliding window adds the previous window's count weighted by the share of it still inside the last window to the current one: sluice's sliding-window-counter, which estimates the same way, rounding down.")
		if !c.DisablePenalty {
			t.differs(s.where+" disable_penalty", "with disable_penalty false (its default) Kong counts refused requests too, so a client that keeps sending stays refused; sluice counts only admitted requests (set disable_penalty: true in Kong to compare, or put a penalty box on the rule).")
		}
	} else {
		t.same(s.where+" windows", "fixed windows aligned to the clock: sluice's fixed-window (where a window_size starts Kong's windows otherwise than sluice's, it is said apart).")
	}
	return out, nil
}

// kongUnixAligned makes rate-limiting-advanced's window l start where
// Kong's does, or reports at where that it cannot. Kong's windows start
// where the Unix time is a multiple of the window; sluice's fixed and
// sliding windows where the time since sluice.Epoch (2020-01-01, Unix time
// 1577836800) is one: the same boundaries when the window divides that, a
// week's fixed window is sluice's calendar week from Thursday (1970-01-01
// was one), and any other window's boundaries fall later than Kong's by
// the remainder.
func (t *Translation) kongUnixAligned(l *Limit, where string) {
	w := int64(l.Window / time.Second)
	off := kongSluiceEpoch % w
	switch {
	case off == 0:
	case l.Algorithm == "fixed-window" && l.Window == 7*24*time.Hour:
		l.Window, l.Period, l.Starts = 0, "week", "thursday"
		t.same(where+" window_size "+strconv.FormatInt(w, 10), "Kong's windows start where the Unix time is a multiple of the window: a week's on Thursday at 00:00 UTC; sluice's calendar week from Thursday (window: week, starts: thursday) starts there too.")
	default:
		t.differs(where+" window_size "+strconv.FormatInt(w, 10), "Kong's windows start where the Unix time is a multiple of %ds; sluice's start where the time since 2020-01-01 00:00 UTC is one, %v later than Kong's boundaries: a count resets at another moment than in Kong, so a client's share of two windows differs by up to a window's limit around the boundary. Choose a window_size that divides 1577836800 s (any number of days dividing 18262, or of hours dividing 24), or accept the offset.", w, time.Duration(off)*time.Second)
	}
}

// kongSluiceEpoch is sluice.Epoch in Unix seconds: where sluice's windows
// start.
const kongSluiceEpoch = 1577836800

// kongRouteCosts gives the route paths a cost of 1 (each as the prefix
// Kong matches, or the path alone for a regular expression of it); another
// regular expression, and a path with "*", are reported.
func (t *Translation) kongRouteCosts(paths []string) {
	for _, p := range paths {
		pats := kongPathPatterns(p)
		switch {
		case len(pats) == 0 && (!strings.HasPrefix(p, "/") || strings.HasPrefix(p, "~")):
			t.differs("route path "+p, "a regular-expression path cannot be a ServeMux pattern: not limited.")
			continue
		case len(pats) == 0 && strings.Contains(p, "*"):
			t.differs("route path "+p, "Kong matches the path's * as itself; a path with * cannot be a sluice pattern (sluice refuses it as a glob ServeMux would not read): not limited.")
			continue
		}
		for _, pat := range pats {
			t.Costs[pat] = 1
		}
	}
}

// kongRedis takes policy redis's server for the store: its host and port
// (6379 when unset) and database; its password is left to set.
func (t *Translation) kongRedis(c kongConfig) {
	host, port, db, password := c.RedisHost, c.RedisPort, c.RedisDatabase, c.RedisPassword
	if r := c.Redis; r != nil && r.Host != "" {
		host, port, db, password = r.Host, r.Port, r.Database, r.Password
	}
	if host == "" {
		return
	}
	if port <= 0 || port > 65535 {
		port = 6379
	}
	t.RedisAddress, t.RedisDB = net.JoinHostPort(host, strconv.Itoa(port)), max(db, 0)
	if password != "" {
		t.differs("policy redis password", "the plugin's Redis password is not copied into sluice.yaml: set store.redis.password_file (or password) to it.")
	}
}

// kongSettings compares the plugin's policy, error code and headers.
func (t *Translation) kongSettings(c kongConfig) {
	if !c.advanced {
		t.same("windows", "Kong's rate-limiting counts fixed windows aligned to the clock (UTC) and refuses without counting a refused request; sluice's fixed-window does the same, and checks all periods together.")
	}
	if c.advanced && c.SyncRate != nil && *c.SyncRate < 0 && c.Strategy != "" && c.Strategy != "local" {
		t.differs("sync_rate -1", "Kong kept the counters of strategy %s in each node's memory and never synchronised them, as strategy local does: the import reads it as local.", c.Strategy)
	}
	switch c.Policy {
	case "":
		if t.kongLegacy {
			t.kongLegacyDefaultPolicy(c)
			break
		}
		fallthrough
	case "local":
		t.differs("policy local", "Kong counted on each node separately, so N nodes admitted up to N times the limit; sluice's memory store on one instance is one node's count. With several sluice instances use the Redis store for one shared, exact count (the limit as written), or divide the quantities.")
	case "cluster", "redis":
		t.Instances, t.OnStoreError = 2, "allow"
		if c.FaultTolerant != nil && !*c.FaultTolerant {
			t.OnStoreError = "deny"
		}
		t.same("policy "+c.Policy, "one count shared by all nodes: sluice's Redis store (set instances to your number of sluice instances); fault_tolerant maps to on_store_error: %s.", t.OnStoreError)
		if c.Policy == "redis" {
			t.kongRedis(c)
		}
	}
	if c.SyncRate != nil && *c.SyncRate > 0 {
		t.differs("sync_rate", "Kong synchronised counters every %gs, admitting more than the limit in between; sluice decides on the shared count at every request.", *c.SyncRate)
	}
	if c.ErrorCode != nil && *c.ErrorCode != 429 {
		t.differs("error_code", "Kong refused with %d; sluice refuses with 429, Retry-After and a problem+json body.", *c.ErrorCode)
	}
	if c.RetryAfterJitterMax != nil && *c.RetryAfterJitterMax > 0 {
		t.RetryJitter = min(time.Duration(*c.RetryAfterJitterMax*float64(time.Second)).Round(time.Second), time.Hour)
		t.differs("retry_after_jitter_max", "Kong added a random 0 to %gs to each Retry-After; sluice's response.retry_jitter: %v adds whole seconds from a hash of the client and the moment (one client is told the same twice), to Retry-After and the RateLimit t alike, and at most a tenth of the refusing limit's window (none on a per-second limit).", *c.RetryAfterJitterMax, t.RetryJitter)
	}
	if c.HideClientHeaders {
		t.Headers, t.HideHeaders = []string{"ietf"}, true
		t.same("hide_client_headers", "Kong hid its rate-limit headers; sluice's response.hide leaves every limit out of the RateLimit headers (ietf mode alone: the single-limit modes always name the deciding limit), and still sends Retry-After and the problem body on a refusal.")
	} else {
		t.Headers = []string{"draft-6", "ietf"}
		t.differs("headers", "Kong sent X-RateLimit-Limit-<Period> and X-RateLimit-Remaining-<Period> per period, and RateLimit-Limit/Remaining/Reset; sluice sends RateLimit-Limit/Remaining/Reset (draft-6) for the limit closest to refusing, and the IETF RateLimit and RateLimit-Policy for every limit, but no per-period X- headers.")
	}
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
