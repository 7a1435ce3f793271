package server

import (
	"slices"

	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/internal/routes"
)

// namesHost reports whether cfg decides anything by a request's host: a
// rule's hosts (of its match or its except) or its "host" key, or a
// pattern with a host among the plans' costs, the exemptions and the
// degradation classes. A forward-auth request without X-Forwarded-Host
// has no host, and every one of these then decides it as a request to no
// host.
func namesHost(cfg *config.Config) bool {
	for _, r := range cfg.Rules {
		hasHosts := func(m httplimit.Match) bool { return len(m.Hosts) > 0 }
		if slices.ContainsFunc(r.Alternatives(), hasHosts) || slices.ContainsFunc(r.Except, hasHosts) ||
			slices.Contains(r.Key, httplimit.KeyHost) {
			return true
		}
	}
	if cfg.Policy != nil {
		for _, p := range cfg.Policy.Plans {
			for pattern := range p.Costs {
				if patternHasHost(pattern) {
					return true
				}
			}
		}
	}
	d := &cfg.Degradation
	return slices.ContainsFunc(cfg.Exempt, patternHasHost) || slices.ContainsFunc(d.Expensive, patternHasHost) ||
		slices.ContainsFunc(d.Critical, patternHasHost) || slices.ContainsFunc(d.Health, patternHasHost)
}

// patternHasHost reports whether the ServeMux pattern p names a host.
func patternHasHost(p string) bool {
	i, j := routes.HostSpan(p)
	return i < j
}
