package server

import (
	"crypto/sha256"
	"crypto/subtle"
	"crypto/tls"
	"crypto/x509"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/internal/sockaddr"
)

// TokenHeader carries a caller's bearer token on the endpoints where
// Authorization belongs to someone else (forward-auth, whose Authorization
// is the described client's API key). Every admin endpoint accepts it.
const TokenHeader = "Sluice-Token"

// access decides who a caller of the private listeners is and what it may
// do, from one configuration's admin section. It is immutable.
type access struct {
	callers  []config.Caller
	loopback config.Scopes
	// clientCAs are the client CAs in force (nil without): a certificate
	// identifies its caller only through a chain to one of them, whatever
	// the CAs its connection's handshake was verified under.
	clientCAs *x509.CertPool
}

func newAccess(a config.Admin, clientCAs *x509.CertPool) *access {
	return &access{callers: a.Callers, loopback: a.LoopbackScopes, clientCAs: clientCAs}
}

// caller is what a request proved about its sender.
type caller struct {
	name   string // "" for an anonymous (loopback or unknown) caller
	scopes config.Scopes
	// badToken: a token was presented and matched no caller.
	badToken bool
	// ambient: the scopes come with the connection (loopback, or a
	// client certificate), as a browser's cookies do, not with a token;
	// loopback: from loopback's.
	ambient, loopback bool
	// crossSite: ambient scopes withheld from a browser page of another
	// site (see fromAnotherSite).
	crossSite bool
	// foreignHost: loopback's scopes withheld from a request whose Host
	// is not a loopback name or address (see callerOf).
	foreignHost bool
}

// known reports whether c is a caller, not a stranger: named by its token
// or certificate, or granted scopes by its connection (loopback's).
func (c caller) known() bool { return c.name != "" || c.scopes != 0 }

// who names c in a log line: its name, or "loopback" for loopback's
// scopes (the line names the peer too).
func (c caller) who() string {
	if c.name == "" && c.loopback {
		return "loopback"
	}
	return c.name
}

// identify finds the caller of a request from its transport (peer address
// and verified client certificate) and its token (token, "" for none).
// A presented token that matches no caller makes the request a stranger
// even from loopback: a mistyped token must fail loudly, not fall back.
func (a *access) identify(peer netip.Addr, cs *tls.ConnectionState, token string) caller {
	if token != "" {
		sum := sha256.Sum256([]byte(token))
		found := -1
		for i := range a.callers {
			// Every caller is compared, in constant time, whatever matched.
			if subtle.ConstantTimeCompare(sum[:], a.callers[i].TokenHash[:]) == 1 && a.callers[i].Certificate == "" {
				found = i
			}
		}
		if found < 0 {
			return caller{badToken: true}
		}
		return caller{name: a.callers[found].Name, scopes: a.callers[found].Scopes}
	}
	if leaf := a.verifiedLeaf(cs); leaf != nil {
		if c, ok := a.byCertificate(leaf); ok {
			return c
		}
	}
	if peer.IsLoopback() {
		return caller{scopes: a.loopback, ambient: true, loopback: true}
	}
	return caller{}
}

// verifiedLeaf returns the client certificate of cs when one of its
// verified chains ends at a client CA in force and each of its
// certificates is valid now (a connection outlives the certificates its
// handshake verified), else nil.
func (a *access) verifiedLeaf(cs *tls.ConnectionState) *x509.Certificate {
	if cs == nil || a.clientCAs == nil {
		return nil
	}
	now := time.Now()
	for _, chain := range cs.VerifiedChains {
		if slices.ContainsFunc(chain, func(c *x509.Certificate) bool { return now.Before(c.NotBefore) || now.After(c.NotAfter) }) {
			continue
		}
		anchor := chain[len(chain)-1]
		// An anchor of the pool verifies against it as itself: no
		// signature is checked, only its presence and validity.
		if _, err := anchor.Verify(x509.VerifyOptions{Roots: a.clientCAs, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}}); err == nil {
			return chain[0]
		}
	}
	return nil
}

// byCertificate finds the caller whose certificate name is cert's common
// name or one of its DNS names.
func (a *access) byCertificate(cert *x509.Certificate) (caller, bool) {
	for _, c := range a.callers {
		if c.Certificate == "" {
			continue
		}
		if c.Certificate == cert.Subject.CommonName {
			return caller{name: c.Name, scopes: c.Scopes, ambient: true}, true
		}
		for _, dns := range cert.DNSNames {
			if c.Certificate == dns {
				return caller{name: c.Name, scopes: c.Scopes, ambient: true}, true
			}
		}
	}
	return caller{}, false
}

// requestToken returns the caller token of r: Sluice-Token, or, unless the
// endpoint's Authorization belongs to the described client, a Bearer
// Authorization.
func requestToken(r *http.Request, authorizationIsClients bool) string {
	if t := r.Header.Get(TokenHeader); t != "" {
		return t
	}
	if authorizationIsClients {
		return ""
	}
	if v := r.Header.Get("Authorization"); len(v) > 7 && strings.EqualFold(v[:7], "bearer ") {
		return strings.TrimSpace(v[7:])
	}
	return ""
}

// guard wraps an admin endpoint: only callers holding need reach h. A
// stranger gets 401 (and nothing of h's: no quota is spent, nothing is
// revealed); a known caller without the scope gets 403. Every answer, h's
// or the refusal, is Cache-Control: no-store: it is the caller's, known by
// what a shared cache does not key by (Sluice-Token, a client certificate,
// a loopback address). A known caller's connection is marked a caller's
// (markCaller), to be closed to make room only after strangers'.
func (s *Server) guard(need config.Scopes, authorizationIsClients bool, h func(http.ResponseWriter, *http.Request, caller)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header()["Cache-Control"] = noStore
		c := s.callerOf(r, authorizationIsClients)
		if c.known() {
			markCaller(r)
		}
		if !c.scopes.Has(need) {
			s.refuse(w, c, need, authorizationIsClients)
			return
		}
		h(w, r, c)
	}
}

// noStore is the Cache-Control of guard's answers; never modified.
var noStore = []string{"no-store"}

// callerOf identifies the caller of r with the configuration in force. On
// an endpoint whose browser headers and Host are the caller's own (all but
// forward-auth's, whose are the described client's), scopes that come with
// the connection are withheld from a browser page of another site, and
// loopback's from every request whose Host is not a loopback name or
// address, browser headers or not: a page whose name is rebound to
// 127.0.0.1 is plain http, to which a browser sends neither Sec-Fetch-Site
// nor, on a same-origin GET, Origin; only its Host tells it apart. Such a
// request is a stranger's: a program calling by another name, the host's
// own included, sends a token.
func (s *Server) callerOf(r *http.Request, authorizationIsClients bool) caller {
	c := s.state.Load().access.identify(peerIP(r), r.TLS, requestToken(r, authorizationIsClients))
	if !c.ambient || c.scopes == 0 || authorizationIsClients {
		return c
	}
	if s.fromAnotherSite(r, c.loopback) {
		return caller{crossSite: true}
	}
	if c.loopback && !loopbackHost(r.Host) {
		return caller{foreignHost: true}
	}
	return c
}

// fromAnotherSite reports whether r is a browser's on behalf of a page
// that is not the admin listener's own: a state-changing request from
// another origin (Sec-Fetch-Site, else Origin against Host: cross-site
// request forgery); a read a page of another site (or a sibling, same-site)
// makes — a fetch, an image, a frame, a script: anything but the top-level
// navigation a link makes, whose answer only the browser's user sees —
// which it cannot read, but which spends the caller's slots (the scrapes
// and dashboard reads answered at once) and its work on that page's
// behalf; a prefetch or prerender (Sec-Purpose, or the older Purpose,
// holding prefetch) that is not same-origin, which a page of any site
// asks for by its speculation rules and a browser sends as a navigation
// no one made (Sec-Fetch-Site none) — a browser discards a prefetch
// answered with a status other than 2xx and fetches the page anew when
// its user opens it; or, for loopback's scopes, a browser's request (one
// with Sec-Fetch-Site or Origin) whose Host is not a loopback name or
// address (a name of another site rebound to 127.0.0.1, whose page could
// read the answers), answered as a browser's (refuse). A browser too old
// to send Sec-Fetch-Site is told apart by Origin, which it sends on a
// state-changing request only.
func (s *Server) fromAnotherSite(r *http.Request, loopback bool) bool {
	site := r.Header.Get("Sec-Fetch-Site")
	if loopback && (site != "" || r.Header.Get("Origin") != "") && !loopbackHost(r.Host) {
		return true
	}
	if site != "same-origin" && (holdsPrefetch(r.Header.Values("Sec-Purpose")) || holdsPrefetch(r.Header.Values("Purpose"))) {
		return true
	}
	if site == "cross-site" || site == "same-site" {
		dest := r.Header.Get("Sec-Fetch-Dest")
		if r.Header.Get("Sec-Fetch-Mode") != "navigate" || dest != "document" && dest != "" {
			return true
		}
	}
	return s.crossOrigin.Check(r) != nil
}

// holdsPrefetch reports whether one of values, the field lines of
// Sec-Purpose (a list of tokens with parameters, "prefetch;prerender") or
// Purpose, names the purpose prefetch, in any case.
func holdsPrefetch(values []string) bool {
	for _, v := range values {
		for item := range strings.SplitSeq(v, ",") {
			token, _, _ := strings.Cut(item, ";")
			if strings.EqualFold(strings.TrimSpace(token), "prefetch") {
				return true
			}
		}
	}
	return false
}

// loopbackHost reports whether host, a request's Host with or without a
// port, names this machine's loopback and nothing else: localhost or a
// name under .localhost (RFC 6761: never sent to DNS, so no one else can
// rebind it), with or without the final dot, or a loopback address
// (127.0.0.0/8, ::1). An empty Host (HTTP/1.0) names no other site: a
// browser always sends one.
func loopbackHost(host string) bool {
	h := strings.ToLower(strings.TrimSuffix(hostOnlyOf(host), "."))
	if h == "" || h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return true
	}
	a, err := netip.ParseAddr(h)
	return err == nil && a.Unmap().IsLoopback()
}

// hostOnlyOf returns host without its port and an IPv6 address's brackets.
func hostOnlyOf(host string) string {
	if h, _, err := net.SplitHostPort(host); err == nil {
		return h
	}
	return strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
}

// refuseCaller answers a caller that lacks need: 401 when it is not known
// (no credentials, or a token nobody holds), 403 when it is, challenged,
// when it came by a token, with error="insufficient_scope" and the scope
// needed (RFC 6750 §3.1); a caller by client certificate has no token to
// replace.
func (s *Server) refuseCaller(w http.ResponseWriter, c caller, need config.Scopes) {
	s.refuse(w, c, need, false)
}

// refuse is refuseCaller on an endpoint whose Authorization may be the
// described client's (authorizationIsClients), where a 401 names only
// Sluice-Token, the header a caller's token is read from there.
func (s *Server) refuse(w http.ResponseWriter, c caller, need config.Scopes, authorizationIsClients bool) {
	s.metrics.refusedCallers.WithLabelValues(need.String()).Inc()
	if c.crossSite {
		writeJSONProblem(w, http.StatusForbidden, "Forbidden", "A browser page of another site holds none of the scopes loopback or a client certificate grant, "+
			"and a browser holds loopback's only at localhost or a loopback address (open http://localhost:<port>/…): "+
			"otherwise send a caller token as Authorization: Bearer <token> or "+TokenHeader+": <token>.")
		return
	}
	if c.name == "" {
		// A stranger keeps no connection open: its slot is a caller's.
		w.Header().Set("Connection", "close")
		challenge := `Bearer realm="sluice"`
		if c.badToken {
			challenge += `, error="invalid_token"` // RFC 6750 §3.1
		}
		w.Header().Set("WWW-Authenticate", challenge)
		detail := "This endpoint needs a caller token with the " + need.String() + " scope: send it as Authorization: Bearer <token> or " + TokenHeader + ": <token> (sluice token makes one)."
		if authorizationIsClients {
			detail = "This endpoint needs a caller token with the " + need.String() + " scope: send it as " + TokenHeader +
				": <token> (sluice token makes one); its Authorization is the described client's, never read as a caller's token."
		}
		if c.badToken {
			detail = "The token matches no caller of this server."
		}
		if c.foreignHost {
			detail = "Loopback's scopes are granted only to a request whose Host is localhost or a loopback address (call http://localhost:<port>/…): " +
				"a name that is not loopback's may be another site's, rebound to 127.0.0.1; otherwise send a caller token as Authorization: Bearer <token> or " + TokenHeader + ": <token>."
		}
		writeJSONProblem(w, http.StatusUnauthorized, "Unauthorized", detail)
		return
	}
	if !c.ambient {
		// RFC 6750 §3.1: the token is valid, its privileges short of need.
		w.Header().Set("WWW-Authenticate", `Bearer realm="sluice", error="insufficient_scope", scope="`+
			strings.ReplaceAll(need.String(), ",", " ")+`"`)
	}
	writeJSONProblem(w, http.StatusForbidden, "Forbidden", "The caller "+c.name+" does not hold the "+need.String()+" scope.")
}

// peerIP returns the IP address of r's peer, or the zero Addr when it has
// none (see ipOfPeer).
func peerIP(r *http.Request) netip.Addr {
	local, _ := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	return ipOfPeer(local, r.RemoteAddr)
}

// ipOfPeer returns the IP address of a peer whose address is remote
// ("ip:port") on a connection accepted on local, or the zero Addr when it
// has none: a peer on a Unix-domain socket listener has none, whatever
// remote holds (the path the client bound its end of the socket to, which
// it chooses and which may read as an address, "127.0.0.1:1").
func ipOfPeer(local net.Addr, remote string) netip.Addr {
	if sockaddr.IsUnix(local) {
		return netip.Addr{}
	}
	if ap, err := netip.ParseAddrPort(remote); err == nil {
		return ap.Addr().Unmap()
	}
	return netip.Addr{}
}
