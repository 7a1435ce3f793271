package httplimit

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/netip"
	"net/textproto"
	"slices"
	"strings"
	"time"
)

// Identity kinds, in order of precedence.
const (
	KindAPIKey = "api-key"
	KindUser   = "user"
	KindIP     = "ip"
	// KindExternal is a client a DecideFor caller names itself
	// (Requester.Subject), above every other kind.
	KindExternal = "external"
)

// maxCredentialLen bounds an API key or user id; longer values are not
// believed (the client is then known by its address).
const maxCredentialLen = 1024

// Identity is who a request is limited as.
type Identity struct {
	// Kind is KindAPIKey, KindUser or KindIP; KindExternal for a
	// Requester's Subject (DecideFor).
	Kind string
	// Subject names the client: "key:" and the hex SHA-256 of the API key,
	// "user:" and the user id (or "user#" and a hash of an unusual one),
	// "ip:" and the client's address prefix, or "ext:" and a Requester's
	// Subject. It never holds a raw API
	// key. The store key of the client's state is the Middleware's scope,
	// "/" and Subject (see Options.Scope).
	Subject string
	// Plan is the plan the client is on.
	Plan *Plan
	// KeyName is the configured label of a known API key.
	KeyName string

	// key is the store key (scope prefix and Subject, Subject a part of
	// it); empty in an Identity that no identifier made.
	key string
	// claims are the verified token's claims (TokenClaims.Claims), shared
	// and read-only; nil for other identities. A pointer keeps Identity
	// comparable.
	claims *tokenClaims
}

// tokenClaims are the claims of a verified token that rules may key by.
type tokenClaims struct{ byName map[string]string }

// claim returns the claim name of c, or "" (for a nil c too).
func (c *tokenClaims) claim(name string) string {
	if c == nil {
		return ""
	}
	return c.byName[name]
}

// identifier resolves identities by a middleware's options.
type identifier struct {
	policy *Policy
	prefix string                 // of every store key: the scope and "/"
	keys   map[[32]byte]*Identity // the identities of listed keys
	// apiKeyHeaders, userHeader and planHeader are the configured header
	// names in canonical form, so that reading them is one map access.
	apiKeyHeaders []apiKeyHeader
	userHeader    string
	planHeader    string
	trusted       []netip.Prefix
	// trustUnix: a peer on a Unix-domain socket is a trusted proxy
	// (Options.TrustUnixPeers).
	trustUnix bool
	// unlistedAsKey: an unlisted API key is a client of its own (UnknownKeys "key").
	unlistedAsKey bool
	// useForwarded: the forwarding header believed is Forwarded, not X-Forwarded-For.
	useForwarded bool
	// ipv4Prefix and ipv6Prefix group client addresses.
	ipv4Prefix, ipv6Prefix int
	digests                *digestCache
	// tokens verifies bearer tokens (Options.Tokens), read from
	// tokenHeaders; nil: none are.
	tokens       *tokens
	tokenHeaders []apiKeyHeader
}

// apiKeyHeader is a header that may carry an API key, or a token.
type apiKeyHeader struct {
	name   string // canonical
	bearer bool   // Authorization: read as "Bearer <token>"
	// tokens: a token header too, so a value shaped as a token is the
	// verifier's, never an API key.
	tokens bool
}

// newIdentifier returns the identifier of o (defaults applied) under policy,
// whose store keys start with prefix.
func newIdentifier(o *Options, policy *Policy, prefix string) *identifier {
	id := &identifier{policy: policy, prefix: prefix, keys: make(map[[32]byte]*Identity, len(o.Keys)),
		userHeader: canonical(o.UserHeader), planHeader: canonical(o.PlanHeader),
		trusted: masked(o.TrustedProxies), trustUnix: o.TrustUnixPeers, unlistedAsKey: o.UnknownKeys == unknownKeysKey,
		useForwarded: o.ForwardedHeader == forwardedRFC7239,
		ipv4Prefix:   o.IPv4Prefix, ipv6Prefix: o.IPv6Prefix,
		digests: newDigestCache(len(o.Keys))}
	if o.Tokens != nil {
		now := o.Clock
		if now == nil {
			now = time.Now
		}
		id.tokens = newTokens(o.Tokens, now)
		for _, name := range o.TokenHeaders {
			name = canonical(name)
			id.tokenHeaders = append(id.tokenHeaders, apiKeyHeader{name: name, bearer: name == "Authorization"})
		}
	}
	for _, k := range o.Keys {
		key, sub := id.keySubject(k.SHA256)
		id.keys[k.SHA256] = &Identity{Kind: KindAPIKey, Subject: sub, key: key, Plan: k.Plan, KeyName: k.Name}
	}
	for _, name := range o.APIKeyHeaders {
		name = canonical(name)
		isTokens := slices.ContainsFunc(id.tokenHeaders, func(h apiKeyHeader) bool { return h.name == name })
		id.apiKeyHeaders = append(id.apiKeyHeaders, apiKeyHeader{name: name, bearer: name == "Authorization", tokens: isTokens})
	}
	return id
}

// masked returns the prefixes ps in canonical form (host bits zero), an
// IPv4-mapped one of /96 or longer (::ffff:10.0.0.0/104) as its IPv4
// prefix (10.0.0.0/8): addresses are matched unmapped, and would never be
// in it.
func masked(ps []netip.Prefix) []netip.Prefix {
	out := make([]netip.Prefix, len(ps))
	for i, p := range ps {
		if a := p.Addr(); a.Is4In6() && p.Bits() >= 96 {
			p = netip.PrefixFrom(a.Unmap(), p.Bits()-96)
		}
		out[i] = p.Masked()
	}
	return out
}

func canonical(name string) string {
	if name == "" {
		return ""
	}
	return http.CanonicalHeaderKey(name)
}

// trustedHeader returns the last value of the header named canonical, for
// a header a trusted proxy sets (the user and plan headers, a rule's
// "header:" key): the value of the proxy nearest sluice. A proxy that
// appends its value instead of replacing the client's (Envoy's
// request_headers_to_add with append, a gRPC proxy adding metadata) puts
// it after any copy the client sent, as it appends to X-Forwarded-For;
// one that replaces it leaves one value. Values are never split at
// commas: a user id may hold one (an LDAP DN).
func trustedHeader(h http.Header, canonical string) string {
	if v := h[canonical]; len(v) > 0 {
		return v[len(v)-1]
	}
	return ""
}

// peer returns r's immediate peer (not valid when it has no IP address)
// and whether it is a trusted proxy: an address of TrustedProxies, or,
// with TrustUnixPeers, a peer on a Unix-socket listener.
//
// The listener, not RemoteAddr's text, says whether the peer is a Unix
// one (see unixListener): there RemoteAddr is the path the client bound
// its end of the socket to, which it chooses and which may read as an
// address ("198.51.100.7:1"). Without TrustUnixPeers a Unix peer has no
// address, whatever RemoteAddr holds, and is never trusted. With it,
// where every Unix peer may name any client in its forwarding headers, a
// RemoteAddr that holds an address (written by a PROXY protocol reader or
// a handler before the middleware) is judged by it, as on any listener.
// A request with no listener in its context is judged by RemoteAddr.
func (id *identifier) peer(r *http.Request) (netip.Addr, bool) {
	if !id.trustUnix {
		if unixListener(r) {
			return netip.Addr{}, false
		}
		a := peerAddr(r.RemoteAddr)
		return a, id.isTrusted(a)
	}
	if a := peerAddr(r.RemoteAddr); a.IsValid() {
		return a, id.isTrusted(a)
	}
	return netip.Addr{}, unixListener(r)
}

// isTrusted reports whether a is a trusted proxy's address. A zoned one
// (a link-local peer, zoned by the interface it came in on) is judged by
// its address: a prefix holds no zone.
func (id *identifier) isTrusted(a netip.Addr) bool {
	if !a.IsValid() {
		return false
	}
	a = a.WithZone("")
	for _, p := range id.trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// identify writes the identity of r to out: API key > the subject of a
// bearer token Tokens verifies > user id > client address. User and plan
// headers are believed only from trusted proxies, by their last value
// (see trustedHeader). A
// listed API key decides alone, so its requests never parse the peer
// address (and its identity is copied once, from the digest cache to out).
func (id *identifier) identify(r *http.Request, out *Identity) {
	key, hasKey := id.apiKey(r.Header)
	var subject, storeKey string
	if hasKey {
		kid, listed := id.resolveKey(key, id.unlistedAsKey)
		if listed {
			*out = *kid
			return
		}
		if kid != nil {
			subject, storeKey = kid.Subject, kid.key
		}
		// An unlisted key is its own client (subject set) or, by default,
		// limited as its address: made-up keys mint no quota.
	}
	peer, trusted := id.peer(r)

	plan := (*Plan)(nil)
	if trusted && id.planHeader != "" {
		if name := trustedHeader(r.Header, id.planHeader); name != "" {
			plan = id.policy.Plan(name)
		}
	}
	orDefault := func(p *Plan, name string) *Plan {
		if p != nil {
			return p
		}
		return id.policy.Plan(name)
	}

	if subject != "" {
		*out = Identity{Kind: KindAPIKey, Subject: subject, key: storeKey, Plan: orDefault(plan, id.policy.DefaultPlan)}
		return
	}
	if id.tokens != nil {
		from := func() string {
			_, sub := id.ipSubject(clientAddr(r.Header, peer, trusted, id.isTrusted, id.useForwarded))
			return sub
		}
		if tid := id.tokenIdentity(r, from); tid != nil {
			*out = *tid
			if out.Plan == nil { // the token names no plan of the policy
				out.Plan = orDefault(plan, id.policy.DefaultPlan)
			}
			return
		}
		// A token the verifier refuses names no one: the client is its
		// address, as with a made-up API key.
	}
	if trusted && id.userHeader != "" {
		if user := trustedHeader(r.Header, id.userHeader); user != "" && len(user) <= maxCredentialLen {
			key, sub := id.userSubject(user)
			*out = Identity{Kind: KindUser, Subject: sub, key: key, Plan: orDefault(plan, id.policy.DefaultPlan)}
			return
		}
	}
	addr := clientAddr(r.Header, peer, trusted, id.isTrusted, id.useForwarded)
	key, sub := id.ipSubject(addr)
	*out = Identity{Kind: KindIP, Subject: sub, key: key, Plan: orDefault(plan, id.policy.AnonymousPlan)}
}

// lookupKey is resolveKey returning a copy: the identity (zero when there
// is none) and whether the key is listed.
func (id *identifier) lookupKey(raw string, unlisted bool) (Identity, bool) {
	kid, listed := id.resolveKey(raw, unlisted)
	if kid == nil {
		return Identity{}, false
	}
	return *kid, listed
}

// resolveKey resolves a raw API key: the identity of a listed key (and
// true), else an identity with only the key's store key as Subject when
// unlisted is true (the key is a client of its own), or nil. The identity
// is shared (a digest cache entry's, or the listed key's): read it, never
// write it. Keys seen before are found in the digest cache without
// hashing; unlisted keys are cached only when they are clients of their
// own.
func (id *identifier) resolveKey(raw string, unlisted bool) (*Identity, bool) {
	cacheable := len(raw) <= maxCachedKeyLen
	var h uint64
	if cacheable {
		h = id.digests.hash(raw)
		if e := id.digests.get(raw, h); e != nil {
			if !e.listed && !unlisted {
				return nil, false
			}
			return &e.id, e.listed
		}
	}
	sum := sha256.Sum256([]byte(raw))
	k := id.keys[sum]
	switch {
	case k != nil:
		if cacheable {
			return &id.digests.put(raw, h, true, *k).id, true
		}
		return k, true
	case unlisted:
		key, sub := id.keySubject(sum)
		kid := Identity{Kind: KindAPIKey, Subject: sub, key: key}
		if cacheable {
			return &id.digests.put(raw, h, false, kid).id, false
		}
		p := new(Identity) // a key too long to cache: rare
		*p = kid
		return p, false
	}
	return nil, false
}

// keySubject returns the store key and the subject of an API key whose
// SHA-256 is sum: "key:" and the hex digest, after the scope prefix.
func (id *identifier) keySubject(sum [32]byte) (key, sub string) {
	var arr [128]byte
	b := append(append(arr[:0], id.prefix...), "key:"...)
	b = hex.AppendEncode(b, sum[:])
	key = string(b)
	return key, key[len(id.prefix):]
}

// apiKey returns the API key of the configured headers; Authorization is
// read as "Bearer <token>". Where several headers, or several copies of
// one header, carry one, they must agree: an upstream that reads another
// header than the first, or another copy (the last, as PHP behind FastCGI
// does), would act on another key, so a client could pair its own key
// with a made-up one that changes with every request. Keys that differ
// give the first of them that is listed, or none (the client is then
// known otherwise, by its address at last: made-up keys mint no quota).
func (id *identifier) apiKey(h http.Header) (string, bool) {
	first, found := "", false
	for i := range id.apiKeyHeaders {
		kh := &id.apiKeyHeaders[i]
		for _, raw := range h[kh.name] {
			v, ok := headerKey(raw, kh)
			switch {
			case !ok:
			case !found:
				first, found = v, true
			case v != first:
				return id.listedKey(h)
			}
		}
	}
	return first, found
}

// listedKey returns the first key of the configured headers, in every
// copy, that is listed, if any.
func (id *identifier) listedKey(h http.Header) (string, bool) {
	for i := range id.apiKeyHeaders {
		kh := &id.apiKeyHeaders[i]
		for _, raw := range h[kh.name] {
			if v, ok := headerKey(raw, kh); ok {
				if _, listed := id.resolveKey(v, false); listed {
					return v, true
				}
			}
		}
	}
	return "", false
}

// headerKey returns the API key that v, a value of header kh, carries, if
// any. The spaces and tabs around v are not the key's: HTTP/2 delivers
// them, and the request reaches an upstream over HTTP/1.1 without them
// (RFC 9110 §5.5), where it is served as the key without them.
func headerKey(v string, kh *apiKeyHeader) (string, bool) {
	v = textproto.TrimString(v)
	if v == "" {
		return "", false
	}
	if kh.bearer {
		token, ok := bearer(v)
		if !ok {
			return "", false
		}
		v = token
	}
	if kh.tokens && isToken(v) {
		return "", false // a signed token is the verifier's, never an API key
	}
	return v, v != "" && len(v) <= maxCredentialLen
}

// maxTokenCopies bounds the different tokens of one request put to the
// verifier.
const maxTokenCopies = 4

// tokenIdentity returns the identity of the first token of the token
// headers, in every copy, that the verifier vouches for (see
// tokens.resolve, from the client's address group), or nil. Tokens that
// differ are each tried, at most maxTokenCopies of them: an upstream that
// reads another header or copy than the first (the last, as PHP behind
// FastCGI does) acts on another token, so a forged one put first must not
// make a client with a verified one its address, a fresh quota at each.
// The identity is shared: read it, never write it.
func (id *identifier) tokenIdentity(r *http.Request, from func() string) *Identity {
	var tried [maxTokenCopies]string
	n := 0
	for _, th := range id.tokenHeaders {
		for _, raw := range r.Header[th.name] {
			v := strings.TrimSpace(raw)
			if th.bearer {
				v, _ = bearer(v)
			}
			if !isToken(v) || slices.Contains(tried[:n], v) {
				continue
			}
			if n == len(tried) {
				return nil
			}
			tried[n], n = v, n+1
			if tid := id.tokens.resolve(r.Context(), v, from, id.userSubject, id.policy); tid != nil {
				return tid
			}
		}
	}
	return nil
}

// bearer returns the credential of v, an Authorization header's value, of
// the Bearer scheme (RFC 6750).
func bearer(v string) (string, bool) {
	scheme, token, ok := strings.Cut(v, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	return token, token != ""
}

// ipSubject returns the store key and the subject of addr grouped by the
// configured prefix length: "ip:" and the prefix, or "ip:unknown" when the
// peer is not an IP (a Unix socket). Both are written into a stack buffer
// and allocated once.
func (id *identifier) ipSubject(addr netip.Addr) (key, sub string) {
	var arr [160]byte
	buf := append(append(arr[:0], id.prefix...), "ip:"...)
	buf = appendAddrGroup(buf, addr, id.ipv4Prefix, id.ipv6Prefix)
	key = string(buf)
	return key, key[len(id.prefix):]
}

// userSubject returns the store key and the subject of a user id: short,
// plain ids stay readable ("user:" and the id), the others are hashed
// ("user#" and 32 hex digits), so that no header value can shape a store
// key (Redis hash tags, length).
func (id *identifier) userSubject(user string) (key, sub string) {
	if len(user) <= 64 && plainID(user) {
		return scoped(id.prefix, "user:"+user)
	}
	sum := sha256.Sum256([]byte(user))
	var arr [128]byte
	b := append(append(arr[:0], id.prefix...), "user#"...)
	b = hex.AppendEncode(b, sum[:16])
	key = string(b)
	return key, key[len(id.prefix):]
}

func plainID(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-' || c == '@') {
			return false
		}
	}
	return true
}
