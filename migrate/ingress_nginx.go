package migrate

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sluice-dev/sluice"
)

// ingressAnnotation prefixes ingress-nginx's annotations.
const ingressAnnotation = "nginx.ingress.kubernetes.io/"

// k8sIngress is the part of a Kubernetes Ingress the import reads.
type k8sIngress struct {
	Kind     string `yaml:"kind"`
	Metadata struct {
		Name              string            `yaml:"name"`
		Namespace         string            `yaml:"namespace"`
		CreationTimestamp string            `yaml:"creationTimestamp"`
		Annotations       map[string]string `yaml:"annotations"`
	} `yaml:"metadata"`
	Spec struct {
		Rules []struct {
			Host string `yaml:"host"`
			HTTP *struct {
				Paths []struct {
					Path     string `yaml:"path"`
					PathType string `yaml:"pathType"`
				} `yaml:"paths"`
			} `yaml:"http"`
		} `yaml:"rules"`
	} `yaml:"spec"`
}

// ingressPlace is one host and path of an Ingress, as sluice matches it.
type ingressPlace struct {
	host     string   // "" for every host
	patterns []string // nil for every path
	// prefix: the path is an nginx prefix location (any pathType but
	// Prefix and Exact), which also matches names that start the same way.
	prefix bool
	// path and pathType are the Ingress path's, for a place of one (both
	// "" for a host without paths).
	path, pathType string
	// regex names the Ingress whose use-regex or rewrite-target makes
	// ingress-nginx write every location of the host as a regular
	// expression (see ingressRegexHosts); "" for none.
	regex string
}

// IngressNginx translates the rate-limit annotations of Kubernetes
// Ingresses served by ingress-nginx (limit-rps, limit-rpm,
// limit-burst-multiplier, limit-connections, limit-allowlist or its older
// name limit-whitelist), in one or several YAML documents; source names the
// file. ingress-nginx writes each annotated Ingress's limits as nginx zones
// keyed by the client address (limit_req with burst = limit × multiplier
// and nodelay, limit_conn), shared by every location of that Ingress, so
// each Ingress becomes a rule on its hosts and paths keyed by the client
// address: those ingress-nginx serves from it (the oldest Ingress of a
// host and path, see ingressOldest; a canary Ingress's limits are not
// read), each a string prefix on a host where an Ingress sets use-regex
// or rewrite-target (ingressRegexHosts); an Ingress left no path is no
// rule. An annotation the
// controller does not read as an integer is read as it reads it — a limit
// not imported, a multiplier of 5 — and reported; a multiplier below 1
// beside limit-rps or limit-rpm, a burst nginx refuses, is an error.
func IngressNginx(src, source string) (*Translation, error) {
	t := &Translation{Format: FormatIngressNginx, Source: source}
	var ingresses []k8sIngress
	err := eachDocument(src, source, func(ing *k8sIngress) error {
		if ing.Kind == "Ingress" {
			ingresses = append(ingresses, *ing)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(ingresses) > MaxPlaces {
		return nil, fmt.Errorf("%s: %w", source, tooManyPlaces(len(ingresses), "Ingresses"))
	}
	places := make([][]ingressPlace, len(ingresses))
	regex := ingressRegexHosts(ingresses)
	n := 0 // hosts and paths, all Ingresses together
	for i := range ingresses {
		var skipped []string
		places[i], skipped = ingressPlaces(&ingresses[i], regex)
		n += len(places[i])
		if len(skipped) > 0 {
			t.differs("Ingress "+ingresses[i].Metadata.Name, "not imported: its paths %s are not paths sluice's rules match (a ServeMux pattern of literal segments: no *, braces or blanks); their requests are not limited.", strings.Join(skipped, " "))
		}
	}
	if n > MaxPlaces {
		return nil, fmt.Errorf("%s: %w", source, tooManyPlaces(n, "Ingress hosts and paths"))
	}
	t.ingressOldest(ingresses, places)
	var exempts [][]string
	for i := range ingresses {
		ex, ok, err := t.ingressRule(&ingresses[i], places, i)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", source, err)
		}
		if ok {
			exempts = append(exempts, ex)
		}
	}
	if len(t.SluiceRules) == 0 {
		var lost []string // why limits found were not imported
		for _, d := range t.Differences {
			if !d.Same && strings.HasPrefix(d.Where, "Ingress ") && strings.Contains(d.Text, "not imported") && !strings.Contains(d.Where, " limit-rate") && !strings.Contains(d.Where, " global-rate-limit") {
				lost = append(lost, d.Where+": "+strings.TrimSuffix(d.Text, "."))
			}
		}
		if len(lost) > 0 {
			return nil, fmt.Errorf("%s: no limit imported: %s", source, strings.Join(lost, "; "))
		}
		for i := range ingresses {
			if _, ok := ingresses[i].Metadata.Annotations[ingressAnnotation+"global-rate-limit"]; ok {
				return nil, fmt.Errorf("%s: no Ingress with ingress-nginx's limit-rps, limit-rpm or limit-connections annotations; global-rate-limit (its global rate limit, counted in memcached) is not imported: write it as a rule by hand (docs/migration.md)", source)
			}
		}
		return nil, fmt.Errorf("%s: no Ingress with ingress-nginx's limit-rps, limit-rpm or limit-connections annotations", source)
	}
	t.exemptions(exempts)
	t.differs("status", "ingress-nginx refuses with limit-req-status-code and limit-conn-status-code from its ConfigMap, 503 by default; sluice refuses with 429 Too Many Requests, Retry-After and a problem+json body.")
	t.differs("replicas", "each ingress-nginx replica keeps its own zones, so N replicas admit N times a limit; sluice on the Redis store keeps one count for the fleet: multiply quantities and bursts by N for the same total, or run one sluice beside each replica on its memory store.")
	t.differs("client address", "ingress-nginx keys by $binary_remote_addr, the address its ConfigMap's use-forwarded-headers or use-proxy-protocol makes real; sluice believes X-Forwarded-For only from identity.trusted_proxies: list your load balancers there.")
	t.differs("headers", "ingress-nginx sends no rate-limit headers; sluice sends RateLimit-Policy and RateLimit (IETF draft) on every response.")
	return t, nil
}

// ingressPlaces returns the hosts and paths an Ingress serves (none for
// paths that are regular expressions: use-regex), and the paths it skips
// because a rule cannot match them (see validPathValue). A path of a host
// of regex (ingressRegexHosts) is the string prefix ingress-nginx's
// regular expression of it matches, whatever its pathType.
func ingressPlaces(ing *k8sIngress, regex map[string]string) (out []ingressPlace, skipped []string) {
	if ing.Metadata.Annotations[ingressAnnotation+"use-regex"] == "true" {
		return nil, nil
	}
	for _, r := range ing.Spec.Rules {
		host := strings.ToLower(r.Host)
		if r.HTTP == nil || len(r.HTTP.Paths) == 0 {
			out = append(out, ingressPlace{host: host})
			continue
		}
		for _, p := range r.HTTP.Paths {
			if p.Path != "" && p.Path != "/" && !validPathValue(p.Path) {
				skipped = append(skipped, p.Path)
				continue
			}
			pl := ingressPlace{host: host, patterns: ingressPatterns(p.Path, p.PathType), prefix: p.PathType != "Prefix" && p.PathType != "Exact",
				path: p.Path, pathType: or(p.PathType, "ImplementationSpecific")}
			if re := regex[host]; re != "" {
				pl.patterns, pl.prefix, pl.regex = ingressPatterns(p.Path, "ImplementationSpecific"), true, re
			}
			out = append(out, pl)
		}
	}
	return out, skipped
}

// ingressPatterns returns the ServeMux patterns of an Ingress path: nil for
// every path ("/" as a prefix, or none), or for one sluice cannot match
// (a regular expression, or one validPathValue refuses: the caller skips
// those).
func ingressPatterns(path, pathType string) []string {
	switch {
	case path == "" || path == "/" && pathType != "Exact":
		return nil
	case !validPathValue(path):
		return nil
	case pathType == "Exact":
		return []string{exactPattern(path)}
	}
	return prefixPatterns(path)
}

// ingressRule makes the rule of Ingress i, whose places and every other
// Ingress's are places, and returns the addresses its limit-allowlist (or
// limit-whitelist) leaves out; false for an Ingress without limits, or
// whose limits are not imported.
func (t *Translation) ingressRule(ing *k8sIngress, places [][]ingressPlace, i int) ([]string, bool, error) {
	name := ingressName(ing)
	where := "Ingress " + name
	ann := func(key string) (string, bool) {
		v, ok := ing.Metadata.Annotations[ingressAnnotation+key]
		return strings.TrimSpace(v), ok
	}
	if ingressCanary(ing) {
		var ignored []string
		for _, k := range []string{"limit-rps", "limit-rpm", "limit-connections", "limit-burst-multiplier", "limit-rate", "limit-allowlist", "limit-whitelist", "global-rate-limit"} {
			if _, ok := ann(k); ok {
				ignored = append(ignored, k)
			}
		}
		if len(ignored) > 0 {
			t.differs(where, "a canary Ingress (canary: \"true\"): ingress-nginx reads none of its annotations but the canary ones (and load-balance, upstream-hash-by, affinity), so its %s are not applied — the requests it takes keep the limits of the main Ingress of the same host and path — and not imported. Set the limits on the main Ingress.", strings.Join(ignored, ", "))
		}
		return nil, false, nil
	}
	// count reads a limit annotation as the controller does
	// (parser.GetIntAnnotation: strconv.Atoi of the value as written); a
	// value of 0 or less is no limit, as ingress-nginx writes none for it.
	count := func(key string) (int64, bool, error) {
		v, ok := ing.Metadata.Annotations[ingressAnnotation+key]
		if !ok {
			return 0, false, nil
		}
		n, err := strconv.ParseInt(v, 10, 64)
		switch {
		case errors.Is(err, strconv.ErrRange) || n > sluice.MaxQuantity/100:
			return 0, false, fmt.Errorf("%s: %s%s: %q is more than sluice counts (%d)", where, ingressAnnotation, key, v, sluice.MaxQuantity/100)
		case err != nil:
			t.differs(where+" "+key, "%q is not an integer: ingress-nginx 1.9 and later (annotation validation, on by default) refuse the Ingress — the admission webhook denies it and the controller serves none of its paths; earlier versions read it as 0, no limit. Not imported: write a number.", v)
			return 0, false, nil
		case n < 0:
			t.differs(where+" "+key, "%d: ingress-nginx writes no limit for a value below 1; not imported.", n)
			return 0, false, nil
		}
		return n, n > 0, nil
	}
	mult := int64(5)
	if v, ok := ing.Metadata.Annotations[ingressAnnotation+"limit-burst-multiplier"]; ok {
		m, err := strconv.ParseInt(v, 10, 64)
		switch {
		case errors.Is(err, strconv.ErrRange) || m > sluice.MaxQuantity/100:
			return nil, false, fmt.Errorf("%s: %slimit-burst-multiplier: %q is more than sluice counts (%d)", where, ingressAnnotation, v, sluice.MaxQuantity/100)
		case err != nil:
			t.differs(where+" limit-burst-multiplier", "%q is not an integer: ingress-nginx ignores it and multiplies by its default, 5, as the import does.", v)
		default:
			mult = m // below 1, refused where a request limit's burst uses it
		}
	}
	var limits []Limit
	for _, l := range []struct {
		key    string
		window time.Duration
		unit   string
	}{{"limit-rps", time.Second, "r/s"}, {"limit-rpm", time.Minute, "r/m"}} {
		n, ok, err := count(l.key)
		if err != nil {
			return nil, false, err
		}
		if !ok {
			continue
		}
		if mult < 1 {
			return nil, false, fmt.Errorf("%s: %slimit-burst-multiplier %d makes %s %d write limit_req burst=%d, which nginx refuses (invalid burst value): the admission webhook denies the Ingress, or the controller keeps its previous configuration", where, ingressAnnotation, mult, l.key, n, n*mult)
		}
		if mult > (sluice.MaxQuantity-1)/n {
			return nil, false, fmt.Errorf("%s: %s %d × limit-burst-multiplier %d is a burst of more than sluice counts (%d)", where, l.key, n, mult, sluice.MaxQuantity)
		}
		burst := n * mult
		limits = append(limits, Limit{Name: defaultLimitName(l.window), Algorithm: "gcra", Quantity: n, Window: l.window, Burst: burst + 1,
			Source: fmt.Sprintf("%s: %s %d, burst %d × %d", where, l.key, n, n, mult)})
		if note := nginxPerMinuteNote(n, l.window); note != "" {
			t.differs(where+" "+l.key, "ingress-nginx writes limit_req_zone $binary_remote_addr rate=%d%s and limit_req burst=%d nodelay: a bucket of burst+1 = %d, imported as gcra %d per %s with burst %d; but %s",
				n, l.unit, burst, burst+1, n, formatWindow(l.window), burst+1, note)
			continue
		}
		t.same(where+" "+l.key, "ingress-nginx writes limit_req_zone $binary_remote_addr rate=%d%s and limit_req burst=%d nodelay: a bucket of burst+1 = %d draining %d per %s, which gcra %d per %s with burst %d decides alike (the nginx import's equivalence, held to real nginx).",
			n, l.unit, burst, burst+1, n, formatWindow(l.window), n, formatWindow(l.window), burst+1)
	}
	if n, ok, err := count("limit-connections"); err != nil {
		return nil, false, err
	} else if ok {
		limits = append(limits, Limit{Name: "concurrent", Algorithm: "concurrency", Quantity: n, Window: connLease,
			Source: fmt.Sprintf("%s: limit-connections %d", where, n)})
		t.differs(where+" limit-connections", "limit_conn counts a client's requests being processed, which a concurrency limit of %d counts alike behind sluice's reverse proxy; a slot not given back (a request running longer than %s, a crash) is freed after %s.", n, formatWindow(connLease), formatWindow(connLease))
	}
	if _, ok := ann("limit-rate"); ok {
		t.differs(where+" limit-rate", "a bandwidth limit (kilobytes a second): sluice limits requests, not bytes; not imported.")
	}
	t.ingressGlobalLimit(where, ann)
	if len(limits) == 0 {
		return nil, false, nil
	}
	if v, _ := ann("use-regex"); v == "true" {
		t.differs(where, "not imported: use-regex makes its paths regular expressions; sluice's rules match paths and prefixes. Write the rule by hand.")
		return nil, false, nil
	}
	if len(places[i]) == 0 && len(ing.Spec.Rules) > 0 {
		// Every path was skipped or is another Ingress's: none is this
		// Ingress's to limit (a rule of no place would match every request).
		t.differs(where, "not imported: none of its paths is left to it — each is one sluice's rules cannot match, or another Ingress's, which ingress-nginx serves instead — so no rule is written; write one by hand where its limits must apply.")
		return nil, false, nil
	}
	r := Rule{Name: t.ruleName(strings.ReplaceAll(name, "/", "-")), Key: []string{"ip/32/128"}, Limits: limits}
	// The Ingress's hosts ("": every host, for a place without one or of
	// a host a rule cannot match), each with its paths (nil: every path),
	// in the order met; then hosts of the same paths joined, one match of
	// the rule each.
	var hosts, paths []string
	byHost := map[string][]string{}
	everyOf := map[string]bool{} // hosts that serve every path
	unmatched := map[string]bool{}
	for _, p := range places[i] {
		h := p.host
		if h != "" && !validHostName(h) && !wildcardHost(h) {
			if !unmatched[h] {
				t.differs(where, "the host %q is not a host name sluice's rules match: the rule matches its paths on every host.", h)
				unmatched[h] = true
			}
			h = ""
		}
		if !slices.Contains(hosts, h) {
			hosts = append(hosts, h)
			if wildcardHost(h) {
				t.same(where+" host "+h, "nginx's server %s serves the names under %s at any depth (not %s itself) that no other server names, as the rule's host %s matches them.", h, h[2:], h[2:], h)
			}
		}
		everyOf[h] = everyOf[h] || p.patterns == nil
		for _, q := range p.patterns {
			if !slices.Contains(paths, q) {
				paths = append(paths, q)
			}
			if !slices.Contains(byHost[h], q) {
				byHost[h] = append(byHost[h], q)
			}
		}
	}
	var matches []RuleMatch
	for _, h := range hosts {
		m := RuleMatch{Paths: byHost[h]}
		if everyOf[h] {
			m.Paths = nil
		}
		k := slices.IndexFunc(matches, func(o RuleMatch) bool { return sameSet(o.Paths, m.Paths) && (o.Paths == nil) == (m.Paths == nil) })
		switch {
		case k < 0:
			matches = append(matches, m)
			k = len(matches) - 1
		case len(matches[k].Hosts) == 0: // every host already
			continue
		}
		if h == "" {
			matches[k].Hosts = nil
		} else {
			matches[k].Hosts = append(matches[k].Hosts, h)
		}
	}
	if len(matches) == 1 {
		r.Paths, r.Hosts = matches[0].Paths, matches[0].Hosts
	} else {
		r.Any = matches
		t.same(where, "its hosts serve different paths: the rule has an alternative for the hosts of each set of paths (match: a list of %d), each matching those hosts' own paths, and one count across them, as ingress-nginx writes the Ingress's one zone into the locations of every host.", len(matches))
	}
	for _, p := range places[i] {
		for _, q := range p.patterns {
			if strings.HasSuffix(q, "/") || strings.HasSuffix(q, "{$}") {
				continue
			}
			switch {
			case !slices.Contains(paths, q+"/"):
			case p.regex != "":
				t.differs(where+" path "+q, "Ingress %s sets use-regex or rewrite-target on %s, so ingress-nginx writes every location of the host as a case-insensitive regular expression, ~* \"^%s\" here whatever the pathType: a string prefix, which also takes %sx…, tried longest path first. The rule's patterns %s and %s/ match the path and the paths below it (in any case, as sluice reads paths), not %sx…: those requests are not limited.", p.regex, or(p.host, "the default server"), q, q, q, q, q)
			case p.prefix:
				t.differs(where+" path "+q, "an ImplementationSpecific path is an nginx prefix location, which also matches %sx…; the rule's patterns %s and %s/ match the path and the paths below it only: those requests are not limited.", q, q, q)
			default:
				t.same(where+" path "+q, "a Prefix path matches %s and the paths below %s/, as the rule's patterns do.", q, q)
			}
		}
	}
	t.ingressLeaveOut(&r, places, i, where)
	t.same(where+" key", "one count per client address, shared by every host and path of the Ingress, as ingress-nginx shares one zone among its locations (key ip/32/128: IPv6 addresses whole).")
	var exempt []string
	allow := "limit-allowlist"
	v, ok := ann(allow)
	if !ok {
		allow = "limit-whitelist" // its older name, read when limit-allowlist is absent
		v, ok = ann(allow)
	}
	if ok && v != "" {
		for _, s := range strings.Split(v, ",") {
			pfx, err := parsePrefix(strings.TrimSpace(s))
			if err != nil {
				return nil, false, fmt.Errorf("%s: %s: %q is not an address or a prefix", where, allow, s)
			}
			exempt = append(exempt, pfx)
		}
	}
	t.SluiceRules = append(t.SluiceRules, r)
	return exempt, true, nil
}

// ingressLeaveOut leaves out of each match of r (an alternative, or its
// own) the paths below its own that other Ingresses serve on its hosts:
// nginx sends a request to one location, the longest prefix, and applies
// that location's Ingress's limits only. An Ingress without a host is
// nginx's default server, which serves only the hosts no Ingress names.
func (t *Translation) ingressLeaveOut(r *Rule, places [][]ingressPlace, i int, where string) {
	named := false // another Ingress names a host
	for j, ps := range places {
		named = named || j != i && slices.ContainsFunc(ps, func(p ingressPlace) bool { return p.host != "" })
	}
	everyHost := false // a match of r of every host
	for k, a := range r.alternatives() {
		alt := k
		if len(r.Any) == 0 {
			alt = -1
		}
		everyHost = everyHost || len(a.Hosts) == 0
		for j, ps := range places {
			if j == i {
				continue
			}
			for _, p := range ps {
				sameServer := p.host == "" && len(a.Hosts) == 0 || p.host != "" && slices.Contains(a.Hosts, p.host)
				if p.patterns == nil || !sameServer {
					continue
				}
				var inside []string
				if a.Paths == nil {
					inside = p.patterns
				} else {
					inside = belowAny(p.patterns, a.Paths)
				}
				if len(inside) == 0 {
					continue
				}
				if !r.leaveOutAt(alt, inside, a.Paths) {
					t.differs(where, "another Ingress serves %s below its paths, whose location nginx prefers; sluice cannot leave it out of this rule: both count it.", strings.Join(inside, " "))
				}
			}
		}
	}
	// A name under a wildcard of r that an Ingress names is that name's
	// server's, which nginx prefers to the wildcard's, unless it is in
	// the same match of r (the same zone and paths).
	said := map[string]bool{}
	for _, a := range r.alternatives() {
		for _, w := range a.Hosts {
			if !wildcardHost(w) {
				continue
			}
			for j, ps := range places {
				for _, p := range ps {
					if p.host == "" || wildcardHost(p.host) || !strings.HasSuffix(p.host, w[1:]) || said[w+" "+p.host] || j == i && slices.Contains(a.Hosts, p.host) {
						continue
					}
					said[w+" "+p.host] = true
					t.differs(where, "an Ingress names the host %s, which nginx serves from that host's own server, not from %s's; the rule's host %s matches it too: its requests on the rule's paths count here.", p.host, w, w)
				}
			}
		}
	}
	if named && everyHost {
		t.differs(where, "without a host it is nginx's default server, for the hosts no Ingress names; sluice's rule matches every host, also those other Ingresses serve: add them to its match if they must not count here.")
	}
}

// wildcardHost reports whether h is a leading wildcard of a host name
// ("*.example.com"), which sluice's rules match as nginx's server_name
// does: every name under it, not the name itself.
func wildcardHost(h string) bool {
	return strings.HasPrefix(h, "*.") && validHostName(h[2:])
}

// ingressGlobalLimit reports an Ingress's global rate limit
// (global-rate-limit per global-rate-limit-window, keyed by
// global-rate-limit-key), which the import does not write: ingress-nginx
// counts it in memcached for every replica together, apart from the nginx
// zones of limit-rps and limit-rpm. ann reads the Ingress's annotations.
func (t *Translation) ingressGlobalLimit(where string, ann func(string) (string, bool)) {
	n, ok := ann("global-rate-limit")
	if !ok {
		return
	}
	window, _ := ann("global-rate-limit-window")
	key, ok := ann("global-rate-limit-key")
	if !ok || key == "" {
		key = "$remote_addr"
	}
	t.differs(where+" global-rate-limit", "not imported: ingress-nginx's global rate limit of %s per %s, keyed by %s, is counted in memcached for every replica together (a sliding window), and applies beside limit-rps and limit-rpm; sluice's nearest is a rule of the Ingress's hosts and paths with a sliding-window-counter limit of that quantity and window on the Redis store, keyed by the client address for $remote_addr: write it by hand, leaving out global-rate-limit-ignored-cidrs with exempt.addresses.",
		excerpt(n), excerpt(window), excerpt(key))
}
