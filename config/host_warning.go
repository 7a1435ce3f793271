package config

import (
	"fmt"
	"slices"

	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/internal/routes"
)

// HostWarning returns what the server logs, and sluice check prints, of a
// reverse proxy that sends its upstream the upstream URL's host
// (preserve_host false, the default) while c judges requests by the Host
// they name: a rule's or an exception's hosts, a rule keyed by "host", or
// an exempt route, a degradation class or a plan's endpoint cost with a
// host. The client chooses the Host it sends and the upstream, which never
// sees it, answers alike whatever it was, so a client picks the rule,
// cost, exemption or class it falls under: with an exempt route
// "status.example.com/", any request sent with that Host is exempt; with
// a health class of that host, never shed. Under a "host" key each Host
// it makes up is a count of its own: a fresh quota at every request. It
// names the first such place, and is "" when there is none, when
// preserve_host is true (the upstream reads the Host sluice judged), or
// without an upstream (the decision API and forward-auth judge the host
// the front proxy reports, which routes by it).
func (c *Config) HostWarning() string {
	if c.Upstream == "" || c.PreserveHost {
		return ""
	}
	at := c.firstHostMatch()
	if at == "" {
		return ""
	}
	return fmt.Sprintf("%s matches requests by the Host they name, but the proxy sends its upstream the upstream URL's host (preserve_host: false): "+
		"a client sends whatever Host picks the rule, cost, exemption or degradation class it wants (or, under a host key, a count of its own), and the upstream answers alike; "+
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
		if slices.Contains(r.Key, httplimit.KeyHost) {
			return fmt.Sprintf("rule %q's host key", r.Name)
		}
	}
	for _, e := range c.Exempt {
		if hasHost(e) {
			return fmt.Sprintf("exempt route %q", e)
		}
	}
	for _, class := range []struct {
		name     string
		patterns []string
	}{{"health", c.Degradation.Health}, {"critical", c.Degradation.Critical}, {"expensive", c.Degradation.Expensive}} {
		for _, p := range class.patterns {
			if hasHost(p) {
				return fmt.Sprintf("degradation class %s %q", class.name, p)
			}
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
			if hasHost(ep) {
				return fmt.Sprintf("plan %q's cost of %q", pl.Name, ep)
			}
		}
	}
	return ""
}

// hasHost reports whether the ServeMux pattern p names a host.
func hasHost(p string) bool {
	_, host, _ := patternParts(routes.LowerHost(p))
	return host != ""
}
