package httplimit

import (
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// Bounds on what client-IP resolution reads from forwarding headers, so that
// a hostile header costs little.
const (
	maxForwardedLen  = 8 << 10 // bytes of forwarding headers considered
	maxForwardedHops = 64
)

// clientAddr returns the address that identifies the client of r, whose
// immediate peer is peer (not valid for a Unix-socket peer), trusted when
// peerTrusted. One forwarding header — X-Forwarded-For, or RFC 7239
// Forwarded when useForwarded — is read, only when peer is a trusted
// proxy, from the right:
// the first hop that is not itself a trusted proxy is the client. A hop that
// cannot be parsed ("unknown", an obfuscated identifier, garbage) ends the
// walk at the trusted proxy that reported it, so a malformed header can only
// make the identity coarser, never let a client choose it.
//
// Only one header is believed because front proxies maintain one: nginx and
// Caddy append to X-Forwarded-For but pass a client's own Forwarded header
// through untouched, so reading Forwarded there would let the client choose
// its address.
func clientAddr(h http.Header, peer netip.Addr, peerTrusted bool, trusted func(netip.Addr) bool, useForwarded bool) netip.Addr {
	addr, _ := forwardedClient(h, peer, peerTrusted, trusted, useForwarded)
	return addr
}

// forwardedClient is clientAddr, reporting also whether the address is
// the client's own: known is false when the walk ended at a hop that
// cannot be parsed, the address then being the trusted proxy's that
// reported it, standing in for a client no one named. Such an address
// identifies (coarsely) but never exempts.
func forwardedClient(h http.Header, peer netip.Addr, peerTrusted bool, trusted func(netip.Addr) bool, useForwarded bool) (addr netip.Addr, known bool) {
	if !peerTrusted {
		return peer, true
	}
	hops := forwardedHops(h, useForwarded)
	client := peer
	for i := len(hops) - 1; i >= 0; i-- {
		addr, ok := parseHop(hops[i])
		if !ok {
			return client, false
		}
		client = addr
		if !trusted(addr) {
			return addr, true
		}
	}
	return client, true
}

// forwardedHops lists the forwarding chain, leftmost (the original client)
// first: the for= values of Forwarded, or X-Forwarded-For.
func forwardedHops(h http.Header, useForwarded bool) []string {
	if useForwarded {
		vs := h.Values("Forwarded")
		var hops []string
		for _, elem := range splitList(vs) {
			hops = append(hops, forParam(elem))
		}
		return hops
	}
	return splitList(h.Values("X-Forwarded-For"))
}

// splitList splits comma-separated header values (over several lines),
// keeping quoted strings whole. A quoted string ends with its line, and a
// line whose quotes do not close is split at every comma, so that a quote a
// client leaves open cannot swallow the hops proxies append after it. Beyond
// the size and hop bounds the leftmost hops are dropped and replaced by one
// unparseable hop, so that the walk from the right stops there: the hops
// nearest the trusted proxies still count.
func splitList(values []string) []string {
	i, room := len(values), maxForwardedLen
	for i > 0 && len(values[i-1]) <= room {
		i--
		room -= len(values[i])
	}
	cut := i > 0
	var out []string
	if cut { // the rightmost part of the line that does not fit, if any
		out = splitLine(out, values[i-1][len(values[i-1])-room:])
	}
	for _, v := range values[i:] {
		out = splitLine(out, v)
	}
	if len(out) > maxForwardedHops {
		out, cut = out[len(out)-maxForwardedHops:], true
	}
	if cut {
		out[0] = "unknown"
	}
	return out
}

// splitLine appends the comma-separated members of one header line to out,
// keeping quoted strings whole when the line's quotes close.
func splitLine(out []string, s string) []string {
	from := len(out)
	quoted, escaped, start := false, false, 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case escaped:
			escaped = false
		case quoted && c == '\\':
			escaped = true
		case c == '"':
			quoted = !quoted
		case c == ',' && !quoted:
			out = append(out, strings.TrimSpace(s[start:i]))
			start = i + 1
		}
	}
	if quoted {
		out = out[:from]
		for elem := range strings.SplitSeq(s, ",") {
			out = append(out, strings.TrimSpace(elem))
		}
		return out
	}
	return append(out, strings.TrimSpace(s[start:]))
}

// forParam returns the for= value of one Forwarded element
// ("for=192.0.2.60;proto=http;by=203.0.113.43"), unquoted; "" if absent.
func forParam(elem string) string {
	for _, pair := range strings.Split(elem, ";") {
		k, v, ok := strings.Cut(strings.TrimSpace(pair), "=")
		if ok && strings.EqualFold(strings.TrimSpace(k), "for") {
			v = strings.TrimSpace(v)
			if len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' {
				v = strings.ReplaceAll(v[1:len(v)-1], `\`, "")
			}
			return v
		}
	}
	return ""
}

// parseHop parses one hop: "192.0.2.60", "192.0.2.60:8080", "[2001:db8::1]",
// "[2001:db8::1]:4711", "2001:db8::1", or an address with an obfuscated
// port (RFC 7239's obfport: "192.0.2.60:_abc", "[2001:db8::1]:_abc"). An
// address with an IPv6 zone ("fe80::1%eth0", in any form) is no hop: its
// zone names an interface of the host that wrote it, and its text could
// shape a store key.
func parseHop(s string) (netip.Addr, bool) {
	if host, port, ok := strings.Cut(s, ":_"); ok && obfPort(port) {
		if len(host) > 1 && host[0] == '[' && host[len(host)-1] == ']' {
			host = host[1 : len(host)-1]
		} else if strings.Contains(host, ":") {
			return netip.Addr{}, false // an IPv6 node is bracketed
		}
		if a, err := netip.ParseAddr(host); err == nil && a.Zone() == "" {
			return a.Unmap(), true
		}
		return netip.Addr{}, false
	}
	if ap, err := netip.ParseAddrPort(s); err == nil {
		if ap.Addr().Zone() != "" {
			return netip.Addr{}, false
		}
		return ap.Addr().Unmap(), true
	}
	s = strings.TrimSuffix(strings.TrimPrefix(s, "["), "]")
	if a, err := netip.ParseAddr(s); err == nil && a.Zone() == "" {
		return a.Unmap(), true
	}
	return netip.Addr{}, false
}

// obfPort reports whether "_" + s is an RFC 7239 obfport: one or more of
// ALPHA, DIGIT, ".", "_" and "-" after the underscore.
func obfPort(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// unixListener reports whether r came in on a listener of a Unix-domain
// socket, by the listener's address net/http's Server puts in the request's
// context (http.LocalAddrContextKey); false when it is not there.
func unixListener(r *http.Request) bool {
	a, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok || a == nil {
		return false
	}
	n := a.Network()
	return n == "unix" || n == "unixpacket"
}

// peerAddr parses http.Request.RemoteAddr; the zero Addr if it is not an IP.
func peerAddr(remote string) netip.Addr {
	if ap, err := netip.ParseAddrPort(remote); err == nil {
		return ap.Addr().Unmap()
	}
	if a, err := netip.ParseAddr(remote); err == nil {
		return a.Unmap()
	}
	return netip.Addr{}
}
