package config

import (
	"fmt"
	"net/netip"

	"go.yaml.in/yaml/v3"
)

// exempt reads the exempt section: a list of routes, or a mapping of
// routes, addresses, keys and users; httplimit's Validate judges them.
//
//	exempt: ["GET /healthz"]
//	exempt:
//	  routes: ["GET /healthz"]
//	  addresses: [10.1.0.0/16, 192.0.2.7]   # client addresses, through trusted proxies
//	  keys: [monitoring]                    # names of keys
//	  users: [ops-bot]                      # user ids of identity.user_header
//	  plans: [internal]                     # every client of these plans
func (d *decoder) exempt(n *yaml.Node, path string, c *Config, raw *rawConfig) {
	raw.at("Exempt", n, path)
	routes := func(n *yaml.Node, p string) {
		d.List(n, p, func(i int, e *yaml.Node, p string) {
			s := d.Str(e, p)
			d.patternMethod(e, p, s)
			d.patternHost(e, p, s)
			if everyRequest(s) {
				d.Errorf(e, p, "%q matches every request: no limit would apply to anyone (the root page alone is \"/{$}\")", s)
			}
			c.Exempt = append(c.Exempt, s)
			raw.at(fmt.Sprintf("Exempt[%d]", i), e, p)
		})
	}
	if n.Kind != yaml.MappingNode {
		routes(n, path)
		return
	}
	list := func(name string, dst *[]string) field {
		return func(n *yaml.Node, p string) {
			raw.at(name, n, p)
			d.List(n, p, func(i int, e *yaml.Node, p string) {
				*dst = append(*dst, d.Str(e, p))
				raw.at(fmt.Sprintf("%s[%d]", name, i), e, p)
			})
		}
	}
	d.Mapping(n, path, map[string]field{
		"routes":    routes,
		"addresses": func(n *yaml.Node, p string) { c.ExemptAddresses = d.exemptAddresses(n, p) },
		"keys":      list("ExemptKeys", &c.ExemptKeys),
		"users":     list("ExemptUsers", &c.ExemptUsers),
		"plans":     list("ExemptPlans", &c.ExemptPlans),
	})
}

// exemptAddresses decodes exempt.addresses, refusing a prefix of length 0
// (0.0.0.0/0, ::/0): every address of its family, so that no limit would
// apply to any client of it, which is a placeholder or a line copied from
// elsewhere rather than a configuration of limits.
func (d *decoder) exemptAddresses(n *yaml.Node, path string) []netip.Prefix {
	var out []netip.Prefix
	d.List(n, path, func(_ int, e *yaml.Node, p string) {
		pfx, ok := d.prefix(e, p)
		if !ok {
			return
		}
		if pfx.Bits() == 0 {
			family := "IPv4"
			if pfx.Addr().Is6() {
				family = "IPv6"
			}
			d.Errorf(e, p, "%v is every %s address: no limit would apply to any client that connects over %s "+
				"(to watch limits without refusing anyone, set shadow: true on them)", pfx, family, family)
			return
		}
		out = append(out, pfx)
	})
	return out
}

// everyRequest reports whether the ServeMux pattern s matches every
// request: no method, no host, and a path of every path (everyPath).
func everyRequest(s string) bool {
	method, host, path := patternParts(s)
	return method == "" && host == "" && everyPath(path)
}
