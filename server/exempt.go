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
// ExemptUser, ExemptPlan, ExemptAddress), and the entry of cfg's exempt
// section that makes it so ("exempt.keys: monitoring"); or "", "" when
// some of its requests may be decided. subject is as mw (built from cfg)
// returns it from Subject. The clients it covers are those whose identity
// alone makes them exempt:
//
//   - a listed API key ("key:<sha256 hex>") named in exempt.keys, or whose
//     plan is in exempt.plans;
//   - a user ("user:…", "user#…") of exempt.users;
//   - an address group ("ip:…") inside an exempt.addresses prefix, unless
//     it holds a trusted proxy's address: a client such a proxy reports as
//     an unreadable hop is limited as the proxy, never exempt by it.
//
// A client whose plan a request chooses (identity.plan_header, a token, a
// decision API caller's plan) is not covered by its default plan's
// exemption: requests on another plan are decided.
func exemptionOf(cfg *config.Config, mw *httplimit.Middleware, subject string) (reason, entry string) {
	kind, rest, _ := strings.Cut(subject, ":")
	switch {
	case kind == "key":
		var sum [sha256.Size]byte
		if n, err := hex.Decode(sum[:], []byte(rest)); err != nil || n != len(sum) {
			return "", ""
		}
		k, ok := cfg.Keys[sum]
		switch {
		case !ok:
		case slices.Contains(cfg.ExemptKeys, k.Name):
			return httplimit.ExemptKey, "exempt.keys: " + k.Name
		case k.Plan != nil && slices.Contains(cfg.ExemptPlans, k.Plan.Name):
			return httplimit.ExemptPlan, "exempt.plans: " + k.Plan.Name
		}
	case kind == "user" || strings.HasPrefix(subject, "user#"):
		for _, u := range cfg.ExemptUsers {
			if mw.UserSubject(u) == subject {
				return httplimit.ExemptUser, "exempt.users: " + u
			}
		}
	case kind == "ip":
		group, err := netip.ParsePrefix(rest)
		if err != nil {
			a, err := netip.ParseAddr(rest)
			if err != nil {
				return "", "" // ip:unknown
			}
			group = netip.PrefixFrom(a, a.BitLen())
		}
		for _, p := range cfg.Identity.TrustedProxies {
			if unmappedPrefix(p).Overlaps(group) {
				return "", ""
			}
		}
		for _, p := range cfg.ExemptAddresses {
			if q := unmappedPrefix(p); q.Bits() <= group.Bits() && q.Contains(group.Addr()) {
				return httplimit.ExemptAddress, "exempt.addresses: " + p.String()
			}
		}
	}
	return "", ""
}

// unmappedPrefix returns p with its host bits zero, an IPv4-mapped prefix
// of /96 or longer as its IPv4 prefix, as httplimit matches addresses.
func unmappedPrefix(p netip.Prefix) netip.Prefix {
	if a := p.Addr(); a.Is4In6() && p.Bits() >= 96 {
		p = netip.PrefixFrom(a.Unmap(), p.Bits()-96)
	}
	return p.Masked()
}
