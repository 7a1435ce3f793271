package migrate

import (
	"slices"
	"strings"
)

// kongExceptBound bounds the except entries the import gives one rule. An
// entry is a set of hosts and methods with the paths of every route it
// leaves out on them (or a set of paths and methods with the hosts of
// every route of them), so a rule has about as many as the distinct hosts
// and methods of the narrower routes it meets; past the bound the routes
// are left in the rule, and reported, as where no entry can say them.
const kongExceptBound = 32

// kongExcept leaves out of rule r the requests on patterns of hosts and
// methods (nil: any) by an except entry, which Kong's router gives another
// route: one of more priority points than r's alternative alt (-1: r's own
// match, of patterns own) when outranks, else of a longer path. It
// reports whether it could, exactly: not where
//   - a host is a wildcard (Kong prefers a plain host to it, which an
//     entry does not say);
//   - outranks is false and a pattern of own lies below one of patterns
//     (the longer path of r's own route keeps its requests);
//   - another alternative of r may match the same requests (except: leaves
//     them out whichever alternative matched, and that alternative's
//     routes may outrank the other route);
//   - r has kongExceptBound entries already, none of these hosts and
//     methods.
//
// An entry of the same hosts and methods as one r has takes the patterns
// into its paths; one of the same paths and methods, the hosts into its
// hosts.
func (r *Rule) kongExcept(alt int, patterns, hosts, methods, own []string, outranks bool) bool {
	if len(patterns) == 0 || slices.ContainsFunc(hosts, func(h string) bool { return strings.HasPrefix(h, "*.") }) {
		return false
	}
	if !outranks && slices.ContainsFunc(patterns, func(q string) bool {
		return slices.ContainsFunc(own, func(p string) bool { return below(p, q) })
	}) {
		return false
	}
	for k, a := range r.Any {
		if k == alt || disjoint(hosts, methods, a.Hosts, a.Methods) || len(a.Paths) > 0 && len(overlapping(patterns, a.Paths)) == 0 {
			continue
		}
		return false
	}
	for i := range r.Except {
		e := &r.Except[i]
		if len(e.Headers) > 0 || !sameSet(e.Methods, methods) {
			continue
		}
		switch {
		case sameSet(e.Hosts, hosts):
			for _, q := range patterns {
				if !slices.Contains(e.Paths, q) {
					e.Paths = append(e.Paths, q)
				}
			}
			return true
		case len(e.Hosts) > 0 && len(hosts) > 0 && sameSet(e.Paths, patterns):
			for _, h := range hosts {
				if !slices.Contains(e.Hosts, h) {
					e.Hosts = append(e.Hosts, h)
				}
			}
			return true
		}
	}
	if len(r.Except) >= kongExceptBound {
		return false
	}
	r.Except = append(r.Except, RuleMatch{Paths: slices.Clone(patterns), Hosts: slices.Clone(hosts), Methods: slices.Clone(methods)})
	return true
}

// kongPlain reports whether what a rule matches of route r
// (kongRouteMatch) is all it matches: hosts by name without a port, valid
// methods, no headers (Kong matches their values in any case, a rule's
// header match in one).
func kongPlain(r kongRoute) bool {
	return len(r.Headers) == 0 &&
		!slices.ContainsFunc(r.Hosts, func(h string) bool { return !validHostName(strings.ToLower(h)) || strings.HasSuffix(h, ".") }) &&
		!slices.ContainsFunc(r.Methods, func(m string) bool { return !validHeaderName(m) })
}
