package migrate

import (
	"net/netip"
	"slices"
	"strings"
)

// everyAddress returns the family ("IPv4", "IPv6") of which prefix p is
// every address (0.0.0.0/0, ::/0, and ::ffff:0:0/96, every IPv4 address
// written in IPv6), and false for any other prefix or text.
func everyAddress(p string) (string, bool) {
	pfx, err := netip.ParsePrefix(p)
	if err != nil {
		return "", false
	}
	if a := pfx.Addr(); a.Is4In6() && pfx.Bits() >= 96 {
		pfx = netip.PrefixFrom(a.Unmap(), pfx.Bits()-96)
	}
	if pfx.Bits() != 0 {
		return "", false
	}
	if pfx.Addr().Is4() {
		return "IPv4", true
	}
	return "IPv6", true
}

// withoutEveryAddress returns addrs without the prefixes of every address
// of a family, which sluice refuses as exempt addresses, reporting each of
// them: the source limits no client of that family, and the import limits
// them all.
func (t *Translation) withoutEveryAddress(addrs []string) []string {
	return slices.DeleteFunc(slices.Clone(addrs), func(p string) bool {
		family, ok := everyAddress(p)
		if ok {
			t.differs("exemptions", "%s is every %s address: the source limits no client that connects over %s. sluice refuses to exempt a whole address family, so the import limits them: remove the limits, or keep them in shadow mode (shadow: true), to do as the source does.",
				p, family, family)
		}
		return ok
	})
}

// narrowed is addrs without the prefixes of every address of a family,
// unreported (see withoutEveryAddress).
func narrowed(addrs []string) []string {
	return slices.DeleteFunc(slices.Clone(addrs), func(p string) bool {
		_, ok := everyAddress(strings.TrimSpace(p))
		return ok
	})
}
