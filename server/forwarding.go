package server

import (
	"fmt"
	"net/http"
	"net/http/httputil"
	"net/netip"
	"slices"
	"strings"

	"github.com/sluice-dev/sluice/internal/querypair"
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
// peer reported them); the peer's other forwarding headers
// (X-Forwarded-Port, X-Forwarded-Prefix, …) pass on as it sent them. From
// any other peer they describe sluice's hop alone: every header the request
// brought that describes a hop (untrustedHop: Forwarded, every
// X-Forwarded-*, Front-End-Https, X-Url-Scheme, and the client-address
// headers of CDNs, True-Client-IP, CF-Connecting-IP, …) is removed, and
// sluice sets X-Forwarded-For, -Proto and -Host, so no client chooses what
// the upstream believes of it. X-Real-IP is always the address id
// identifies the client by (as Traefik sets it), never a value the request
// brought, in any spelling (sameHeaderName: X_Real_IP and X.Real.IP too)
// and from any peer. A method override (methodOverride: X-HTTP-Method-Override, …)
// is removed from every peer's request: it is the client's word however
// many proxies passed it on, and an upstream that honours it would serve
// another method than the one the limits judged.
func forward(pr *httputil.ProxyRequest, id clientJudge) {
	in, out := pr.In.Header, pr.Out.Header
	peer, trusted := id.Peer(pr.In)
	for name := range out {
		if methodOverride(name) || !trusted && untrustedHop(name) || sameHeaderName(name, "x-real-ip") {
			delete(out, name)
		}
	}
	if client := id.ClientAddr(pr.In); client.IsValid() {
		out.Set("X-Real-Ip", client.String())
	}
	proto := "http"
	if pr.In.TLS != nil {
		proto = "https"
	}
	out.Set("X-Forwarded-Proto", proto)
	out.Set("X-Forwarded-Host", pr.In.Host)
	if trusted {
		for _, name := range [...]string{"X-Forwarded-For", "X-Forwarded-Proto", "X-Forwarded-Host", "Forwarded"} {
			if v := in.Values(name); len(v) > 0 {
				out[name] = slices.Clone(v)
			}
		}
	}
	if !peer.IsValid() {
		return // a peer without an address (a Unix socket's) adds no hop
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

// untrustedHop reports whether the header name describes a hop of the
// request, which only a trusted proxy may report: Forwarded, any
// X-Forwarded-* (-For, -Proto, -Host, but also -Port, -Prefix, -Ssl,
// -Scheme, -Server, -Uri, -Method, … which frameworks read beside those,
// Rack's X-Forwarded-Ssl and -Scheme before -Proto), Front-End-Https and
// X-Url-Scheme (read for the scheme too), X-Original-URL, X-Rewrite-URL and
// X-Original-Host (Symfony and IIS route by them: another path or host
// than the one judged), and the client-address headers of CDNs and load
// balancers, which frameworks read before X-Real-IP (chi's RealIP reads
// True-Client-IP first). The name is matched as sameHeaderName matches
// one: in any case and with "_" or "." for "-", as CGI-style servers read
// those spellings as one header (X_Forwarded_Ssl is HTTP_X_FORWARDED_SSL).
func untrustedHop(name string) bool {
	return requestHop(name) || clientHop(name)
}

// requestHopHeaders are the headers of untrustedHop, but X-Forwarded-*,
// that describe the request rather than name its client: the scheme, host
// or URL it was sent to.
var requestHopHeaders = [...]string{"forwarded", "front-end-https", "x-url-scheme",
	"x-original-url", "x-rewrite-url", "x-original-host"}

// clientHopHeaders are the headers of untrustedHop, but X-Forwarded-For,
// that name the client by its address: Client-IP, X-Forwarded and
// Forwarded-For too, which PHP's usual client-address function reads
// before X-Forwarded-For (HTTP_CLIENT_IP) and Rails' RemoteIp checks
// against it.
var clientHopHeaders = [...]string{"x-real-ip", "client-ip", "x-forwarded", "forwarded-for",
	"true-client-ip", "cf-connecting-ip", "fastly-client-ip", "x-client-ip", "x-cluster-client-ip"}

// requestHop reports whether the header name is one of untrustedHop's that
// describes the request (its scheme, host, port, prefix or URL): any
// X-Forwarded-* but X-Forwarded-For, and requestHopHeaders. A trusted
// peer's pass on to the upstream (forward), which may build its answer
// from them.
func requestHop(name string) bool {
	const prefix = "x-forwarded-"
	if len(name) > len(prefix) && sameHeaderName(name[:len(prefix)], prefix) {
		return !sameHeaderName(name, "x-forwarded-for")
	}
	for _, h := range requestHopHeaders {
		if sameHeaderName(name, h) {
			return true
		}
	}
	return false
}

// clientHop reports whether the header name is one of untrustedHop's that
// names the client by its address: X-Forwarded-For and clientHopHeaders.
func clientHop(name string) bool {
	if sameHeaderName(name, "x-forwarded-for") {
		return true
	}
	for _, h := range clientHopHeaders {
		if sameHeaderName(name, h) {
			return true
		}
	}
	return false
}

// methodOverrideHeaders are the headers by which frameworks serve a POST
// as the method they name: X-HTTP-Method-Override (Symfony and Laravel
// whatever their configuration, ASP.NET Core's UseHttpMethodOverride,
// Rack::MethodOverride, Express's method-override), X-HTTP-Method and
// X-Method-Override (method-override's other usual names, and OData's).
var methodOverrideHeaders = [...]string{"x-http-method-override", "x-http-method", "x-method-override"}

// methodOverride reports whether the header name is a method override
// (methodOverrideHeaders), as sameHeaderName matches one: in any case and
// with "_" or "." for "-".
func methodOverride(name string) bool {
	for _, h := range methodOverrideHeaders {
		if sameHeaderName(name, h) {
			return true
		}
	}
	return false
}

// methodParam is the parameter by which frameworks serve a POST as the
// method it names: Symfony and Laravel (whose Request::capture enables
// Symfony's parameter override) read it from a form body, then the query
// string; Rack::MethodOverride (in Rails' default middleware) from a form
// body; ASP.NET Core's UseHttpMethodOverride, given a form field, as
// "_METHOD" in any case. A parameter is matched by its name in any case,
// or by the name PHP gives it (phpname.Of: ".method" and " _method" are
// Symfony's _method), in any case too.
const methodParam = "_method"

// overrides gathers the methods that a request's method overrides name
// (methodOverride headers, methodParam parameters), in upper case as
// Symfony and Rack read them.
type overrides struct {
	method string // the first named, "" for none
	differ bool   // another names a different method
	unread bool   // a methodParam pair could not be read (addQuery)
}

// add adds the method v names ("" names none).
func (o *overrides) add(v string) {
	switch v = strings.ToUpper(v); {
	case v == "":
	case o.method == "":
		o.method = v
	case v != o.method:
		o.differ = true
	}
}

// addQuery adds the methods that the methodParam parameters of the query
// string raw name, read as querypair.Values reads them: however many
// pairs raw has (url.ParseQuery reads none of more than 10,000, PHP all
// of them). A pair url.ParseQuery refuses that another upstream may read
// as methodParam (a ";", an escape that does not decode, as PHP keeps
// one), whose method sluice cannot tell: named refuses it.
func (o *overrides) addQuery(raw string) {
	if !querypair.Values(raw, methodParam, o.add) {
		o.unread = true
	}
}

// named returns the method named, "" for none; an error when two differ
// (an upstream would serve one of them, which sluice cannot tell), a
// methodParam pair could not be read (addQuery) or the one named is not a
// method (validMethod). what names the overrides read, for the error.
func (o *overrides) named(what string) (string, error) {
	switch {
	case o.differ:
		return "", fmt.Errorf("%s name different methods: an upstream would serve one of them, which sluice cannot tell", what)
	case o.unread:
		return "", fmt.Errorf(`%s: a _method pair that does not parse (a ";", an escape that does not decode) may name a method to an upstream that reads it anyway (PHP), which sluice cannot tell`, what)
	}
	if o.method == "" {
		return "", nil
	}
	if err := validMethod(o.method); err != nil {
		return "", fmt.Errorf("%s: %w", what, err)
	}
	return o.method, nil
}

// sameHeaderName reports whether the header names a and b are one, in any
// case and with "_" or "." for "-": CGI-style servers name a header's
// variable HTTP_ and its name in upper case with "-" as "_" (Rack and
// Puma, whose allow_underscore_headers is on by default, and WSGI servers
// read X_Api_Key as HTTP_X_API_KEY), and PHP behind FastCGI (php-fpm
// behind Caddy's php_fastcgi, which keeps a name's dots) registers that
// variable with each "." as "_" too (phpname.Of), so X.Api.Key is
// $_SERVER['HTTP_X_API_KEY'].
func sameHeaderName(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		if foldHeaderByte(a[i]) != foldHeaderByte(b[i]) {
			return false
		}
	}
	return true
}

// foldHeaderByte returns c of a header name in lower case, "-" for "_"
// and ".".
func foldHeaderByte(c byte) byte {
	switch {
	case c == '_' || c == '.':
		return '-'
	case 'A' <= c && c <= 'Z':
		return c + 'a' - 'A'
	}
	return c
}

// dropOtherSpellings removes from h, the request the upstream gets, every
// header that is one of read (the canonical names of the headers the
// middleware reads: API key, token, user and plan headers, the headers of
// rules' matches, excepts and keys; limitsInFront's RequestHeaders) in
// another spelling (sameHeaderName: another case, or "_" or "." for "-").
// CGI-style servers read those spellings as one header (Rack and Puma,
// whose allow_underscore_headers is on by default, and WSGI servers read
// X_Api_Key as HTTP_X_API_KEY, the X-Api-Key an app authenticates by; PHP
// behind FastCGI X.Api.Key too), so the upstream would act on a key, a
// user or a header value that the limits never saw. The spelling read
// passes on, judged.
func dropOtherSpellings(h http.Header, read []string) {
	for name := range h {
		if otherSpelling(name, read) {
			delete(h, name)
		}
	}
}

// otherSpellingIn returns a header of h that is one of read spelled
// otherwise (otherSpelling), "" when none is.
func otherSpellingIn(h http.Header, read []string) string {
	for name := range h {
		if otherSpelling(name, read) {
			return name
		}
	}
	return ""
}

// otherSpelling reports whether the header name is one of read, the
// canonical names of headers, spelled otherwise (see dropOtherSpellings).
func otherSpelling(name string, read []string) bool {
	for _, r := range read {
		if name != r && sameHeaderName(name, r) {
			return true
		}
	}
	return false
}

// joinHop returns the list values with hop appended, as one field value.
func joinHop(values []string, hop string) string {
	return strings.Join(append(slices.Clip(values), hop), ", ")
}
