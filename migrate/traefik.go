package migrate

import (
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/sluice-dev/sluice"
)

// traefikSourceCriterion is a middleware's sourceCriterion: what makes
// requests one source, whose requests it counts together.
type traefikSourceCriterion struct {
	IPStrategy *struct {
		Depth       int      `yaml:"depth"`
		ExcludedIPs []string `yaml:"excludedIPs"`
		// IPv6Subnet (Traefik 3.1) makes an IPv6 address's subnet of
		// this length the source.
		IPv6Subnet *int `yaml:"ipv6Subnet"`
	} `yaml:"ipStrategy"`
	RequestHeaderName string `yaml:"requestHeaderName"`
	RequestHost       bool   `yaml:"requestHost"`
}

// traefikRateLimit is the rateLimit middleware's configuration; its
// source is the client address unless SourceCriterion says otherwise.
type traefikRateLimit struct {
	Average         int64                   `yaml:"average"`
	Period          yaml.Node               `yaml:"period"`
	Burst           *int64                  `yaml:"burst"`
	SourceCriterion *traefikSourceCriterion `yaml:"sourceCriterion"`
	// Redis (Traefik 3.4) keeps the buckets in Redis, one set for every
	// router naming the middleware.
	Redis *traefikRedis `yaml:"redis"`
}

// traefikRedis is a rateLimit middleware's Redis: its endpoints
// (host:port), database and password.
type traefikRedis struct {
	Endpoints []string `yaml:"endpoints"`
	DB        int      `yaml:"db"`
	Password  string   `yaml:"password"`
}

// traefikStore takes r, a middleware's Redis, for the store: its endpoint
// when it names one (several, of a cluster or sentinels, are left to set)
// and database; its password is left to set, reported.
func (t *Translation) traefikStore(name string, r *traefikRedis) {
	if len(r.Endpoints) == 1 && t.RedisAddress == "" {
		t.RedisAddress, t.RedisDB = r.Endpoints[0], max(r.DB, 0)
	}
	if r.Password != "" {
		t.differs("middleware "+name+" redis password", "the middleware's Redis password is not copied into sluice.yaml: set store.redis.password_file (or password) to it.")
	}
}

// traefikIngressMiddlewares is the annotation by which an Ingress names
// the middlewares of the router Traefik makes of it.
const traefikIngressMiddlewares = "traefik.ingress.kubernetes.io/router.middlewares"

// traefikSpec is a middleware's configuration, of the kinds the import
// reads.
type traefikSpec struct {
	RateLimit   *traefikRateLimit   `yaml:"rateLimit"`
	InFlightReq *traefikInFlightReq `yaml:"inFlightReq"`
	Chain       *struct {
		Middlewares []traefikMiddlewareRef `yaml:"middlewares"`
	} `yaml:"chain"`
}

// traefikDoc is a file-provider configuration, or a Kubernetes Middleware
// or IngressRoute.
type traefikDoc struct {
	HTTP struct {
		Middlewares map[string]traefikSpec `yaml:"middlewares"`
		Routers     map[string]struct {
			Rule        string                 `yaml:"rule"`
			Middlewares []traefikMiddlewareRef `yaml:"middlewares"`
			Priority    int                    `yaml:"priority"`
			EntryPoints []string               `yaml:"entryPoints"`
		} `yaml:"routers"`
	} `yaml:"http"`
	Kind     string `yaml:"kind"`
	Metadata struct {
		Name        string            `yaml:"name"`
		Namespace   string            `yaml:"namespace"`
		Annotations map[string]string `yaml:"annotations"`
	} `yaml:"metadata"`
	Spec struct {
		traefikSpec `yaml:",inline"`
		EntryPoints []string `yaml:"entryPoints"`
		Routes      []struct {
			Match       string                 `yaml:"match"`
			Priority    int                    `yaml:"priority"`
			Middlewares []traefikMiddlewareRef `yaml:"middlewares"`
		} `yaml:"routes"`
	} `yaml:"spec"`
}

// traefikTOMLSign is a TOML table header of Traefik's dynamic
// configuration ([http.middlewares], [[http.services.s.loadBalancer.servers]])
// or a key of its top tables given a value (http.middlewares.rl.rateLimit =
// { average = 3 }), neither of which a YAML file of it holds.
var traefikTOMLSign = regexp.MustCompile(`(?m)^\s*\[\[?(http|tcp|udp|tls)(\.\S+)?\]\]?\s*(#.*)?$|^\s*(http|tcp|udp|tls)(\.[^\s=]+)?\s*=`)

// traefikTOML reports whether src, the file source, is TOML: by its name
// (*.toml) or by what it holds.
func traefikTOML(src, source string) bool {
	return strings.HasSuffix(strings.ToLower(source), ".toml") || traefikTOMLSign.MatchString(src)
}

// traefikMiddleware is a limiting middleware: a rateLimit (rl) or an
// inFlightReq (inFlight). key tells it from every other middleware of the
// file (see traefikRead); name is how the report names it.
type traefikMiddleware struct {
	key, name string
	rl        *traefikRateLimit
	inFlight  *traefikInFlightReq
}

// source returns the sourceCriterion Traefik keys m by (nil: the client
// address).
func (m *traefikMiddleware) source() *traefikSourceCriterion {
	if m.inFlight != nil {
		return m.inFlight.source()
	}
	return m.rl.SourceCriterion
}

// Traefik translates Traefik's rateLimit and inFlightReq middlewares: a
// file-provider configuration (http.middlewares), in TOML or in YAML, or
// Kubernetes Middleware resources, in one or several YAML documents; source
// names the file. A file whose name ends in .toml, or that holds a TOML
// table header or key of Traefik's (see traefikTOMLSign), is read as TOML
// and translated as the YAML of the same tables is.
func Traefik(src, source string) (*Translation, error) {
	each := eachDocument[traefikDoc]
	if traefikTOML(src, source) {
		each = tomlDocument[traefikDoc]
	}
	t := &Translation{Format: FormatTraefik, Source: source}
	x := &traefikRead{chains: map[string][]traefikRef{}, defined: map[string]bool{}, crdNames: map[string][]string{}, crdFull: map[string]string{}}
	if err := each(src, source, func(d *traefikDoc) error { return x.doc(t, d) }); err != nil {
		return nil, err
	}
	if len(x.all) == 0 {
		return nil, fmt.Errorf("%s: no rateLimit or inFlightReq middleware", source)
	}
	x.resolveRouters()
	x.names()
	all, routers := x.all, x.routers
	if n := max(len(routers), len(all)); n > MaxPlaces {
		return nil, fmt.Errorf("%s: %w", source, tooManyPlaces(n, "routers"))
	}
	rules := len(routers) > 0
	for _, f := range all {
		if err := traefikCheckSource(f.source()); err != nil {
			return nil, fmt.Errorf("%s: middleware %s: %w", source, f.name, err)
		}
		if sc := f.source(); f.inFlight != nil || sc != nil && (sc.RequestHeaderName != "" || sc.RequestHost) {
			rules = true
		}
	}
	if rules {
		if err := t.traefikRules(all, routers); err != nil {
			return nil, fmt.Errorf("%s: %w", source, err)
		}
	} else if err := t.traefikPlanLimits(all); err != nil {
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	if len(routers) == 0 {
		t.differs("middlewares", "Traefik applies each middleware to the routers that name it; the file has no routers, so sluice applies every imported limit to every request. Import the routers with the middlewares to limit each where it applies.")
		t.traefikInTurn("middlewares", all)
	}
	t.differs("headers", "Traefik sends no rate-limit headers and refuses with a bare 429; sluice adds RateLimit headers, Retry-After and a problem+json body.")
	return t, nil
}

// traefikCheckSource refuses a sourceCriterion Traefik refuses: ipStrategy
// with requestHeaderName (mutually exclusive in Traefik 3 and late 2.x
// releases), and a requestHeaderName that is not a header name.
func traefikCheckSource(sc *traefikSourceCriterion) error {
	switch {
	case sc == nil:
	case sc.IPStrategy != nil && sc.RequestHeaderName != "":
		return fmt.Errorf("sourceCriterion: ipStrategy and requestHeaderName are mutually exclusive (Traefik refuses the middleware): keep the one it should count by")
	case sc.RequestHeaderName != "" && !validHeaderName(sc.RequestHeaderName):
		return fmt.Errorf("requestHeaderName %q is not a header name", sc.RequestHeaderName)
	}
	return nil
}

// traefikPlanLimits makes each rateLimit of all, a file without routers
// whose middlewares all count by address, a limit of the plan.
func (t *Translation) traefikPlanLimits(all []traefikMiddleware) error {
	for _, f := range all {
		l, err := t.traefikLimit(f.name, f.rl, t.limitName(f.name))
		if err != nil {
			return fmt.Errorf("middleware %s: %w", f.name, err)
		}
		if l != nil {
			t.traefikSource(f.name, f.rl.SourceCriterion, nil)
			t.Limits = append(t.Limits, *l)
		}
		if f.rl.Redis != nil {
			t.Instances, t.OnStoreError = 2, "local"
			t.traefikStore(f.name, f.rl.Redis)
			t.same("middleware "+f.name+" redis", "Traefik's Redis storage shares the buckets between Traefik instances: sluice's Redis store (set store.redis.addresses to your Redis and instances to your number of sluice instances).")
		}
	}
	return nil
}

// traefikPeriod reads period: a Go duration ("1m") or seconds (60); 1s when
// absent or 0, as Traefik takes it.
func traefikPeriod(n yaml.Node) (time.Duration, error) {
	if n.Kind == 0 {
		return time.Second, nil
	}
	if n.Kind != yaml.ScalarNode {
		return 0, fmt.Errorf("period: want a duration")
	}
	if s, err := strconv.ParseInt(n.Value, 10, 64); err == nil {
		if s == 0 {
			return time.Second, nil
		}
		if s < 1 || s > 1e7 {
			return 0, fmt.Errorf("period %q is out of range", n.Value)
		}
		return time.Duration(s) * time.Second, nil
	}
	d, err := time.ParseDuration(n.Value)
	if err == nil && d == 0 {
		return time.Second, nil
	}
	if err != nil || d < time.Microsecond || d%time.Microsecond != 0 || d > sluice.MaxWindow {
		return 0, fmt.Errorf("period %q: want a duration such as 1s or 1m", n.Value)
	}
	return d, nil
}

// traefikLimit returns the limit, called name, of one middleware; nil
// for a middleware that does not limit.
func (t *Translation) traefikLimit(name string, rl *traefikRateLimit, limitName string) (*Limit, error) {
	where := "middleware " + name
	period, err := traefikPeriod(rl.Period)
	if err != nil {
		return nil, err
	}
	if rl.Average <= 0 {
		t.same(where, "average 0: Traefik does not limit; not imported.")
		return nil, nil
	}
	if rl.Average > sluice.MaxQuantity {
		return nil, fmt.Errorf("average %d is out of range", rl.Average)
	}
	// Traefik takes a burst below 1 (or none) as 1.
	burst := int64(1)
	if rl.Burst != nil {
		burst = max(*rl.Burst, 1)
	}
	if burst > sluice.MaxQuantity {
		return nil, fmt.Errorf("burst %d is above sluice's %d", burst, sluice.MaxQuantity)
	}
	// Traefik holds a request whose token comes within maxDelay: half the
	// interval between tokens (rates of at least one per second), else 500ms.
	perSecond := float64(rl.Average) * float64(time.Second) / float64(period)
	maxDelay := 500 * time.Millisecond
	if perSecond >= 1 {
		maxDelay = time.Second / (time.Duration(perSecond) * 2)
	}
	maxDelay = max(maxDelay.Truncate(time.Microsecond), time.Microsecond)
	// Traefik forgets a source's bucket after ttl without a request from
	// it (2s at one or more a second, 1+⌊1/rate⌋ seconds below): the
	// in-memory limiter drops its entry, the Redis one lets its key
	// expire (EXPIRE key ttl); the next request finds a new, full bucket.
	ttl := 2 * time.Second
	if perSecond < 1 {
		ttl = time.Duration(1+int64(1/perSecond)) * time.Second
	}
	if refill := perSecond * ttl.Seconds(); float64(burst) > refill {
		forgets := "Traefik forgets a client's bucket"
		if rl.Redis != nil {
			forgets = "Traefik's Redis key of a client's bucket expires"
		}
		t.differs(where+" idle buckets", "%s after %s without a request from it, and its next request finds a new bucket holding the whole burst of %d; sluice's bucket refills at %d per %s, %.4g in %s: a client that pauses %s and sends a burst gets more admitted by Traefik.",
			forgets, ttl, burst, rl.Average, period, refill, ttl, ttl)
	}
	l := Limit{Name: limitName, Algorithm: "leaky-bucket", Quantity: rl.Average, Window: period, Burst: burst, MaxWait: maxDelay,
		Source: fmt.Sprintf("%s: average %d per %s, burst %d", where, rl.Average, period, burst)}
	t.same(where, "Traefik's token bucket of %d refilled at %d per %s (golang.org/x/time/rate) holds a request whose token comes within %s and refuses the rest; sluice's leaky-bucket queue of burst %d with max_wait %s admits the same requests after the same waits.",
		burst, rl.Average, period, maxDelay, burst, maxDelay)
	return &l, nil
}

// traefikSource maps a middleware's sourceCriterion sc (nil: the client
// address) onto the key of r, its rule, or, when r is nil, onto sluice's
// identity for a plan's limit (only by address: header and host sources
// are always rules).
func (t *Translation) traefikSource(name string, sc *traefikSourceCriterion, r *Rule) {
	where := "middleware " + name + " source"
	switch {
	case sc == nil || (sc.RequestHeaderName == "" && !sc.RequestHost):
		v6, whole := 128, "IPv6 addresses whole"
		if sc != nil && sc.IPStrategy != nil && sc.IPStrategy.IPv6Subnet != nil && *sc.IPStrategy.IPv6Subnet >= 1 && *sc.IPStrategy.IPv6Subnet <= 128 {
			v6 = *sc.IPStrategy.IPv6Subnet
			whole = fmt.Sprintf("an IPv6 address's /%d as one, as ipv6Subnet says", v6)
		}
		switch {
		case r != nil:
			r.Key = []string{fmt.Sprintf("ip/32/%d", v6)}
			t.same(where, "one bucket per client address (key %s: %s).", r.Key[0], whole)
		case t.IPv6Prefix != 0 && t.IPv6Prefix != v6:
			t.differs(where, "its IPv6 sources are /%d, another middleware's /%d; sluice's identity groups every plan limit's IPv6 clients alike (ipv6_prefix: %d).", v6, t.IPv6Prefix, t.IPv6Prefix)
		default:
			t.IPv6Prefix = v6
			t.same(where, "one bucket per client address (ipv6_prefix: %d: %s).", v6, whole)
		}
		if sc != nil && sc.IPStrategy != nil && sc.IPStrategy.Depth > 0 {
			t.differs("middleware "+name+" ipStrategy", "depth %d takes the address %d hops from the right of X-Forwarded-For; sluice takes the rightmost address not in identity.trusted_proxies: list your proxies there.", sc.IPStrategy.Depth, sc.IPStrategy.Depth)
		}
		if sc != nil && sc.IPStrategy != nil && len(sc.IPStrategy.ExcludedIPs) > 0 {
			t.differs("middleware "+name+" ipStrategy", "excludedIPs skips addresses in X-Forwarded-For; in sluice they belong in identity.trusted_proxies.")
		}
	case sc.RequestHeaderName != "":
		h := http.CanonicalHeaderKey(sc.RequestHeaderName)
		r.Key, r.HeaderFrom, r.Fallback = []string{"header:" + h}, "any", "shared"
		t.same(where, "one bucket per value of %s, whoever sends it (header_from: any), and one bucket for every request without it (fallback: shared), as Traefik keeps them.", h)
	default:
		r.Key = []string{"host"}
		t.differs(where, "requestHost: Traefik keys by the Host header as the client wrote it, port and case included, so Example.com, example.com and example.com:443 were three buckets there, each holding the whole burst; sluice's key host is the host name in lower case without its port or final dot, so they are one bucket here, the limit as written. The difference is deliberate: Traefik's routers match every such spelling as one host and send it to the same service, so its buckets let a client multiply its limit by respelling the Host, which a limit per host does not mean. sluice has no key of the Host as written.")
	}
}
