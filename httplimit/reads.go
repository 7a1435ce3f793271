package httplimit

import (
	"net/http"
	"net/netip"
	"slices"
)

// RequestHeaders returns the canonical names of the request headers m
// reads to decide a request: the API key, token, user and plan headers,
// the forwarding header it believes from TrustedProxies (Forwarded or
// X-Forwarded-For), the headers its rules require, leave out (Except) or
// are keyed by, Cookie when a rule is keyed by a cookie, and last
// Content-Type, Content-Encoding and Grpc-Timeout: Handler takes a gRPC or
// gRPC-Web call's deadline from its grpc-timeout header (see Handler), and
// a rule keyed by a form or JSON field reads the body of its Content-Type,
// decoded as its Content-Encoding says. The request's
// Host is read too (by rules' Hosts and the "host" key, and by patterns
// naming a host), and so are its query string and body for a rule keyed by
// a form or JSON field. An adapter that decides the requests of another protocol from its
// own metadata, as grpclimit does a gRPC call's, gives m these headers;
// others m never reads.
func (m *Middleware) RequestHeaders() []string {
	if m.zero() {
		return nil
	}
	var names []string
	add := func(name string) {
		if name != "" && !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	for _, h := range m.id.apiKeyHeaders {
		add(h.name)
	}
	for _, h := range m.id.tokenHeaders {
		add(h.name)
	}
	add(m.id.userHeader)
	add(m.id.planHeader)
	if m.id.useForwarded {
		add("Forwarded")
	} else {
		add("X-Forwarded-For")
	}
	for _, ru := range m.rules {
		for _, a := range ru.alts {
			for _, hm := range a.headers {
				add(hm.Name)
			}
		}
		for _, e := range ru.exc {
			for _, hm := range e.headers {
				add(hm.Name)
			}
		}
		for _, kp := range ru.parts {
			switch kp.kind {
			case KeyHeader:
				add(kp.header)
			case KeyCookie:
				add("Cookie")
			}
		}
	}
	add("Content-Type")
	add("Content-Encoding")
	add("Grpc-Timeout")
	return names
}

// ResponseHeaders returns the names of the response headers m writes that
// a browser hides from another origin's script unless they are exposed
// (Access-Control-Expose-Headers): the RateLimit fields of its modes, and
// Retry-After.
func (m *Middleware) ResponseHeaders() []string {
	var names []string
	for _, mode := range m.modes {
		switch mode {
		case ModeIETF, ModeDraft7:
			names = append(names, "RateLimit", "RateLimit-Policy")
		case ModeDraft6:
			names = append(names, "RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset", "RateLimit-Policy")
		case ModeLegacy:
			names = append(names, "X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset")
		}
	}
	slices.Sort(names)
	return append(slices.Compact(names), "Retry-After")
}

// ClientAddr returns the address that identifies r's client, as m judges
// it for limits keyed by address and for exemptions: r's peer, or, when the
// peer is trusted (see Peer), the rightmost hop of the forwarding header
// (ForwardedHeader) that is not itself trusted. A hop that cannot be read
// stops the walk at the proxy that reported it, whose address then stands
// in for the client's: it identifies the client, but exempts it by
// ExemptAddresses never. Not valid when the client is a peer without an
// address: an untrusted peer on a Unix socket, whatever its RemoteAddr
// holds (see Options.TrustUnixPeers), or one whose RemoteAddr holds none.
func (m *Middleware) ClientAddr(r *http.Request) netip.Addr {
	if m.zero() {
		a, _ := (&identifier{}).peer(r) // no proxy is trusted
		return a
	}
	peer, trusted := m.id.peer(r)
	return clientAddr(r.Header, peer, trusted, m.id.isTrusted, m.id.useForwarded)
}

// Peer returns r's immediate peer, from its RemoteAddr, and whether it is a
// trusted proxy, whose forwarding headers m believes: one of
// TrustedProxies, or with TrustUnixPeers a peer on a Unix socket. The
// address is not valid for a peer on a Unix socket without
// TrustUnixPeers, whatever its RemoteAddr holds, nor when RemoteAddr holds
// none.
func (m *Middleware) Peer(r *http.Request) (addr netip.Addr, trusted bool) {
	if m.zero() {
		return (&identifier{}).peer(r)
	}
	return m.id.peer(r)
}
