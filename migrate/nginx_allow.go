package migrate

import (
	"net/netip"
	"slices"
	"strings"
)

// nginxGeo is a geo block: a variable set from the client address.
type nginxGeo struct {
	def  string
	nets []nginxNet
}

// nginxNet is one address range of a geo block and its value.
type nginxNet struct {
	prefix netip.Prefix
	value  string
}

// nginxMap is a map block: a variable set from another one's value.
type nginxMap struct {
	src    string
	def    string
	values map[string]string
}

// parseGeo reads `geo $var { default V; CIDR V; … }` (or `geo
// $remote_addr $var`); ok is false for what it cannot read exactly (other
// sources, ranges, proxy, include, delete).
func parseGeo(d directive) (name string, g *nginxGeo, ok bool) {
	switch {
	case len(d.args) == 1:
		name = d.args[0]
	case len(d.args) == 2 && (d.args[0] == "$remote_addr" || d.args[0] == "$binary_remote_addr"):
		name = d.args[1]
	default:
		return "", nil, false
	}
	g = &nginxGeo{}
	for _, e := range d.block {
		if len(e.args) != 1 || e.hasBlock {
			return name, nil, false
		}
		if e.name == "default" {
			g.def = e.args[0]
			continue
		}
		p, err := netip.ParsePrefix(e.name)
		if err != nil {
			a, err := netip.ParseAddr(e.name)
			if err != nil {
				return name, nil, false // ranges, proxy, include, delete…
			}
			p = netip.PrefixFrom(a, a.BitLen())
		}
		g.nets = append(g.nets, nginxNet{p.Masked(), e.args[0]})
	}
	return name, g, true
}

// parseMap reads `map $src $dst { default V; key V; … }`; ok is false for
// regular expressions, hostnames, volatile and include.
func parseMap(d directive) (dst string, m *nginxMap, ok bool) {
	if len(d.args) != 2 {
		return "", nil, false
	}
	m = &nginxMap{src: d.args[0], values: map[string]string{}}
	for _, e := range d.block {
		if len(e.args) != 1 || e.hasBlock || strings.HasPrefix(e.name, "~") || e.name == "hostnames" || e.name == "include" || e.name == "volatile" {
			return d.args[1], nil, false
		}
		if e.name == "default" {
			m.def = e.args[0]
		} else {
			m.values[e.name] = e.args[0]
		}
	}
	return d.args[1], m, true
}

// allowlist resolves a zone key set by a map from a geo block, the allowlist
// of nginx's documentation: the addresses whose value maps to "" are not
// counted (an empty key), the others are counted per address. It returns
// those left out, sorted, and ok false when key is not of that shape.
func allowlist(key string, geos map[string]*nginxGeo, maps map[string]*nginxMap) ([]string, bool) {
	m := maps[key]
	if m == nil {
		return nil, false
	}
	g := geos[m.src]
	if g == nil {
		return nil, false
	}
	value := func(v string) string {
		if x, ok := m.values[v]; ok {
			return x
		}
		return m.def
	}
	byAddress := func(v string) bool { return v == "$binary_remote_addr" || v == "$remote_addr" }
	if !byAddress(value(g.def)) {
		return nil, false
	}
	var left []string
	out := map[netip.Prefix]bool{} // the ranges left out
	for _, n := range g.nets {
		switch v := value(n.value); {
		case v == "":
			left = append(left, n.prefix.String())
			out[n.prefix] = true
		case !byAddress(v):
			return nil, false
		}
	}
	if len(left) == 0 {
		return nil, false
	}
	// A more specific range inside one left out, counted again, is not
	// an exemption sluice can write: geo picks the longest match.
	for _, n := range g.nets {
		if out[n.prefix] {
			continue
		}
		for bits := range n.prefix.Bits() {
			if p, _ := n.prefix.Addr().Prefix(bits); out[p] {
				return nil, false
			}
		}
	}
	slices.Sort(left)
	return slices.Compact(left), true
}

// nginxAllowlists exempts the addresses every zone in use leaves out by
// its allowlist key; when the zones do not all leave out the same ones, the
// exemption (which spares a client every limit) is not written, and the
// zones count those addresses too, which it reports.
func (t *Translation) nginxAllowlists(zones map[string]*nginxZone, order []string) {
	var every []string
	for _, name := range order {
		if z := zones[name]; z.used {
			every = append(every, z.allow...)
			z.allow = narrowed(z.allow)
		}
	}
	slices.Sort(every)
	t.withoutEveryAddress(slices.Compact(every))
	var first []string
	same, seen := true, false
	for _, name := range order {
		z := zones[name]
		if !z.used {
			continue
		}
		if !seen {
			first, seen = z.allow, true
			continue
		}
		same = same && slices.Equal(z.allow, first)
	}
	for _, name := range order {
		z := zones[name]
		switch {
		case !z.used || len(z.allow) == 0:
		case same:
			t.same("zone "+z.name+" key", "%s, set by a map of a geo block, is empty for %s: nginx counts no request from there; sluice exempts those addresses (exempt.addresses), as every zone leaves them out.", z.key, strings.Join(z.allow, ", "))
		default:
			t.differs("zone "+z.name+" key", "%s leaves out %s (a map of a geo block), but other zones count those addresses, and sluice's exemptions spare a client every limit: the import counts them in this zone too. Keep the allowlist in nginx, or give every zone the same one.", z.key, strings.Join(z.allow, ", "))
		}
	}
	if same && len(first) > 0 {
		t.ExemptAddresses = first
	}
}
