package server

import (
	"net/http"
	"net/http/httputil"
	"net/netip"
	"slices"
	"strings"
)

// clientJudge says who a request's peer and client are, as the middleware
// judges them (httplimit.Middleware).
type clientJudge interface {
	Peer(r *http.Request) (addr netip.Addr, trusted bool)
	ClientAddr(r *http.Request) netip.Addr
}

// forward sets the forwarding headers of pr's outbound request. From a peer
// that id trusts (identity.trusted_proxies: a load balancer, a CDN) the
// upstream gets the chain that peer reported with the peer appended
// (X-Forwarded-For, and Forwarded when the peer sent one), and the scheme
// and host the client used (X-Forwarded-Proto and X-Forwarded-Host as the
// peer reported them). From any other peer they describe sluice's hop
// alone, and the client-address headers of CDNs (True-Client-IP,
// CF-Connecting-IP, …) are dropped, so no client chooses what the upstream
// believes of it. X-Real-IP is always the address id identifies the client
// by (as Traefik sets it), never a value the request brought.
func forward(pr *httputil.ProxyRequest, id clientJudge) {
	in, out := pr.In.Header, pr.Out.Header
	out.Del("X-Real-Ip")
	if client := id.ClientAddr(pr.In); client.IsValid() {
		out.Set("X-Real-Ip", client.String())
	}
	proto := "http"
	if pr.In.TLS != nil {
		proto = "https"
	}
	out.Set("X-Forwarded-Proto", proto)
	out.Set("X-Forwarded-Host", pr.In.Host)
	peer, trusted := id.Peer(pr.In)
	if !peer.IsValid() {
		return
	}
	if trusted {
		for _, name := range [...]string{"X-Forwarded-For", "X-Forwarded-Proto", "X-Forwarded-Host", "Forwarded"} {
			if v := in.Values(name); len(v) > 0 {
				out[name] = slices.Clone(v)
			}
		}
	} else {
		// The client-address headers of CDNs and load balancers, which
		// frameworks read before X-Real-IP (chi's RealIP reads
		// True-Client-IP first): only a trusted proxy may name the client.
		for _, name := range [...]string{"True-Client-Ip", "Cf-Connecting-Ip", "Fastly-Client-Ip", "X-Client-Ip", "X-Cluster-Client-Ip"} {
			out.Del(name)
		}
	}
	out.Set("X-Forwarded-For", joinHop(out.Values("X-Forwarded-For"), peer.String()))
	if f := out.Values("Forwarded"); len(f) > 0 {
		node := peer.String()
		if peer.Is6() {
			node = `"[` + node + `]"` // RFC 7239 §6: an IPv6 node is bracketed and quoted
		}
		out.Set("Forwarded", joinHop(f, "for="+node))
	}
}

// joinHop returns the list values with hop appended, as one field value.
func joinHop(values []string, hop string) string {
	return strings.Join(append(slices.Clip(values), hop), ", ")
}
