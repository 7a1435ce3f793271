package config

import (
	"cmp"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/internal/routes"
)

// ruleCostsHeld refuses a rule without cost: whose limit holds less than a
// plan's cost of a route the rule matches, or admits less at once while
// the store leases it (see leaseHold). Such a rule charges its limits
// what the request costs (see httplimit.Rule's Cost), and a cost above a
// limit's burst (a leased bucket's shared burst) is never admitted, so
// those requests would all be refused.
// A route is judged by one request of it per alternative of the rule (its
// wildcards filled in, its method and host, or the alternative's when it
// has none, and the alternative's headers): a rule that matches that
// request certainly matches the route's requests, and one that matches
// none of them, or leaves it out by Except, is left alone.
func (d *decoder) ruleCostsHeld(c *Config, raw *rawConfig) {
rules:
	for i, r := range c.Rules {
		loc, ok := raw.locs[fmt.Sprintf("Rules[%d].Limits", i)]
		if r.Cost != nil || !ok || raw.isPartial(fmt.Sprintf("Rules[%d].Limits", i)) {
			continue
		}
		for _, rp := range raw.plans {
			if len(r.Plans) > 0 && !slices.Contains(r.Plans, rp.plan.Name) {
				continue
			}
			for _, ep := range slices.Sorted(maps.Keys(rp.plan.Costs)) {
				cost := rp.plan.Costs[ep]
				l, found := belowCost(r, cost)
				h, leasedOut := leaseHold{}, false
				if !found {
					h, leasedOut = c.Store.refusedBy(cost, r.Name+".", r.Limits)
				}
				if !found && !leasedOut || checkPattern(ep) != nil || !slices.ContainsFunc(r.Alternatives(), func(m httplimit.Match) bool {
					req := sampleRequest(m, ep)
					return ruleMatches(m, req) && !slices.ContainsFunc(r.Except, func(e httplimit.Match) bool { return exceptTakes(e, req) })
				}) {
					continue
				}
				line := 0
				if n := rp.costNodes[ep]; n != nil {
					line = n.Line
				}
				if leasedOut {
					d.Errorf(loc.node, loc.path, "%q costs %d on plan %s (%s.costs, line %d), which the rule charges as it sets no cost, %s",
						ep, cost, rp.plan.Name, rp.path, line, h.why(cost, "give the rule a cost:"))
					continue rules
				}
				d.Errorf(loc.node, loc.path, "limit %s holds %d, less than the %d that %q costs on plan %s (%s.costs, line %d), "+
					"which the rule charges as it sets no cost: such requests could never be admitted "+
					"(give the rule a cost:, or the limit a burst of at least %d)",
					l.Name(), l.Burst(), cost, ep, rp.plan.Name, rp.path, line, cost)
				continue rules
			}
		}
	}
}

// belowCost returns the first valid limit of r that holds less than cost.
func belowCost(r httplimit.Rule, cost int64) (sluice.Limit, bool) {
	for _, l := range r.Limits {
		if l.Err() == nil && cost > l.Burst() {
			return l, true
		}
	}
	return sluice.Limit{}, false
}

// sampleRequest returns a request of the ServeMux pattern ep that r, a
// rule's alternative, could match: its wildcards filled with "x", its
// method or else r's first, its host or else r's first (a wildcard's as a
// name under it), r's headers set.
func sampleRequest(r httplimit.Match, ep string) *http.Request {
	method, host, path := patternParts(routes.LowerHost(ep))
	if method == "" {
		method = http.MethodPost
		if len(r.Methods) > 0 {
			method = r.Methods[0]
		}
	}
	if host == "" {
		host = "example.com"
		if len(r.Hosts) > 0 {
			host = strings.Replace(strings.TrimSuffix(routes.LowerHost(r.Hosts[0]), "."), "*", "x", 1)
		}
	}
	var segs []string
	for _, s := range strings.Split(path, "/") {
		switch {
		case s == "{$}":
			s = ""
		case strings.HasPrefix(s, "{") && strings.HasSuffix(s, "}"):
			s = "x"
		}
		segs = append(segs, s)
	}
	req := httptest.NewRequest(method, "http://"+host+strings.Join(segs, "/"), nil)
	for _, h := range r.Headers {
		req.Header.Set(h.Name, cmp.Or(h.Value, "1"))
	}
	return req
}

// handlesWith registers h for pattern in mux, reporting false if mux
// refuses the pattern (see handles).
func handlesWith(mux *http.ServeMux, pattern string, h http.Handler) (ok bool) {
	defer func() { ok = recover() == nil }()
	mux.Handle(pattern, h)
	return true
}

// ruleMatches reports whether r, a rule's alternative, matches req by its
// methods (GET matching HEAD), hosts, paths and except_paths, as ServeMux
// patterns; its headers are the caller's to have set.
func ruleMatches(r httplimit.Match, req *http.Request) bool {
	if len(r.Methods) > 0 && !slices.ContainsFunc(r.Methods, func(m string) bool {
		return strings.EqualFold(m, req.Method) || m == http.MethodGet && req.Method == http.MethodHead
	}) {
		return false
	}
	if len(r.Hosts) > 0 && !slices.ContainsFunc(r.Hosts, func(h string) bool {
		h = strings.TrimSuffix(routes.LowerHost(h), ".")
		if suffix, ok := strings.CutPrefix(h, "*."); ok {
			return strings.HasSuffix(req.Host, "."+suffix)
		}
		return h == req.Host
	}) {
		return false
	}
	if len(r.Paths) > 0 && !slices.ContainsFunc(r.Paths, func(p string) bool { return pathMatches(p, req) }) {
		return false
	}
	return !slices.ContainsFunc(r.ExceptPaths, func(p string) bool { return pathMatches(p, req) })
}

// exceptTakes reports whether e, an entry of a rule's Except, leaves out
// req, a request of sampleRequest (which carries no header of e's: an
// entry with headers takes none).
func exceptTakes(e httplimit.Match, req *http.Request) bool {
	return len(e.Headers) == 0 && ruleMatches(e, req)
}

// marker is the handler pathMatches registers, to tell ServeMux's match
// from its redirect.
type marker struct{ http.Handler }

// pathMatches reports whether the ServeMux path pattern p matches req's
// path.
func pathMatches(p string, req *http.Request) bool {
	mux, m := http.NewServeMux(), &marker{http.NotFoundHandler()}
	if !handlesWith(mux, p, m) {
		return false
	}
	h, _ := mux.Handler(req)
	got, ok := h.(*marker)
	return ok && got == m
}
