package httplimit

import (
	"net"
	"net/http"
	"net/netip"
	"strings"

	"github.com/sluice-dev/sluice/internal/sockaddr"
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
// ("for=192.0.2.60;proto=http;by=203.0.113.43"), read by RFC 7239's
// grammar: pairs of a name and a value separated by ";", a value a token
// or a quoted-string (unquoted here), which may hold ";" and "=". It
// returns "", a hop that cannot be parsed, when the element has no for,
// when it does not parse, or when a parameter of RFC 7239 (for, by, host,
// proto) occurs in it twice, which section 4 forbids: a proxy that writes
// a client's Host unquoted (host=a;for=203.0.113.9) beside its own for
// then makes the element unreadable, never the client's choice. Parameter
// names are matched in any case; whitespace around ";" and "=", and an
// unquoted value with characters a token lacks (":", "[", as in
// for=192.0.2.60:8080), are accepted, as proxies write them.
func forParam(elem string) string {
	var seen uint8 // the RFC 7239 parameters met, one bit each
	var forValue string
	s := elem
	for {
		s = trimOWS(s)
		if s == "" {
			return forValue
		}
		if s[0] == ';' { // an empty pair
			s = s[1:]
			continue
		}
		n := 0
		for n < len(s) && isTchar(s[n]) {
			n++
		}
		name := s[:n]
		s = trimOWS(s[n:])
		if name == "" || s == "" || s[0] != '=' {
			return ""
		}
		s = trimOWS(s[1:])
		var v string
		if s != "" && s[0] == '"' {
			var ok bool
			if v, s, ok = quotedString(s); !ok {
				return ""
			}
		} else {
			n = 0
			for n < len(s) && s[n] > ' ' && s[n] < 0x7f && s[n] != '"' && s[n] != ';' && s[n] != ',' {
				n++
			}
			if n == 0 {
				return ""
			}
			v, s = s[:n], s[n:]
		}
		if s = trimOWS(s); s != "" && s[0] != ';' {
			return ""
		}
		if bit := forwardedParam(name); bit != 0 {
			if seen&bit != 0 {
				return ""
			}
			seen |= bit
			if bit == paramFor {
				forValue = v
			}
		}
	}
}

// The parameters RFC 7239 defines, as bits.
const (
	paramFor uint8 = 1 << iota
	paramBy
	paramHost
	paramProto
)

// forwardedParam returns the bit of the RFC 7239 parameter named name, in
// any case; 0 for an extension's.
func forwardedParam(name string) uint8 {
	switch {
	case strings.EqualFold(name, "for"):
		return paramFor
	case strings.EqualFold(name, "by"):
		return paramBy
	case strings.EqualFold(name, "host"):
		return paramHost
	case strings.EqualFold(name, "proto"):
		return paramProto
	}
	return 0
}

// quotedString reads the quoted-string (RFC 9110 section 5.6.4) s starts
// with and returns its content, quoted-pairs unescaped, and the rest of s;
// false if s holds none that closes, or a byte a quoted-string may not.
func quotedString(s string) (content, rest string, ok bool) {
	pairs := false // whether the content holds quoted-pairs
	for i := 1; i < len(s); i++ {
		c := s[i]
		switch {
		case c != '\t' && (c < ' ' || c == 0x7f):
			return "", "", false
		case c == '\\':
			pairs = true
			i++
			if i == len(s) || s[i] != '\t' && (s[i] < ' ' || s[i] == 0x7f) {
				return "", "", false
			}
		case c == '"':
			content = s[1:i]
			if pairs {
				content = unescapeQuoted(content)
			}
			return content, s[i+1:], true
		}
	}
	return "", "", false
}

// unescapeQuoted returns s, a quoted-string's well-formed content, with
// each quoted-pair ("\x") replaced by the byte it quotes.
func unescapeQuoted(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// isTchar reports whether c may be in a token (RFC 9110 section 5.6.2).
func isTchar(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}

// trimOWS returns s without the spaces and tabs it starts with.
func trimOWS(s string) string {
	return strings.TrimLeft(s, " \t")
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
// socket, by the local address net/http's Server puts in the request's
// context (http.LocalAddrContextKey; see sockaddr.IsUnix). False when
// there is none.
func unixListener(r *http.Request) bool {
	a, _ := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	return sockaddr.IsUnix(a)
}

// peerAddr parses http.Request.RemoteAddr; the zero Addr if it is not an
// IP. It does not say what the peer is: on a Unix-domain socket,
// RemoteAddr is the path the client bound its end to, which may read as
// an address (see identifier.peer).
func peerAddr(remote string) netip.Addr {
	if ap, err := netip.ParseAddrPort(remote); err == nil {
		return ap.Addr().Unmap()
	}
	if a, err := netip.ParseAddr(remote); err == nil {
		return a.Unmap()
	}
	return netip.Addr{}
}
