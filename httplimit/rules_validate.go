package httplimit

import (
	"fmt"
	"slices"
	"strings"

	"github.com/sluice-dev/sluice"
)

// rules checks Options.Rules (defaults applied): see Validate.
func (v *validator) rules(o *Options) {
	names := map[string]int{}
	plans := planNames(o)
	for i := range o.Rules {
		r := &o.Rules[i]
		field := fmt.Sprintf("Rules[%d]", i)
		if !sluice.ValidName(r.Name) {
			v.errorf(field+".Name", "rule name %q must be 1-64 characters of A-Z a-z 0-9 . _ -", r.Name)
		} else if j, dup := names[r.Name]; dup {
			v.errorf(field+".Name", "%q is already the name of Rules[%d]", r.Name, j)
		}
		names[r.Name] = i
		if len(r.Any) > 0 {
			if own := r.own(); len(own.Methods)+len(own.Paths)+len(own.ExceptPaths)+len(own.Hosts)+len(own.Headers) > 0 {
				v.errorf(field+".Any", "a rule matches by Any or by its own Methods, Paths, ExceptPaths, Hosts and Headers, not both")
			}
		}
		var paths [][]pathPattern
		pathsOK := true
		for k, mt := range r.Alternatives() {
			af := field
			if len(r.Any) > 0 {
				af = fmt.Sprintf("%s.Any[%d]", field, k)
			}
			ps, ok := v.ruleMatch(af, &mt)
			paths, pathsOK = append(paths, ps), pathsOK && ok
		}
		for k := range r.Except {
			v.ruleExcept(fmt.Sprintf("%s.Except[%d]", field, k), &r.Except[k])
		}
		v.rulePlans(field, r, plans)
		v.ruleKey(field, r, o, paths, pathsOK)
		v.oneOf(field+".HeaderFrom", r.HeaderFrom, HeaderFromTrusted, HeaderFromAny)
		v.oneOf(field+".Fallback", r.Fallback, FallbackIP, FallbackShared, FallbackSkip)
		v.ruleLimits(field, r, o)
	}
	v.ruleLimitNames(o)
	for i, p := range o.Plans {
		if p == nil {
			continue
		}
		n := len(p.Limits) + len(o.Global)
		for i := range o.Rules {
			if o.Rules[i].AppliesTo(p.Name) {
				n += len(o.Rules[i].Limits)
			}
		}
		if len(o.Rules) > 0 && n > sluice.MaxChecks {
			v.errorf("Rules", "plan %s: %d limits with the global ones and those of every rule that may apply to it, at most %d (Plans[%d])", p.Name, n, sluice.MaxChecks, i)
		}
	}
}

// ruleMatch checks one alternative of a rule, whose fields are named
// under field, returning the patterns of its Paths that parse; ok reports
// whether they all did.
func (v *validator) ruleMatch(field string, mt *Match) (paths []pathPattern, ok bool) {
	for j, m := range mt.Methods {
		if !validToken(m) {
			v.errorf(fmt.Sprintf("%s.Methods[%d]", field, j), "%q is not a method", m)
		}
	}
	for j, s := range mt.Paths {
		pp, err := parsePathPattern(s)
		if err != nil {
			v.errorf(fmt.Sprintf("%s.Paths[%d]", field, j), "%q: %w", s, err)
			continue
		}
		paths = append(paths, pp)
	}
	for j, s := range mt.ExceptPaths {
		if _, err := parsePathPattern(s); err != nil {
			v.errorf(fmt.Sprintf("%s.ExceptPaths[%d]", field, j), "%q: %w", s, err)
		}
	}
	for j, h := range mt.Hosts {
		// A name of labels: none empty, the root dot allowed at the end.
		name := strings.TrimSuffix(strings.TrimPrefix(h, "*."), ".")
		if name == "" || !validToken(name) || strings.Contains(name, "*") || strings.HasPrefix(name, ".") || strings.Contains(name, "..") {
			if host, port, ok := strings.Cut(h, ":"); ok && validToken(host) && port != "" && strings.Trim(port, "0123456789") == "" {
				v.errorf(fmt.Sprintf("%s.Hosts[%d]", field, j), "%q never matches: a request's host is matched without its port (write %q)", h, host)
				continue
			}
			v.errorf(fmt.Sprintf("%s.Hosts[%d]", field, j), "%q is not a host name or *.domain", h)
		}
	}
	for j, h := range mt.Headers {
		if !validToken(h.Name) {
			v.errorf(fmt.Sprintf("%s.Headers[%d].Name", field, j), "%q is not a header name", h.Name)
		}
		// A value is compared without the whitespace around it, so one
		// of whitespace alone would be "": the header with any value.
		if h.Value != "" && trimValue(h.Value) == "" {
			v.errorf(fmt.Sprintf("%s.Headers[%d].Value", field, j), "%q is whitespace alone, and a value is compared without the whitespace around it: give the value to match, or leave it out to match the header with any value", h.Value)
		}
	}
	return paths, len(paths) == len(mt.Paths)
}

// ruleExcept checks one entry of a rule's Except, named field: it names
// something to match, and no ExceptPaths.
func (v *validator) ruleExcept(field string, mt *Match) {
	if len(mt.Methods)+len(mt.Paths)+len(mt.Hosts)+len(mt.Headers) == 0 {
		v.errorf(field, "an entry of Except that names no method, path, host or header would leave out every request")
	}
	if len(mt.ExceptPaths) > 0 {
		v.errorf(field+".ExceptPaths", "an entry of Except has no ExceptPaths of its own: list what it leaves out by its own fields")
	}
	v.ruleMatch(field, mt)
}

// planNames returns the names of o's plans and of its keys' own plans,
// sorted.
func planNames(o *Options) []string {
	var names []string
	for _, p := range o.Plans {
		if p != nil {
			names = append(names, p.Name)
		}
	}
	for _, k := range o.Keys {
		if k.Plan != nil {
			names = append(names, k.Plan.Name)
		}
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// rulePlans checks that a rule's Plans name plans, each once.
func (v *validator) rulePlans(field string, r *Rule, plans []string) {
	for j, name := range r.Plans {
		pf := fmt.Sprintf("%s.Plans[%d]", field, j)
		switch {
		case !slices.Contains(plans, name):
			v.errorf(pf, "%q is not a plan (%s)", name, strings.Join(plans, ", "))
		case slices.Index(r.Plans, name) < j:
			v.errorf(pf, "%q twice", name)
		}
	}
}

// ruleKey checks a rule's Key, paths the patterns of each of its
// alternatives; pathsOK says whether every path parsed.
func (v *validator) ruleKey(field string, r *Rule, o *Options, paths [][]pathPattern, pathsOK bool) {
	if len(r.Key) > maxKeyParts {
		v.errorf(field+".Key", "%d attributes, at most %d", len(r.Key), maxKeyParts)
	}
	seen := map[string]bool{}
	for j, s := range r.Key {
		kf := fmt.Sprintf("%s.Key[%d]", field, j)
		if seen[s] {
			v.errorf(kf, "%q twice", s)
		}
		seen[s] = true
		if strings.HasPrefix(s, KeyPath) && !pathsOK {
			continue // a path's own error says why
		}
		if _, err := parseKeyPart(s, o, paths); err != nil {
			v.wrap(kf, err)
			continue
		}
		if strings.HasPrefix(s, KeyHeader) && r.HeaderFrom == HeaderFromTrusted && len(o.TrustedProxies) == 0 && !o.TrustUnixPeers {
			v.errorf(kf, "%q is believed only from trusted proxies and none are configured: set TrustedProxies (identity.trusted_proxies), TrustUnixPeers (a \"unix:\" entry there), or HeaderFrom (header_from) %q if clients may choose it", s, HeaderFromAny)
		}
	}
}

// ruleLimitNames checks that each rule's limit, named "<rule>.<limit>",
// takes neither the name of a plan's, a global or another rule's limit,
// which headers, problem bodies and Count would confuse it with, nor the ID
// of a plan's or another rule's limit (a rule's as ruleLimit gives it:
// "a" and "b.c" is "a.b" and "c"), whose state a rule keyed by the client
// would share: a request checking both would spend one state twice, which
// sluice.ValidateChecks refuses, and be served undecided.
func (v *validator) ruleLimitNames(o *Options) {
	names, ids := map[string]string{}, map[string]string{}
	for _, l := range o.Global {
		names[l.Name()] = "a global limit"
	}
	plans := slices.Clone(o.Plans)
	for _, k := range o.Keys {
		plans = append(plans, k.Plan)
	}
	for _, p := range plans {
		if p == nil {
			continue
		}
		for _, l := range p.Limits {
			if _, dup := names[l.Name()]; !dup {
				names[l.Name()] = "a limit of plan " + p.Name
			}
			if _, dup := ids[l.ID()]; !dup {
				ids[l.ID()] = "a limit of plan " + p.Name
			}
		}
	}
	for i := range o.Rules {
		r := &o.Rules[i]
		var own []sluice.Limit
		for j, l := range r.Limits {
			if l.Err() != nil {
				continue
			}
			lf := fmt.Sprintf("Rules[%d].Limits[%d]", i, j)
			q := ruleLimit(r.Name, l)
			if what, dup := names[q.Name()]; dup {
				v.errorf(lf, "%q is already the name of %s: a rule's limit is named by the rule's name, a dot and its own, and names identify limits in headers and problem bodies", q.Name(), what)
			} else if what, dup := ids[q.ID()]; dup {
				v.errorf(lf, "%q is already the ID of %s, whose state a rule keyed by the client would share", q.ID(), what)
			}
			own = append(own, q)
		}
		// Added once the rule's own are checked: two limits of one rule
		// are judged by limits, as those of one list.
		for _, q := range own {
			if _, dup := names[q.Name()]; !dup {
				names[q.Name()] = "a limit of rule " + r.Name
			}
			if _, dup := ids[q.ID()]; !dup {
				ids[q.ID()] = "a limit of rule " + r.Name
			}
		}
	}
}

// ruleLimits checks a rule's limits and cost.
func (v *validator) ruleLimits(field string, r *Rule, o *Options) {
	if len(r.Limits) == 0 {
		v.errorf(field+".Limits", "a rule needs at least one limit")
	}
	v.limits(field+".Limits", r.Limits)
	for j, l := range r.Limits {
		if l.Err() != nil {
			continue
		}
		lf := fmt.Sprintf("%s.Limits[%d]", field, j)
		if q := r.Name + "." + l.Name(); len(q) > 64 {
			v.errorf(lf, "%q, the rule's name, a dot and the limit's, is longer than 64 characters", q)
		}
		if r.Cost != nil {
			if c := *r.Cost; c > l.Burst() {
				v.errorf(field+".Cost", "%d, more than limit %s can ever hold (%d): the rule's requests could never be admitted", c, l.Name(), l.Burst())
			}
		}
	}
	if r.Cost != nil && *r.Cost < 0 {
		v.errorf(field+".Cost", "%d is out of range [0, %d]", *r.Cost, int64(sluice.MaxQuantity))
	}
}

// hidden checks HiddenLimits: each names a limit or a rule.
func (v *validator) hidden(o *Options) {
	known := map[string]bool{}
	for _, l := range o.Global {
		known[l.Name()] = true
	}
	for _, p := range o.Plans {
		if p != nil {
			for _, l := range p.Limits {
				known[l.Name()] = true
			}
		}
	}
	for _, k := range o.Keys {
		if k.Plan != nil {
			for _, l := range k.Plan.Limits {
				known[l.Name()] = true
			}
		}
	}
	for _, r := range o.Rules {
		known[r.Name] = true
		for _, l := range r.Limits {
			known[ruleLimit(r.Name, l).Name()] = true
		}
	}
	for i, name := range o.HiddenLimits {
		if !known[name] {
			v.errorf(fmt.Sprintf("HiddenLimits[%d]", i), "%q is neither a limit nor a rule", name)
		}
	}
}
