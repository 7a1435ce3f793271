package migrate

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/sluice-dev/sluice"
)

// traefikRateLimit is the rateLimit middleware's configuration.
type traefikRateLimit struct {
	Average         int64     `yaml:"average"`
	Period          yaml.Node `yaml:"period"`
	Burst           *int64    `yaml:"burst"`
	SourceCriterion *struct {
		IPStrategy *struct {
			Depth       int      `yaml:"depth"`
			ExcludedIPs []string `yaml:"excludedIPs"`
		} `yaml:"ipStrategy"`
		RequestHeaderName string `yaml:"requestHeaderName"`
		RequestHost       bool   `yaml:"requestHost"`
	} `yaml:"sourceCriterion"`
}

// traefikDoc is a file-provider configuration, or a Kubernetes Middleware
// or IngressRoute.
type traefikDoc struct {
	HTTP struct {
		Middlewares map[string]struct {
			RateLimit *traefikRateLimit `yaml:"rateLimit"`
		} `yaml:"middlewares"`
		Routers map[string]struct {
			Rule        string   `yaml:"rule"`
			Middlewares []string `yaml:"middlewares"`
		} `yaml:"routers"`
	} `yaml:"http"`
	Kind     string `yaml:"kind"`
	Metadata struct {
		Name string `yaml:"name"`
	} `yaml:"metadata"`
	Spec struct {
		RateLimit *traefikRateLimit `yaml:"rateLimit"`
		Routes    []struct {
			Match       string `yaml:"match"`
			Middlewares []struct {
				Name string `yaml:"name"`
			} `yaml:"middlewares"`
		} `yaml:"routes"`
	} `yaml:"spec"`
}

// traefikMiddleware is a rateLimit middleware and its name.
type traefikMiddleware struct {
	name string
	rl   *traefikRateLimit
}

// traefikRouter is a router (or an IngressRoute's route) and the
// middlewares it names, without their provider suffix ("@file").
type traefikRouter struct {
	name, rule  string
	middlewares []string
}

// Traefik translates Traefik's rateLimit middlewares: a file-provider
// configuration (http.middlewares) or Kubernetes Middleware resources, in
// one or several YAML documents; source names the file.
func Traefik(src, source string) (*Translation, error) {
	t := &Translation{Format: FormatTraefik, Source: source}
	var (
		all     []traefikMiddleware
		routers []traefikRouter
	)
	dec := yaml.NewDecoder(strings.NewReader(src))
	for {
		var d traefikDoc
		err := dec.Decode(&d)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %s", source, strings.TrimPrefix(err.Error(), "yaml: "))
		}
		for _, name := range slices.Sorted(maps.Keys(d.HTTP.Middlewares)) {
			if rl := d.HTTP.Middlewares[name].RateLimit; rl != nil {
				all = append(all, traefikMiddleware{name, rl})
			}
		}
		for _, name := range slices.Sorted(maps.Keys(d.HTTP.Routers)) {
			r := d.HTTP.Routers[name]
			routers = append(routers, traefikRouter{name: name, rule: r.Rule, middlewares: unqualified(r.Middlewares)})
		}
		switch d.Kind {
		case "Middleware":
			if d.Spec.RateLimit != nil {
				all = append(all, traefikMiddleware{d.Metadata.Name, d.Spec.RateLimit})
			}
		case "IngressRoute":
			for i, rt := range d.Spec.Routes {
				var names []string
				for _, m := range rt.Middlewares {
					names = append(names, m.Name)
				}
				name := d.Metadata.Name
				if len(d.Spec.Routes) > 1 {
					name = fmt.Sprintf("%s-%d", name, i+1)
				}
				routers = append(routers, traefikRouter{name: name, rule: rt.Match, middlewares: unqualified(names)})
			}
		}
	}
	if len(all) == 0 {
		return nil, fmt.Errorf("%s: no rateLimit middleware", source)
	}
	rules := len(routers) > 0
	for _, f := range all {
		if sc := f.rl.SourceCriterion; sc != nil && (sc.RequestHeaderName != "" || sc.RequestHost) {
			rules = true
			if sc.RequestHeaderName != "" && !validHeaderName(sc.RequestHeaderName) {
				return nil, fmt.Errorf("%s: middleware %s: requestHeaderName %q is not a header name", source, f.name, sc.RequestHeaderName)
			}
		}
	}
	if rules {
		if err := t.traefikRules(all, routers); err != nil {
			return nil, fmt.Errorf("%s: %w", source, err)
		}
	} else {
		for _, f := range all {
			l, err := t.traefikLimit(f.name, f.rl, t.limitName(f.name))
			if err != nil {
				return nil, fmt.Errorf("%s: middleware %s: %w", source, f.name, err)
			}
			if l != nil {
				t.traefikSource(f.name, f.rl, nil)
				t.Limits = append(t.Limits, *l)
			}
		}
	}
	if len(all) > 1 && len(routers) == 0 {
		t.differs("middlewares", "Traefik applies each middleware to the routers that name it; the file has no routers, so sluice applies every imported limit to every request. Import the routers with the middlewares to limit each where it applies.")
	}
	t.differs("headers", "Traefik sends no rate-limit headers and refuses with a bare 429; sluice adds RateLimit headers, Retry-After and a problem+json body.")
	return t, nil
}

// unqualified returns names without their provider suffix ("api@file").
func unqualified(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i], _, _ = strings.Cut(n, "@")
	}
	return out
}

// traefikPeriod reads period: a Go duration ("1m") or seconds (60); 1s when
// absent.
func traefikPeriod(n yaml.Node) (time.Duration, error) {
	if n.Kind == 0 {
		return time.Second, nil
	}
	if n.Kind != yaml.ScalarNode {
		return 0, fmt.Errorf("period: want a duration")
	}
	if s, err := strconv.ParseInt(n.Value, 10, 64); err == nil {
		if s < 1 || s > 1e7 {
			return 0, fmt.Errorf("period %q is out of range", n.Value)
		}
		return time.Duration(s) * time.Second, nil
	}
	d, err := time.ParseDuration(n.Value)
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
	burst := int64(1)
	if rl.Burst != nil {
		burst = *rl.Burst
	}
	if burst < 1 || burst > sluice.MaxQuantity {
		return nil, fmt.Errorf("burst %d must be ≥ 1", burst)
	}
	// Traefik holds a request whose token comes within maxDelay: half the
	// interval between tokens (rates of at least one per second), else 500ms.
	perSecond := float64(rl.Average) * float64(time.Second) / float64(period)
	maxDelay := 500 * time.Millisecond
	if perSecond >= 1 {
		maxDelay = time.Second / (time.Duration(perSecond) * 2)
	}
	maxDelay = max(maxDelay.Truncate(time.Microsecond), time.Microsecond)
	l := Limit{Name: limitName, Algorithm: "leaky-bucket", Quantity: rl.Average, Window: period, Burst: burst, MaxWait: maxDelay,
		Source: fmt.Sprintf("%s: average %d per %s, burst %d", where, rl.Average, period, burst)}
	t.same(where, "Traefik's token bucket of %d refilled at %d per %s (golang.org/x/time/rate) holds a request whose token comes within %s and refuses the rest; sluice's leaky-bucket queue of burst %d with max_wait %s admits the same requests after the same waits.",
		burst, rl.Average, period, maxDelay, burst, maxDelay)
	return &l, nil
}

// traefikSource maps a middleware's sourceCriterion onto the key of r, its
// rule, or, when r is nil, onto sluice's identity for a plan's limit (only
// by address: header and host sources are always rules).
func (t *Translation) traefikSource(name string, rl *traefikRateLimit, r *Rule) {
	where := "middleware " + name + " source"
	sc := rl.SourceCriterion
	switch {
	case sc == nil || (sc.RequestHeaderName == "" && !sc.RequestHost):
		if r != nil {
			r.Key = []string{"ip/32/128"}
			t.same(where, "one bucket per client address (key ip/32/128: IPv6 addresses whole).")
		} else {
			t.IPv6Prefix = 128
			t.same(where, "one bucket per client address (ipv6_prefix: 128 keeps one per IPv6 address).")
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
		t.same(where, "requestHost: one bucket per host name (key host).")
	}
}

// traefikRules makes a rule of each router and rate-limiting middleware it
// names, matching the router's hosts and paths, keyed by the middleware's
// source; each router counts apart, as Traefik's in-memory limiter keeps a
// bucket set per router. A file without routers makes a rule of each
// middleware, on every path. Routers without a rate-limiting middleware
// under a limited router's prefix cost 0; a router's rules leave out the
// limited routers below its paths on its hosts, as Traefik sends a request
// to one router, the longest rule.
func (t *Translation) traefikRules(all []traefikMiddleware, routers []traefikRouter) error {
	t.Costs = map[string]int64{}
	type use struct {
		router                *traefikRouter
		hosts, paths          []string
		name                  string
		rl                    *traefikRateLimit
		everywhere, matchable bool
		rule                  int // index in t.SluiceRules; -1: none
	}
	var uses []use
	byName := map[string]*traefikRateLimit{}
	for _, f := range all {
		byName[f.name] = f.rl
	}
	usedBy := map[string]bool{}
	var unlimited [][]string // paths of routers without a rate limit
	everywhere := len(routers) == 0
	for i := range routers {
		rt := &routers[i]
		hosts, paths, ok := traefikMatch(rt.rule)
		limited := false
		for _, m := range rt.middlewares {
			if rl := byName[m]; rl != nil {
				limited, usedBy[m] = true, true
				uses = append(uses, use{router: rt, hosts: hosts, paths: paths, name: m, rl: rl, everywhere: !ok || len(paths) == 0, matchable: ok})
			}
		}
		switch {
		case !limited:
			if ok && len(paths) > 0 {
				unlimited = append(unlimited, paths)
			}
		case !ok:
			t.differs("router "+rt.name, "its rule %q is not only Host, Path and PathPrefix terms joined by &&: its limits are imported for every request.", rt.rule)
			everywhere = true
		case len(paths) == 0:
			everywhere = true
		}
	}
	if len(routers) == 0 {
		for _, f := range all {
			uses = append(uses, use{name: f.name, rl: f.rl, everywhere: true})
		}
	}
	for _, f := range all {
		if len(routers) > 0 && !usedBy[f.name] {
			t.same("middleware "+f.name, "named by no router: not imported.")
		}
	}
	if !everywhere {
		t.Costs["/"] = 0
		t.same("routes", "the middlewares limit only their routers' paths: other paths cost 0 and the routers' paths cost 1.")
	}
	perRouter := map[*traefikRouter]int{}
	for _, u := range uses {
		perRouter[u.router]++
	}
	for i := range uses {
		u := &uses[i]
		u.rule = -1
		name := u.name
		if u.router != nil {
			name = u.router.name
			if perRouter[u.router] > 1 {
				name += "-" + u.name
			}
		}
		r := Rule{Name: t.ruleName(name), Hosts: u.hosts}
		if !u.everywhere {
			r.Paths = u.paths
			if !everywhere {
				for _, p := range u.paths {
					t.Costs[p] = 1
				}
			}
		}
		if !u.matchable {
			r.Hosts = nil
		}
		period, err := traefikPeriod(u.rl.Period)
		if err != nil {
			return fmt.Errorf("middleware %s: %w", u.name, err)
		}
		l, err := t.traefikLimit(u.name, u.rl, defaultLimitName(period))
		if err != nil {
			return fmt.Errorf("middleware %s: %w", u.name, err)
		}
		if l == nil {
			continue
		}
		r.Limits = []Limit{*l}
		t.traefikSource(u.name, u.rl, &r)
		u.rule = len(t.SluiceRules)
		t.SluiceRules = append(t.SluiceRules, r)
	}
	type pair struct {
		rule int
		to   *traefikRouter
	}
	done := map[pair]bool{}
	for _, a := range uses {
		for _, b := range uses {
			if a.rule < 0 || a.router == nil || b.router == nil || a.router == b.router || a.everywhere || b.everywhere ||
				len(a.hosts) > 0 && !slices.Equal(a.hosts, b.hosts) || done[pair{a.rule, b.router}] ||
				!slices.ContainsFunc(b.paths, func(q string) bool { return slices.ContainsFunc(a.paths, func(p string) bool { return below(q, p) }) }) {
				continue
			}
			done[pair{a.rule, b.router}] = true
			r := &t.SluiceRules[a.rule]
			if slices.Equal(a.hosts, b.hosts) && r.leaveOut(b.paths, a.paths) {
				t.same("router "+b.router.name, "Traefik sends its requests to it alone (the longest rule wins); rule %s of router %s leaves its paths out (except_paths).", r.Name, a.router.name)
			} else {
				t.differs("router "+b.router.name, "Traefik sends its requests to it alone (the longest rule wins); rule %s of router %s matches them too and cannot leave them out (except_paths) for its hosts alone, or without leaving out a path of its own: they also count against it.", r.Name, a.router.name)
			}
		}
	}
	if !everywhere {
		for _, paths := range unlimited {
			for _, q := range paths {
				if slices.ContainsFunc(slices.Collect(maps.Keys(t.Costs)), func(p string) bool { return t.Costs[p] == 1 && below(q, p) }) {
					t.Costs[q] = 0
				}
			}
		}
	}
	return nil
}

// traefikMatch reads a router rule made of Host, Path and PathPrefix terms
// joined by && into host names and ServeMux patterns; ok is false for any
// other rule (||, !, regular expressions, other matchers, two paths).
func traefikMatch(rule string) (hosts, paths []string, ok bool) {
	if strings.ContainsAny(rule, "|!") || strings.TrimSpace(rule) == "" {
		return nil, nil, false
	}
	npaths := 0
	for _, term := range strings.Split(rule, "&&") {
		term = strings.TrimSpace(term)
		name, args, found := strings.Cut(term, "(")
		if !found || !strings.HasSuffix(args, ")") {
			return nil, nil, false
		}
		var vals []string
		for _, a := range strings.Split(strings.TrimSuffix(args, ")"), ",") {
			a = strings.TrimSpace(a)
			if len(a) < 2 || (a[0] != '`' && a[0] != '"') || a[len(a)-1] != a[0] {
				return nil, nil, false
			}
			vals = append(vals, a[1:len(a)-1])
		}
		switch strings.TrimSpace(name) {
		case "Host":
			for _, h := range vals {
				if !validHostName(h) {
					return nil, nil, false
				}
			}
			hosts = append(hosts, vals...)
		case "Path", "PathPrefix":
			if npaths++; npaths > 1 {
				return nil, nil, false
			}
			for _, v := range vals {
				pats, ok := traefikPatterns(strings.TrimSpace(name) == "PathPrefix", v)
				if !ok {
					return nil, nil, false
				}
				paths = append(paths, pats...)
			}
		default:
			return nil, nil, false
		}
	}
	return hosts, paths, true
}

// traefikPatterns returns the ServeMux patterns of a Path (exact) or a
// PathPrefix.
func traefikPatterns(prefix bool, p string) ([]string, bool) {
	if !strings.HasPrefix(p, "/") || strings.ContainsAny(p, "{}") {
		return nil, false
	}
	var out []string
	switch {
	case prefix && strings.HasSuffix(p, "/"):
		out = []string{p}
	case prefix:
		out = []string{p, p + "/"}
	case strings.HasSuffix(p, "/"):
		out = []string{p + "{$}"}
	default:
		out = []string{p}
	}
	for _, pat := range out {
		if !validPattern(pat) {
			return nil, false
		}
	}
	return out, true
}
