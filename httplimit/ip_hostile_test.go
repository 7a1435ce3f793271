package httplimit

import (
	"net/netip"
	"strings"
	"testing"
)

// FuzzIPSubject: a client address becomes a subject by its prefix, so that
// one IPv6 /64 (or whatever the configuration says) is one client — and no
// more than one. Flipping a bit inside the prefix gives another subject,
// flipping one outside it the same; an IPv4-mapped IPv6 peer is its IPv4
// address; whatever RemoteAddr holds, parsing it never panics and the
// subject stays short.
func FuzzIPSubject(f *testing.F) {
	f.Add([]byte{192, 0, 2, 1}, uint8(32), uint8(64), uint8(7), "192.0.2.1:80")
	f.Add([]byte{0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1}, uint8(24), uint8(48), uint8(100), "[::ffff:198.51.100.1]:443")
	f.Add([]byte{}, uint8(0), uint8(200), uint8(255), "[fe80::1%eth0]:1")
	f.Fuzz(func(t *testing.T, raw []byte, p4, p6, flip uint8, remote string) {
		id := &identifier{ipv4Prefix: 1 + int(p4)%32, ipv6Prefix: 1 + int(p6)%128}
		var addr netip.Addr
		switch len(raw) {
		case 4:
			addr = netip.AddrFrom4([4]byte(raw))
		case 16:
			addr = netip.AddrFrom16([16]byte(raw)).Unmap()
		default:
			addr = peerAddr(remote)
			if !addr.IsValid() {
				if _, got := id.ipSubject(addr); got != "ip:unknown" {
					t.Fatalf("no address: subject %q", got)
				}
				return
			}
			if addr.Is4In6() {
				t.Fatalf("peerAddr(%q) = %v: an IPv4-mapped address was not unmapped", remote, addr)
			}
		}
		_, subject := id.ipSubject(addr)
		if !strings.HasPrefix(subject, "ip:") || len(subject) > len("ip:ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff/128%zone") {
			t.Fatalf("subject %q of %v", subject, addr)
		}
		if addr.Zone() != "" {
			return // zoned addresses (a link-local peer) are kept whole
		}
		prefix := id.ipv4Prefix
		if addr.Is6() {
			prefix = id.ipv6Prefix
		}
		bit := int(flip) % addr.BitLen()
		b := addr.AsSlice()
		b[bit/8] ^= 0x80 >> (bit % 8)
		other, _ := netip.AddrFromSlice(b)
		_, otherSubject := id.ipSubject(other)
		same := otherSubject == subject
		if bit < prefix && same {
			t.Fatalf("%v and %v differ in bit %d of the /%d prefix but share the subject %q", addr, other, bit, prefix, subject)
		}
		if bit >= prefix && !same {
			t.Fatalf("%v and %v share their /%d prefix but have subjects %q and %q", addr, other, prefix, subject, otherSubject)
		}
	})
}
