package migrate

import (
	"fmt"
	"net/http"
	"net/netip"
	"slices"
	"strings"
)

// egSelector is one of a rule's clientSelectors: a request is the rule's
// when every condition of every selector holds (Envoy Gateway's
// buildRateLimitRule makes one descriptor of them all).
type egSelector struct {
	Headers []egStringSelector `yaml:"headers"`
	// Methods are alternatives: Envoy Gateway writes a rate limit per
	// method, all counted by the rule's one descriptor.
	Methods []struct {
		Value  string `yaml:"value"`
		Invert bool   `yaml:"invert"`
	} `yaml:"methods"`
	Path *struct {
		Type   string `yaml:"type"`
		Value  string `yaml:"value"`
		Invert bool   `yaml:"invert"`
	} `yaml:"path"`
	QueryParams []egStringSelector `yaml:"queryParams"`
	SourceCIDR  *struct {
		Type  string `yaml:"type"`
		Value string `yaml:"value"`
	} `yaml:"sourceCIDR"`
}

// egStringSelector selects requests by a header or a query parameter.
type egStringSelector struct {
	Name   string `yaml:"name"`
	Value  string `yaml:"value"`
	Type   string `yaml:"type"`
	Invert bool   `yaml:"invert"`
}

// egSelection is what a rule's clientSelectors make of its sluice rule:
// the headers and methods its requests carry, the paths they are under
// (nil: any), the requests it leaves out, and the key that counts them.
type egSelection struct {
	headers    []HeaderMatch
	methods    []string
	paths      []string
	except     []RuleMatch
	key        []string
	headerFrom string
	fallback   string
}

// egPathPatterns returns the ServeMux patterns of a Gateway API path match
// of type typ ("" is PathPrefix): nil for every path (the prefix "/"), and
// false when sluice's patterns cannot say it (a regular expression, a *,
// an empty segment). A PathPrefix matches element by element and ignores
// a trailing slash (HTTPPathMatch: "/abc/" matches /abc, /abc/ and
// /abc/def alike).
func egPathPatterns(typ, value string) ([]string, bool) {
	switch typ {
	case "", "PathPrefix":
		if value == "" || value == "/" {
			return nil, true
		}
		if !strings.HasPrefix(value, "/") {
			return nil, false
		}
		pats := prefixPatterns(strings.TrimSuffix(value, "/"))
		return pats, len(pats) > 0
	case "Exact":
		p := exactPattern(value)
		return []string{p}, strings.HasPrefix(value, "/") && validPattern(p)
	}
	return nil, false
}

// egNarrow returns the patterns of a route's paths and of a selector's
// that lie within one of the other's (equal, or below its subtree): the
// paths of the route the selector picks.
func egNarrow(route, sel []string) []string {
	var out []string
	within := func(p string, of []string) bool {
		return slices.ContainsFunc(of, func(o string) bool { return o == p || below(p, o) })
	}
	for _, s := range sel {
		if within(s, route) && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	for _, r := range route {
		if within(r, sel) && !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	return out
}

// egSelect reads rule r's clientSelectors into the sluice rule called by
// where, and reports false, having said why in the report, when sluice
// cannot select the same requests (the rule is then not imported).
func (t *Translation) egSelect(where string, r *egRule) (egSelection, bool, error) {
	var s egSelection
	for _, sel := range r.ClientSelectors {
		for _, h := range sel.Headers {
			ok, err := t.egHeader(where, &s, h)
			if err != nil || !ok {
				return s, false, err
			}
		}
		if len(sel.Methods) > 0 && !t.egMethods(where, &s, sel) {
			return s, false, nil
		}
		if p := sel.Path; p != nil {
			pats, ok := egPathPatterns(p.Type, p.Value)
			switch {
			case !ok:
				t.differs(where, "it selects the path %s %q, which sluice's path patterns cannot say; not imported.", or(p.Type, "PathPrefix"), p.Value)
				return s, false, nil
			case pats == nil && p.Invert:
				t.differs(where, "it selects the requests not under the path /: none; not imported.")
				return s, false, nil
			case pats == nil:
			case p.Invert:
				s.except = append(s.except, RuleMatch{Paths: pats})
			case s.paths != nil:
				if s.paths = egNarrow(s.paths, pats); len(s.paths) == 0 {
					t.differs(where, "two of its clientSelectors name paths that no request is under both of; not imported.")
					return s, false, nil
				}
			default:
				s.paths = pats
			}
		}
		for _, q := range sel.QueryParams {
			if q.Type != "Distinct" || q.Invert || q.Name == "" {
				t.differs(where, "it selects the query parameter %s by a %s match: sluice's rules match no query parameter (a query:<name> key counts each value apart); not imported.", q.Name, or(q.Type, "Exact"))
				return s, false, nil
			}
			s.key = append(s.key, "query:"+q.Name)
			s.fallback = "skip" // no descriptor without the parameter
		}
		if c := sel.SourceCIDR; c != nil {
			ok, err := t.egSourceCIDR(where, &s, c.Type, c.Value)
			if err != nil || !ok {
				return s, false, err
			}
		}
	}
	return s, true, nil
}

// egHeader reads one header selector into s.
func (t *Translation) egHeader(where string, s *egSelection, h egStringSelector) (bool, error) {
	if !validHeaderName(h.Name) {
		return false, fmt.Errorf("header %q is not a header name", h.Name)
	}
	h.Name = http.CanonicalHeaderKey(h.Name)
	switch {
	case h.Invert && (h.Type == "" || h.Type == "Exact") && h.Value != "" && printable(h.Value):
		// Selected: the requests whose header is not h.Value (those
		// without it too); the rule leaves out those with it.
		s.except = append(s.except, RuleMatch{Headers: []HeaderMatch{{Name: h.Name, Value: h.Value}}})
	case h.Invert:
		t.differs(where, "it selects requests whose %s does not match by a %s: sluice leaves out a header's exact value only; not imported.", h.Name, h.Type)
		return false, nil
	case h.Type == "Distinct" && t.claimHeaders[h.Name] != "" && t.JWT != nil:
		// Envoy wrote the header from a verified token's claim.
		claim := t.claimHeaders[h.Name]
		if claim == "sub" {
			s.key = append(s.key, "user")
		} else {
			s.key = append(s.key, "claim:"+claim)
		}
		t.same(where, "%s is claim %s of the verified token, copied by Envoy: sluice keys by the claim itself; a request without a verified token is counted by its address.", h.Name, claim)
	case h.Type == "Distinct":
		s.key = append(s.key, "header:"+h.Name)
		s.headerFrom, s.fallback = "any", "skip"
	case h.Type == "" || h.Type == "Exact":
		if claim := t.claimHeaders[h.Name]; claim != "" {
			t.differs(where, "it selects %s %q, which Envoy copied from claim %s of the verified token; sluice matches the header as the request carries it, which a client can set: key a rule by claim:%s instead, or keep a proxy in front that sets the header (identity.trusted_proxies).", h.Name, h.Value, claim, claim)
		}
		s.headers = append(s.headers, HeaderMatch{Name: h.Name, Value: h.Value})
	default:
		t.differs(where, "it selects %s by a %s: sluice matches a header's exact value; not imported.", h.Name, h.Type)
		return false, nil
	}
	return true, nil
}

// egMethods reads a selector's methods into s: alternatives become the
// rule's methods, one inverted method an except: entry.
func (t *Translation) egMethods(where string, s *egSelection, sel egSelector) bool {
	var methods []string
	inverted := false
	for _, m := range sel.Methods {
		if m.Value == "" || !validMethod(m.Value) {
			t.differs(where, "it selects the method %q, which is no method sluice's rules match; not imported.", m.Value)
			return false
		}
		methods = append(methods, m.Value)
		inverted = inverted || m.Invert
	}
	switch {
	case inverted && len(methods) == 1:
		s.except = append(s.except, RuleMatch{Methods: methods})
		return true
	case inverted:
		t.differs(where, "it selects requests by several methods, some inverted: Envoy Gateway counts a request any of them matches, which sluice's match and except cannot say; not imported.")
		return false
	case s.methods != nil:
		t.differs(where, "two of its clientSelectors name methods, which a request must both match: sluice's rule has one list of methods; not imported.")
		return false
	}
	s.methods = methods
	if slices.Contains(methods, http.MethodGet) {
		t.differs(where, "it selects GET requests; sluice's methods: [GET] also matches HEAD, which Envoy Gateway's :method match does not count: HEAD requests are counted here.")
	}
	return true
}

// validMethod reports whether m is an HTTP method token of letters.
func validMethod(m string) bool {
	for _, c := range m {
		if c < 'A' || c > 'Z' && c < 'a' || c > 'z' {
			return false
		}
	}
	return m != ""
}

// egSourceCIDR reads a sourceCIDR selector into s. Envoy Gateway compares
// the client's address, masked to the prefix's length in the prefix's
// family, with the prefix: 0.0.0.0/0 is every IPv4 client and no IPv6
// one, ::/0 the reverse. sluice's rules select no address family, so a
// rule over every address of one family counts the other's clients too,
// which the report says; a narrower prefix is not imported.
func (t *Translation) egSourceCIDR(where string, s *egSelection, typ, value string) (bool, error) {
	prefix, err := netip.ParsePrefix(value)
	if err != nil {
		return false, fmt.Errorf("sourceCIDR %q: %w", value, err)
	}
	if prefix.Bits() != 0 {
		t.differs(where, "it selects the clients of %s: sluice's rules select requests, not address ranges; not imported (exempt.addresses leaves a range unlimited).", value)
		return false, nil
	}
	family, other := "IPv4", "IPv6"
	if prefix.Addr().Is6() {
		family, other = "IPv6", "IPv4"
	}
	if typ == "Distinct" {
		s.key = append(s.key, "ip/32/128")
	}
	t.differs(where, "sourceCIDR %s selects %s clients only (Envoy Gateway compares the client's masked address with it, and an %s address never equals it): sluice's rules select no address family, so %s clients are limited by this rule too, which Envoy Gateway never limited. Keep the rule in shadow mode (shadow: true) while %s clients reach it, or accept the limit for them.", value, family, other, other, other)
	return true, nil
}

// egSelected returns the requests a local rule with clientSelectors
// takes from the route's default bucket, as one except: entry, or what
// keeps an entry from saying it.
func egSelected(r *egRule) (RuleMatch, string) {
	var m RuleMatch
	for _, sel := range r.ClientSelectors {
		for _, h := range sel.Headers {
			name := http.CanonicalHeaderKey(h.Name)
			switch {
			case h.Invert:
				return m, "an inverted header match"
			case h.Type == "Distinct":
				m.Headers = append(m.Headers, HeaderMatch{Name: name}) // present
			case (h.Type == "" || h.Type == "Exact") && h.Value != "" && printable(h.Value):
				m.Headers = append(m.Headers, HeaderMatch{Name: name, Value: h.Value})
			default:
				return m, "a header match by " + or(h.Type, "an empty value")
			}
		}
		if len(sel.Methods) > 0 && len(m.Methods) > 0 {
			return m, "methods in two selectors"
		}
		for _, x := range sel.Methods {
			if x.Invert {
				return m, "an inverted method match"
			}
			m.Methods = append(m.Methods, x.Value)
		}
		if p := sel.Path; p != nil {
			pats, ok := egPathPatterns(p.Type, p.Value)
			switch {
			case !ok || p.Invert || m.Paths != nil:
				return m, "its path match"
			case pats != nil:
				m.Paths = pats
			}
		}
		if len(sel.QueryParams) > 0 {
			return m, "a query parameter"
		}
		if sel.SourceCIDR != nil {
			return m, "the client's address (sourceCIDR)"
		}
	}
	if len(m.Headers)+len(m.Methods)+len(m.Paths) == 0 {
		return m, "no header, method or path"
	}
	return m, ""
}

// egMoreSpecific returns the patterns of the other matches of a route
// (matches[k], k != i) that lie below match i's: Envoy Gateway orders a
// route's matches most specific first (an exact path, then longer
// prefixes), so those requests are the other match's, not match i's.
func egMoreSpecific(matches [][]string, i int) []string {
	var out []string
	for k, m := range matches {
		if k == i {
			continue
		}
		for _, p := range belowAny(m, matches[i]) {
			if !slices.Contains(out, p) {
				out = append(out, p)
			}
		}
	}
	return out
}
