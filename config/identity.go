// The identity section: headers, trusted proxies and address prefixes.

package config

import (
	"fmt"
	"net/http"
	"net/netip"

	"go.yaml.in/yaml/v3"

	"github.com/sluice-dev/sluice/internal/headername"
)

// identity reads the identity section as it is written; httplimit's
// Options.Validate judges the values (see resolve).
func (d *decoder) identity(n *yaml.Node, path string, id *Identity, raw *rawConfig) {
	d.Mapping(n, path, map[string]field{
		"api_key_headers": func(n *yaml.Node, p string) {
			d.emptyList(n, p, "Authorization then X-API-Key", "list the headers that carry API keys, or leave api_key_headers out")
			d.List(n, p, func(i int, e *yaml.Node, p string) {
				id.APIKeyHeaders = append(id.APIKeyHeaders, d.requestHeader(e, p))
				raw.at(fmt.Sprintf("APIKeyHeaders[%d]", i), e, p)
			})
			raw.at("APIKeyHeaders", n, p)
		},
		"user_header": func(n *yaml.Node, p string) {
			id.UserHeader = d.requestHeader(n, p)
			raw.at("UserHeader", n, p)
		},
		"plan_header": func(n *yaml.Node, p string) {
			id.PlanHeader = d.requestHeader(n, p)
			raw.at("PlanHeader", n, p)
		},
		"trusted_proxies": func(n *yaml.Node, p string) { id.TrustedProxies, id.TrustUnixPeers = d.trustedProxies(n, p) },
		"forwarded_header": func(n *yaml.Node, p string) {
			id.ForwardedHeader = d.Str(n, p)
			raw.at("ForwardedHeader", n, p)
		},
		"ipv4_prefix": func(n *yaml.Node, p string) {
			id.IPv4Prefix = int(d.Int(n, p, 1, 32))
			raw.at("IPv4Prefix", n, p)
		},
		"ipv6_prefix": func(n *yaml.Node, p string) {
			id.IPv6Prefix = int(d.Int(n, p, 1, 128))
			raw.at("IPv6Prefix", n, p)
		},
		"unknown_keys": func(n *yaml.Node, p string) {
			id.UnknownKeys = d.Str(n, p)
			raw.at("UnknownKeys", n, p)
		},
		"jwt": func(n *yaml.Node, p string) { id.JWT = d.jwts(n, p, raw) },
		"token_headers": func(n *yaml.Node, p string) {
			d.emptyList(n, p, "Authorization", "list the headers that carry tokens, or leave token_headers out")
			d.List(n, p, func(i int, e *yaml.Node, p string) {
				id.TokenHeaders = append(id.TokenHeaders, d.requestHeader(e, p))
				raw.at(fmt.Sprintf("TokenHeaders[%d]", i), e, p)
			})
			raw.at("TokenHeaders", n, p)
		},
	})
}

// requestHeader decodes the name of a request header to read, canonical,
// refusing one net/http never leaves among a request's headers.
func (d *decoder) requestHeader(n *yaml.Node, p string) string {
	name := http.CanonicalHeaderKey(d.Str(n, p))
	d.seenHeader(n, p, name)
	return name
}

// seenHeader refuses name, a request header to read, when net/http never
// leaves it among a request's headers (headername.Unseen): it would be
// absent from every one.
func (d *decoder) seenHeader(n *yaml.Node, p, name string) {
	if err := headername.Unseen(name); err != nil {
		d.Errorf(n, p, "%v", err)
	}
}

func (d *decoder) prefixes(n *yaml.Node, p string) []netip.Prefix {
	var out []netip.Prefix
	d.List(n, p, func(_ int, e *yaml.Node, p string) {
		if pfx, ok := d.prefix(e, p); ok {
			out = append(out, pfx)
		}
	})
	return out
}

// trustedProxies decodes identity.trusted_proxies: addresses and CIDR
// prefixes, and "unix:" for the peers of Unix-domain sockets
// (httplimit.Options.TrustUnixPeers), as nginx's set_real_ip_from writes
// them. An entry written `- unix:` unquoted, which YAML reads as the
// mapping of unix to nothing, is that entry too.
func (d *decoder) trustedProxies(n *yaml.Node, p string) (out []netip.Prefix, unix bool) {
	d.List(n, p, func(_ int, e *yaml.Node, p string) {
		if isUnixEntry(e) {
			unix = true
			return
		}
		if pfx, ok := d.prefix(e, p); ok {
			out = append(out, pfx)
		}
	})
	return out, unix
}

// isUnixEntry reports whether e is "unix:", quoted, or unquoted (a mapping
// of unix to null).
func isUnixEntry(e *yaml.Node) bool {
	switch e.Kind {
	case yaml.ScalarNode:
		return e.Tag == "!!str" && e.Value == "unix:"
	case yaml.MappingNode:
		return len(e.Content) == 2 && e.Content[0].Value == "unix" && e.Content[1].Tag == "!!null" && e.Content[1].Value == ""
	}
	return false
}

// prefix decodes one address or CIDR prefix (an address is its /32 or
// /128); false after recording an error. An IPv4-mapped IPv6 address or
// prefix (::ffff:10.0.0.0/104) is its IPv4 one (10.0.0.0/8): client
// addresses are matched unmapped, and would never be in it. Refused: a
// prefix with bits set past its length (10.0.0.1/8: one address, or its
// network?), and an IPv6 zone (fe80::1%eth0), which netip drops.
func (d *decoder) prefix(e *yaml.Node, p string) (netip.Prefix, bool) {
	s := d.Str(e, p)
	pfx, err := netip.ParsePrefix(s)
	if err != nil {
		addr, aerr := netip.ParseAddr(s)
		if aerr != nil {
			d.Errorf(e, p, "%q is not an IP address or CIDR prefix", s)
			return netip.Prefix{}, false
		}
		if addr.Zone() != "" {
			d.Errorf(e, p, "%q has an IPv6 zone (%%%s), which names an interface of this host, not addresses: write the address or prefix without it", s, addr.Zone())
			return netip.Prefix{}, false
		}
		pfx = netip.PrefixFrom(addr, addr.BitLen())
	}
	masked := unmapped(pfx.Masked())
	if masked != unmapped(pfx) {
		d.Errorf(e, p, "%q has bits set past its length: write %v for the network, or %v for the one address", s, masked, pfx.Addr().Unmap())
		return netip.Prefix{}, false
	}
	return masked, true
}

// unmapped returns pfx, or its IPv4 prefix when it is an IPv4-mapped one
// of /96 or longer.
func unmapped(pfx netip.Prefix) netip.Prefix {
	if pfx.Addr().Is4In6() && pfx.Bits() >= 96 {
		return netip.PrefixFrom(pfx.Addr().Unmap(), pfx.Bits()-96)
	}
	return pfx
}
