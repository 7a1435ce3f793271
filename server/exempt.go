package server

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/netip"
	"slices"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/httplimit"
)

// exemptCounters count exempt requests by why they are exempt:
// sluice_exempt_requests_total{reason}. Exempt requests are never decided,
// so sluice_decisions_total never sees them.
type exemptCounters map[string]prometheus.Counter

func newExemptCounters(reg prometheus.Registerer) exemptCounters {
	vec := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "sluice_exempt_requests_total",
		Help: "Requests no limit applied to, never counted against any quota, by reason: route, address, key, user, plan.",
	}, []string{"reason"})
	reg.MustRegister(vec)
	c := exemptCounters{}
	for _, r := range []string{httplimit.ExemptRoute, httplimit.ExemptAddress, httplimit.ExemptKey, httplimit.ExemptUser, httplimit.ExemptPlan} {
		c[r] = vec.WithLabelValues(r)
	}
	return c
}

// count is the middleware's OnExempt.
func (c exemptCounters) count(_ *http.Request, reason string) {
	if ctr := c[reason]; ctr != nil {
		ctr.Inc()
	}
}

// exemptionOf returns why every request of subject's client is exempt
// under cfg, as sluice_exempt_requests_total counts it (httplimit.ExemptKey,
// ExemptUser, ExemptAddress, ExemptPlan), and the entry of cfg's exempt
// section that makes it so ("exempt.keys: monitoring"); or "", "" when
// some of its requests may be decided. subject is as mw (built from cfg)
// returns it from Subject; plan, when not empty, names the plan the
// question is asked of (the key admin API's ?plan=P): requests decided on
// it. The clients it covers are those whose identity alone makes them
// exempt:
//
//   - a listed API key ("key:<sha256 hex>") named in exempt.keys;
//   - a user ("user:…", "user#…") of exempt.users;
//   - an address group ("ip:…") inside an exempt.addresses prefix, unless
//     it holds a trusted proxy's address: a client such a proxy reports as
//     an unreadable hop is limited as the proxy, never exempt by it;
//   - any client whose requests are all decided on plans of exempt.plans
//     (see plansOf): a listed key of such a plan, a user on such a
//     default plan, an address group on such an anonymous plan, while no
//     request can choose another plan.
func exemptionOf(cfg *config.Config, mw *httplimit.Middleware, subject, plan string) (reason, entry string) {
	kind, rest, _ := strings.Cut(subject, ":")
	switch {
	case kind == "key":
		if k := listedKey(cfg, rest); k != nil && slices.Contains(cfg.ExemptKeys, k.Name) {
			return httplimit.ExemptKey, "exempt.keys: " + k.Name
		}
	case kind == "user" || strings.HasPrefix(subject, "user#"):
		for _, u := range cfg.ExemptUsers {
			if mw.UserSubject(u) == subject {
				return httplimit.ExemptUser, "exempt.users: " + u
			}
		}
	case kind == "ip":
		if p := exemptAddressOf(cfg, rest); p != "" {
			return httplimit.ExemptAddress, "exempt.addresses: " + p
		}
	}
	plans, anyPlan := plansOf(cfg, subject)
	if len(plans) == 0 && !anyPlan {
		return "", "" // no client's subject
	}
	if plan != "" {
		plans, anyPlan = []string{plan}, false
	}
	if anyPlan {
		return "", ""
	}
	for _, p := range plans {
		if !slices.Contains(cfg.ExemptPlans, p) {
			return "", ""
		}
	}
	return httplimit.ExemptPlan, "exempt.plans: " + strings.Join(plans, ", ")
}

// plansOf answers which plans the requests of subject's client (as
// exemptionOf takes it) can be decided on under cfg: the names of those
// plans, or nil and anyPlan true when some request can choose its plan,
// so that it may be decided on any. A request chooses its plan
//
//   - by the decision API's "plan", whatever its client, when a caller
//     (or loopback's scopes) holds both the check and override_plan scopes;
//   - by identity.plan_header, believed from trusted proxies, for every
//     client but a listed API key: an address group, a user of
//     identity.user_header or of a token that names no plan, an unlisted
//     key under identity.unknown_keys: key;
//   - by a token's plan claim (identity.jwt's plan_claim), for the users
//     of that issuer's tokens.
//
// Otherwise a listed key is decided on its plan; a user on the plan of
// each issuer (identity.jwt's plan) whose tokens can name it, and on the
// default plan when a believed identity.user_header, a decision API
// caller (one holding check: its "user") or a token naming no plan can
// name it; an address group on the anonymous plan; an unlisted key
// and a decision API client ("ext:…") on the default plan. Any other
// subject (a rule's key, the global one) is no client's: nil, false.
func plansOf(cfg *config.Config, subject string) (plans []string, anyPlan bool) {
	if holdsScope(cfg, config.ScopeCheck|config.ScopeOverridePlan) {
		return nil, true
	}
	id, pol := &cfg.Identity, cfg.Policy
	planHeader := id.PlanHeader != "" && (len(id.TrustedProxies) > 0 || id.TrustUnixPeers)
	kind, rest, _ := strings.Cut(subject, ":")
	switch {
	case kind == "key":
		if k := listedKey(cfg, rest); k != nil {
			if k.Plan == nil {
				return nil, false
			}
			return []string{k.Plan.Name}, false
		}
		if planHeader && id.UnknownKeys == "key" {
			return nil, true
		}
		return []string{pol.DefaultPlan}, false
	case kind == "user" || strings.HasPrefix(subject, "user#"):
		// The default plan's users are those a believed user header, a
		// decision API caller's "user" or a token naming no plan names.
		trusted := len(id.TrustedProxies) > 0 || id.TrustUnixPeers
		headed := id.UserHeader != "" && trusted
		byDefault := headed || holdsScope(cfg, config.ScopeCheck)
		var plans []string
		for _, j := range id.JWT {
			// A token's user is the issuer's prefix and the token's
			// subject: "user:<id>" names no user of an issuer whose
			// prefix <id> lacks; a hashed id may be anyone's.
			switch {
			case kind == "user" && !strings.HasPrefix(rest, j.SubjectPrefix):
			case j.PlanClaim != "":
				return nil, true
			case j.Plan != "":
				if !slices.Contains(plans, j.Plan) {
					plans = append(plans, j.Plan)
				}
			default:
				headed, byDefault = true, true // a token that names no plan
			}
		}
		if planHeader && headed {
			return nil, true
		}
		if byDefault && !slices.Contains(plans, pol.DefaultPlan) {
			plans = append([]string{pol.DefaultPlan}, plans...)
		}
		return plans, false
	case kind == "ip":
		if planHeader {
			return nil, true
		}
		return []string{pol.AnonymousPlan}, false
	case kind == "ext":
		return []string{pol.DefaultPlan}, false
	}
	return nil, false
}

// holdsScope reports whether a caller of cfg, or loopback's scopes, holds
// every scope of need: check and override_plan let a decision API caller
// send a "plan", check alone a "user".
func holdsScope(cfg *config.Config, need config.Scopes) bool {
	return cfg.Admin.LoopbackScopes.Has(need) || slices.ContainsFunc(cfg.Admin.Callers, func(c config.Caller) bool { return c.Scopes.Has(need) })
}

// listedKey returns the key of cfg whose SHA-256 is sum, 64 hex digits,
// or nil when none is listed.
func listedKey(cfg *config.Config, sum string) *config.Key {
	var h [sha256.Size]byte
	if n, err := hex.Decode(h[:], []byte(sum)); err != nil || n != len(h) {
		return nil
	}
	return cfg.Keys[h]
}

// exemptAddressOf returns the exempt.addresses prefix, as written, that
// holds the address group group ("192.0.2.0/24", an address, or
// "unknown"), or "" when none does or the group holds a trusted proxy's
// address.
func exemptAddressOf(cfg *config.Config, group string) string {
	g, err := netip.ParsePrefix(group)
	if err != nil {
		a, err := netip.ParseAddr(group)
		if err != nil {
			return "" // ip:unknown
		}
		g = netip.PrefixFrom(a, a.BitLen())
	}
	for _, p := range cfg.Identity.TrustedProxies {
		if unmappedPrefix(p).Overlaps(g) {
			return ""
		}
	}
	for _, p := range cfg.ExemptAddresses {
		if q := unmappedPrefix(p); q.Bits() <= g.Bits() && q.Contains(g.Addr()) {
			return p.String()
		}
	}
	return ""
}

// unmappedPrefix returns p with its host bits zero, an IPv4-mapped prefix
// of /96 or longer as its IPv4 prefix, as httplimit matches addresses.
func unmappedPrefix(p netip.Prefix) netip.Prefix {
	if a := p.Addr(); a.Is4In6() && p.Bits() >= 96 {
		p = netip.PrefixFrom(a.Unmap(), p.Bits()-96)
	}
	return p.Masked()
}
