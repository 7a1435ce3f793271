package config

import (
	"fmt"
	"slices"

	"github.com/sluice-dev/sluice/internal/routes"
)

// HostWarning returns what the server logs, and sluice check prints, of a
// reverse proxy that sends its upstream the upstream URL's host
// (preserve_host false, the default) while c matches requests by the Host
// they name: a rule's or an exception's hosts, or an exempt route or a
// plan's endpoint cost with a host. The client chooses the Host it sends
// and the upstream, which never sees it, answers alike whatever it was, so
// a client picks the rule, cost or exemption it falls under: with an
// exempt route "status.example.com/", any request sent with that Host is
// exempt. It names the first such place, and is "" when there is none,
// when preserve_host is true (the upstream reads the Host sluice judged),
// or without an upstream (the decision API and forward-auth judge the
// host the front proxy reports, which routes by it).
func (c *Config) HostWarning() string {
	if c.Upstream == "" || c.PreserveHost {
		return ""
	}
	at := c.firstHostMatch()
	if at == "" {
		return ""
	}
	return fmt.Sprintf("%s matches requests by the Host they name, but the proxy sends its upstream the upstream URL's host (preserve_host: false): "+
		"a client sends whatever Host picks the rule or exemption it wants, and the upstream answers alike; "+
		"set preserve_host: true for an upstream that tells hosts apart, or match by path", at)
}

// firstHostMatch returns where c first matches a request by its Host (see
// HostWarning), or "".
func (c *Config) firstHostMatch() string {
	for _, r := range c.Rules {
		for _, m := range r.Alternatives() {
			if len(m.Hosts) > 0 {
				return fmt.Sprintf("rule %q", r.Name)
			}
		}
		for _, m := range r.Except {
			if len(m.Hosts) > 0 {
				return fmt.Sprintf("rule %q's except", r.Name)
			}
		}
	}
	for _, e := range c.Exempt {
		if _, host, _ := patternParts(routes.LowerHost(e)); host != "" {
			return fmt.Sprintf("exempt route %q", e)
		}
	}
	if c.Policy == nil {
		return ""
	}
	for _, pl := range c.Policy.Plans {
		eps := make([]string, 0, len(pl.Costs))
		for ep := range pl.Costs {
			eps = append(eps, ep)
		}
		slices.Sort(eps)
		for _, ep := range eps {
			if _, host, _ := patternParts(routes.LowerHost(ep)); host != "" {
				return fmt.Sprintf("plan %q's cost of %q", pl.Name, ep)
			}
		}
	}
	return ""
}
