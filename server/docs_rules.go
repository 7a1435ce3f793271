package server

import (
	"slices"
	"strconv"
	"strings"

	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/httplimit"
)

// docsRule is a rule as /docs tells it: the requests it matches, what they
// are counted per, and its limits under their header names
// ("<rule>.<limit>").
type docsRule struct {
	Name, Requests, Per string
	// CostNote says what a request costs of the rule's limits when the rule
	// sets it to other than 1 ("(3 units each)"); empty when the rule
	// spends a request's cost (the plan's costs) or 1.
	CostNote string
	Limits   []docsLimit
}

// describeRules tells the rules of cfg that apply to clients of plan, in
// their order.
func describeRules(cfg *config.Config, plan string) []docsRule {
	var out []docsRule
	for _, r := range cfg.Rules {
		if !r.AppliesTo(plan) {
			continue
		}
		dr := docsRule{Name: r.Name, Requests: ruleRequests(r, func(h string) bool { return credentialHeader(cfg, h) }), Per: ruleKey(r, cfg.Identity.IPv6Prefix)}
		switch {
		case r.Cost == nil || *r.Cost == 1:
		case *r.Cost == 0:
			dr.CostNote = "(spends nothing: the limit only reports)"
		default:
			dr.CostNote = "(" + itoa(*r.Cost) + " units each)"
		}
		// A rule's requests cost their plan's costs unless it sets its own.
		units := r.Cost == nil && slices.ContainsFunc(cfg.Policy.Plans, countsUnits) || r.Cost != nil && *r.Cost > 1
		for _, l := range r.Limits {
			d := describeLimit(l, units)
			d.Name = r.Name + "." + l.Name()
			d.Hidden = slices.Contains(cfg.Response.Hide, r.Name) || slices.Contains(cfg.Response.Hide, d.Name)
			dr.Limits = append(dr.Limits, d)
		}
		out = append(out, dr)
	}
	return out
}

// credentialHeader reports whether the header name carries what identifies
// a client or vouches for it, whose value /docs never tells: an API key or
// token header of cfg, Authorization, Proxy-Authorization, Cookie, or the
// user or plan header a trusted layer sets.
func credentialHeader(cfg *config.Config, name string) bool {
	id := &cfg.Identity
	for _, h := range slices.Concat(id.APIKeyHeaders, id.TokenHeaders,
		[]string{id.UserHeader, id.PlanHeader, "Authorization", "Proxy-Authorization", "Cookie"}) {
		if h != "" && strings.EqualFold(h, name) {
			return true
		}
	}
	return false
}

// ruleRequests says which requests r matches: "POST, PUT /v1/uploads on
// api.example.com with X-Tenant", each alternative of its Any so, joined by
// "or", then what its Except leaves out: "except OPTIONS or /health on
// b.example". The value a header must have is told but for a header
// secret reports true: "with a particular X-API-Key".
func ruleRequests(r httplimit.Rule, secret func(header string) bool) string {
	var alts, except []string
	for _, m := range r.Alternatives() {
		alts = append(alts, matchRequests(m, secret, true))
	}
	for _, m := range r.Except {
		except = append(except, matchRequests(m, secret, false))
	}
	s := strings.Join(alts, " or ")
	if len(except) > 0 {
		s += ", except " + strings.Join(except, " or ")
	}
	return s
}

// matchRequests is ruleRequests of one alternative, or, placeholders
// false, of an entry of Except, which names no method or path it lacks.
func matchRequests(r httplimit.Match, secret func(header string) bool, placeholders bool) string {
	var parts []string
	switch {
	case len(r.Methods) > 0:
		parts = append(parts, strings.Join(r.Methods, ", "))
	case placeholders:
		parts = append(parts, "any method")
	}
	switch {
	case len(r.Paths) > 0:
		parts = append(parts, strings.Join(r.Paths, ", "))
	case placeholders:
		parts = append(parts, "any path")
	}
	if len(r.ExceptPaths) > 0 {
		parts = append(parts, "except "+strings.Join(r.ExceptPaths, ", "))
	}
	if len(r.Hosts) > 0 {
		parts = append(parts, "on "+strings.Join(r.Hosts, ", "))
	}
	for _, h := range r.Headers {
		switch {
		case h.Value == "":
			parts = append(parts, "with "+h.Name)
		case secret(h.Name):
			parts = append(parts, "with a particular "+h.Name)
		default:
			parts = append(parts, "with "+h.Name+": "+h.Value)
		}
	}
	return strings.Join(parts, " ")
}

// ruleKey says what r's requests are counted per, and so whom a count is
// shared with: the addresses an "ip/N" key counts together (IPv6 ones per
// ipv6Prefix unless it says "ip/N/M"), and, where an attribute of the key
// may be absent, whom the requests without it share a count with: each
// address its own (FallbackIP) or all of them one (FallbackShared). Under
// FallbackSkip such requests are counted by no one: the page, which never
// tells what escapes a limit, says nothing of them.
func ruleKey(r httplimit.Rule, ipv6Prefix int) string {
	key := r.Key
	if len(key) == 0 {
		key = []string{httplimit.KeyClient}
	}
	per := keyParts(r, key, ipv6Prefix)
	if r.Fallback == httplimit.FallbackSkip || !slices.ContainsFunc(key, func(k string) bool { return mayBeAbsent(r, k) }) {
		return per
	}
	if r.Fallback == httplimit.FallbackShared {
		return per + "; requests without it: all of them together, one count"
	}
	return per + "; requests without it: per client address"
}

// keyParts names the attributes of key, r's, joined: what r's requests
// are counted per where each has a value.
func keyParts(r httplimit.Rule, key []string, ipv6Prefix int) string {
	var parts []string
	for _, k := range key {
		switch {
		case k == httplimit.KeyClient:
			parts = append(parts, "client (API key, user or address)")
		case k == httplimit.KeyAPIKey:
			parts = append(parts, "API key")
		case k == httplimit.KeyUser:
			parts = append(parts, "user")
		case k == httplimit.KeyIP:
			parts = append(parts, "client address")
		case strings.HasPrefix(k, httplimit.KeyIP+"/"):
			parts = append(parts, addressGroups(strings.TrimPrefix(k, httplimit.KeyIP+"/"), ipv6Prefix))
		case k == httplimit.KeyHost:
			parts = append(parts, "host")
		case k == httplimit.KeyRoute:
			parts = append(parts, "route")
		case k == httplimit.KeyRule:
		case strings.HasPrefix(k, httplimit.KeyHeader):
			parts = append(parts, "value of "+strings.TrimPrefix(k, httplimit.KeyHeader))
		case strings.HasPrefix(k, httplimit.KeyPath):
			parts = append(parts, "{"+strings.TrimPrefix(k, httplimit.KeyPath)+"} of the path")
		case k == httplimit.KeyURLPath:
			parts = append(parts, "path")
		case strings.HasPrefix(k, httplimit.KeyQuery):
			parts = append(parts, "query parameter "+strings.TrimPrefix(k, httplimit.KeyQuery))
		case strings.HasPrefix(k, httplimit.KeyCookie):
			parts = append(parts, "cookie "+strings.TrimPrefix(k, httplimit.KeyCookie))
		case strings.HasPrefix(k, httplimit.KeyForm):
			parts = append(parts, "form field "+strings.TrimPrefix(k, httplimit.KeyForm)+" of the request")
		case strings.HasPrefix(k, httplimit.KeyJSON):
			parts = append(parts, "JSON field "+strings.TrimPrefix(k, httplimit.KeyJSON)+" of the request")
		case strings.HasPrefix(k, httplimit.KeyClaim):
			parts = append(parts, "claim "+strings.TrimPrefix(k, httplimit.KeyClaim)+" of your access token")
		default:
			parts = append(parts, k)
		}
	}
	switch strings.Join(parts, " and ") {
	case "":
		return "all clients together"
	case "route":
		paths := 0
		for _, m := range r.Alternatives() {
			paths += len(m.Paths)
		}
		if paths > 1 {
			return "all clients together, each route apart"
		}
		return "all clients together"
	}
	return strings.Join(parts, " and ")
}

// addressGroups tells the addresses a key "ip/<prefixes>" counts together:
// prefixes is "N" (IPv6 per ipv6Prefix) or "N/M", as httplimit accepts it.
func addressGroups(prefixes string, ipv6Prefix int) string {
	v4, v6, two := strings.Cut(prefixes, "/")
	if !two {
		v6 = strconv.Itoa(ipv6Prefix)
	}
	n, _ := strconv.Atoi(v4) // httplimit took it: 1 to 32
	if n >= 32 {
		return "client address (IPv4 per /" + v4 + ", IPv6 per /" + v6 + ")"
	}
	return "client address (IPv4 per /" + v4 + ": " + thousands(int64(1)<<(32-n)) + " addresses together; IPv6 per /" + v6 + ")"
}

// mayBeAbsent reports whether a request may lack a value of the key
// attribute k of r, which r's Fallback then stands for: a credential it
// does not carry, a header, query parameter, cookie, body field or claim
// it does not send, a "{name...}" wildcard of r's paths that matches
// nothing. The client, its address, the host, the path, the route and the
// rule itself are always there.
func mayBeAbsent(r httplimit.Rule, k string) bool {
	switch {
	case k == httplimit.KeyAPIKey, k == httplimit.KeyUser:
		return true
	case strings.HasPrefix(k, httplimit.KeyPath):
		wild := "{" + strings.TrimPrefix(k, httplimit.KeyPath) + "...}"
		return slices.ContainsFunc(r.Alternatives(), func(m httplimit.Match) bool {
			return slices.ContainsFunc(m.Paths, func(p string) bool { return strings.Contains(p, wild) })
		})
	}
	for _, prefix := range []string{httplimit.KeyHeader, httplimit.KeyQuery, httplimit.KeyCookie, httplimit.KeyForm, httplimit.KeyJSON, httplimit.KeyClaim} {
		if strings.HasPrefix(k, prefix) {
			return true
		}
	}
	return false
}
