package httplimit

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/netip"
	"strings"
)

// requestFacts are what a rule's key may read of one request: the request,
// its identity and, found once when a key first needs them, its peer and
// client address.
type requestFacts struct {
	r  *http.Request
	id *Identity
	// path is the request's cleaned path (see cleanPath).
	path string
	// client: the facts of a Requester, not of a request (DecideFor): no
	// peer, no body; user, addr, host and headers as the Requester states
	// them.
	client bool
	// peek: the request spends nothing (DecideFor's cost 0, a standing's
	// read), of a rule with a cost of its own neither.
	peek     bool
	user     string
	peerDone bool
	peer     netip.Addr
	trusted  bool
	addrDone bool
	addr     netip.Addr
	// reqBody is the body's form or JSON fields, read for keys of them.
	reqBody requestBody
}

func (f *requestFacts) peerTrusted(id *identifier) bool {
	if f.client {
		return false
	}
	if !f.peerDone {
		f.peer, f.trusted = id.peer(f.r)
		f.peerDone = true
	}
	return f.trusted
}

// clientAddr returns the client's address, through trusted proxies.
func (f *requestFacts) clientAddr(id *identifier) netip.Addr {
	if f.client || f.addrDone {
		return f.addr
	}
	f.peerTrusted(id)
	f.addr, f.addrDone = clientAddr(f.r.Header, f.peer, f.trusted, id.isTrusted, id.useForwarded), true
	return f.addr
}

// ruleKey returns the store key of r's state under ru, matched by pattern
// pat with wildcards pm; false when an attribute is absent and the rule's
// fallback is to skip. Keys of the client alone are the client's store key;
// others are built in res.keyBuf and taken from m.ruleKeys (see keyCache).
// shared reports that the key holds nothing of the client's: only what
// every client shares (see rule.shared), the value FallbackShared puts for
// an absent one and ambiguousValue, which every request of the rule whose
// value upstreams read differently shares (a browser sends a cookie once
// per Path or Domain), so that a refusal under it is not the client's
// doing.
func (m *Middleware) ruleKey(ru *rule, f *requestFacts, pat int, pm *pathMatch, res *Result) (key string, shared, ok bool) {
	if ru.clientOnly {
		return f.id.key, false, true
	}
	buf := append(res.keyBuf[:0], ru.keyPrefix...)
	shared = true
	for i := range ru.parts {
		if i > 0 {
			buf = append(buf, '|')
		}
		kp := &ru.parts[i]
		start := len(buf)
		var ok bool
		if buf, ok = m.appendPart(buf, kp, ru, f, pat, pm); ok {
			// No value of a request is written as ambiguousValue.
			shared = shared && (kp.shared() || string(buf[start:]) == ambiguousValue)
			continue
		}
		switch ru.fallback {
		case FallbackSkip:
			res.keyBuf = buf
			return "", false, false
		case FallbackShared:
			buf = append(buf, sharedValue...)
		default:
			buf = m.appendFallbackIP(buf, f)
			shared = false
		}
	}
	res.keyBuf = buf
	return m.ruleKeys.key(buf), shared, true
}

// appendFallbackIP appends what FallbackIP puts for an absent value: the
// client's address, grouped as the client's own is ("ip:" and the group).
// A client without one — a DecideFor caller that gave no IP, whose user,
// API key, token or subject names it, or a Unix socket's peer — is keyed
// by its own subject instead ("user:alice", "ext:…"; an IP client of no
// address is "ip:unknown" either way): each client its own count, never
// one count that every such client shares, which only FallbackShared asks
// for. A subject is no value of the key, kept or hashed (see appendSubject).
func (m *Middleware) appendFallbackIP(buf []byte, f *requestFacts) []byte {
	if a := f.clientAddr(m.id); a.IsValid() {
		return appendAddrGroup(append(buf, "ip:"...), a, m.id.ipv4Prefix, m.id.ipv6Prefix)
	}
	return appendSubject(buf, f.id.Subject)
}

// appendSubject appends a client's subject as a rule's store key keeps it:
// as it is, or "ext#" and 32 hex digits of the SHA-256 of the caller's
// subject after "ext:" when it is longer than maxKeySubject (a caller's own
// "ext:…" may be as long as a store key) or holds a '|', which joins a
// key's values: as it is, subject "ext:m|n" without a value of its own
// ("ext:m|n|ext:m|n" under FallbackIP) and "ext:m|n|ext:m" with the value
// "n" would be one key. Only a caller's own subject may be either. No
// subject, kept or hashed, is a value appendKeyValue makes, whatever the
// value's text: a subject holds a ':' or starts with its kind and '#'
// ("user#…", "ext#…"); a value kept as it is holds neither, a hashed one is
// '#' and hex alone. So no request's value spends a client's count.
func appendSubject(buf []byte, subject string) []byte {
	if len(subject) > maxKeySubject || strings.IndexByte(subject, '|') >= 0 {
		sum := sha256.Sum256([]byte(strings.TrimPrefix(subject, "ext:")))
		return hex.AppendEncode(append(buf, hashedSubject...), sum[:16])
	}
	return append(buf, subject...)
}

// hashedSubject starts a caller's subject kept hashed in a rule's store
// key (see appendSubject), as "user#" starts a user id kept hashed.
const hashedSubject = "ext#"

// appendPart appends the value of one attribute of r to buf, or reports
// that it is absent.
func (m *Middleware) appendPart(buf []byte, kp *keyPart, ru *rule, f *requestFacts, pat int, pm *pathMatch) ([]byte, bool) {
	id := m.id
	switch kp.kind {
	case KeyClient:
		return appendSubject(buf, f.id.Subject), true
	case KeyAPIKey:
		if f.id.Kind == KindAPIKey {
			return append(buf, f.id.Subject...), true
		}
		if f.client {
			return buf, false
		}
		// An unlisted key is believed only where UnknownKeys makes it a
		// client of its own: made-up keys mint no quota of a rule either.
		if raw, ok := id.apiKey(f.r.Header); ok {
			if kid, listed := id.resolveKey(raw, id.unlistedAsKey); kid != nil && (listed || id.unlistedAsKey) {
				return append(buf, kid.Subject...), true
			}
		}
	case KeyUser:
		user := f.user
		if !f.client && id.userHeader != "" && f.peerTrusted(id) {
			user = trustedHeader(f.r.Header, id.userHeader)
		}
		if user != "" && len(user) <= maxCredentialLen {
			return appendKeyValue(append(buf, "user:"...), user, false), true
		}
		if f.id.Kind == KindUser { // the user a verified token names
			return append(buf, f.id.Subject...), true
		}
	case KeyIP:
		if a := f.clientAddr(id); a.IsValid() {
			return appendAddrGroup(append(buf, "ip:"...), a, kp.v4, kp.v6), true
		}
	case KeyHost:
		if h := hostOnly(f.r.Host); h != "" {
			return appendKeyValue(buf, hostValue(h), true), true
		}
	case KeyRule:
		return append(buf, '*'), true
	case KeyURLPath:
		// One resource, one count, however its path is spelled to an
		// upstream that ignores case, a trailing slash or path parameters.
		p := withoutParams(f.path)
		if u, ok := unslashed(p); ok {
			p = u
		}
		return appendKeyValue(buf, p, true), true
	case KeyQuery:
		v, ambiguous := queryValue(f.r.URL.RawQuery, kp.header)
		if ambiguous { // every such request of the rule together, whatever its fallback
			return append(buf, ambiguousValue...), true
		}
		if v != "" {
			return appendKeyValue(buf, v, false), true
		}
	case KeyClaim:
		if v := f.id.claims.claim(kp.header); v != "" {
			return appendKeyValue(buf, v, false), true
		}
	case KeyForm, KeyJSON:
		if !f.client {
			var v string
			var ambiguous bool
			if kp.kind == KeyForm {
				v, ambiguous = f.formValue(kp.header)
			} else {
				v, ambiguous = f.jsonValue(kp.header)
			}
			if ambiguous { // or unreadable: every such request of the rule together, whatever its fallback
				return append(buf, ambiguousValue...), true
			}
			if v != "" && len(v) <= maxCredentialLen {
				return appendKeyValue(buf, strings.ToLower(v), false), true
			}
		}
	case KeyCookie:
		v, ambiguous := cookieValue(f.r.Header, kp.header)
		if ambiguous { // every such request of the rule together, whatever its fallback
			return append(buf, ambiguousValue...), true
		}
		if v != "" {
			return appendKeyValue(buf, v, false), true
		}
	case KeyRoute:
		if pat < 0 {
			return append(buf, '*'), true
		}
		return append(buf, ru.paths[pat].key...), true
	case KeyHeader:
		// A DecideFor caller's headers are its word, as its User is. The
		// last value is read whoever is believed, so that a key reads
		// one value of a header whichever way it is believed. A header
		// any client sets, sent with values that differ, is the client's
		// every one: upstreams read different ones (Go's Header.Get the
		// first), so every such request of the rule counts together. A
		// value is read without the whitespace around it (see trimValue),
		// as it reaches an upstream over HTTP/1.1 whatever it came with.
		if !f.client && ru.anyHeader && valuesDiffer(f.r.Header[kp.header]) {
			return append(buf, ambiguousValue...), true
		}
		if f.client || ru.anyHeader || f.peerTrusted(id) {
			if v := trimValue(trustedHeader(f.r.Header, kp.header)); v != "" {
				return appendKeyValue(buf, v, false), true
			}
		}
	case KeyPath:
		if pat >= 0 {
			if v := pm.value(kp.wild[pat]); v != "" {
				return appendKeyValue(buf, v, false), true
			}
		}
	}
	return buf, false
}

// valuesDiffer reports whether vs holds two values that differ but for the
// whitespace around them (see trimValue).
func valuesDiffer(vs []string) bool {
	for _, v := range vs[min(1, len(vs)):] {
		if trimValue(v) != trimValue(vs[0]) {
			return true
		}
	}
	return false
}

// sharedValue stands in a rule's store key for an absent value under
// FallbackShared; appendKeyValue hashes a value that is sharedValue, so
// that a client sending it does not spend the count of every request
// without one.
const sharedValue = "-"

// ambiguousValue stands in a rule's store key for a body field, query
// parameter or cookie that upstreams may read as different values (see
// requestFacts.formValue and jsonValue, queryValue, cookieValue), and for
// a body field in a body of its type that could not be read (too long,
// malformed): one count for every such request, which no value, kept or
// hashed, is written as.
const ambiguousValue = "~"

// maxKeySubject is the longest client subject a rule's store key keeps as
// it is; every subject this package makes of a key, a user or an address
// is shorter.
const maxKeySubject = 128

// hostValue returns the host name h (without port) as a "host" key reads
// it: an IPv6 literal in its one canonical spelling ("2001:DB8:0::A" is
// 2001:db8::a), without a zone, which names an interface, not a host;
// any other name as it is (appendKeyValue takes it in lower case).
func hostValue(h string) string {
	if strings.IndexByte(h, ':') < 0 {
		return h
	}
	if a, err := netip.ParseAddr(h); err == nil {
		return a.WithZone("").String()
	}
	return h
}

// appendKeyValue appends v as a store key keeps it: as it is when it is at
// most 64 characters of A-Z a-z 0-9 . _ - @ (in lower case when lower is
// set) but for sharedValue, else "#" and 32 hex digits of the SHA-256 of v
// (of v in lower case when lower is set), so that no value can shape a
// store key (its length, Redis hash tags, the separators) or be taken for
// the absence of one.
func appendKeyValue(buf []byte, v string, lower bool) []byte {
	if lower {
		if len(v) > 64 || !plainID(v) {
			v = strings.ToLower(v) // hashed below: one hash for every case
		}
	}
	if len(v) <= 64 && v != sharedValue && plainID(v) {
		if !lower {
			return append(buf, v...)
		}
		for i := 0; i < len(v); i++ {
			c := v[i]
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			buf = append(buf, c)
		}
		return buf
	}
	sum := sha256.Sum256([]byte(v))
	return hex.AppendEncode(append(buf, '#'), sum[:16])
}

// appendAddrGroup appends addr's group: its /v4 (IPv4) or /v6 (IPv6)
// prefix, or the address itself at full length; "unknown" when addr is
// not an IP (a Unix socket's peer). An IPv6 zone is left out, as a prefix
// holds none: it names an interface, not a client, and its text could
// shape a store key.
func appendAddrGroup(buf []byte, addr netip.Addr, v4, v6 int) []byte {
	if !addr.IsValid() {
		return append(buf, "unknown"...)
	}
	addr = addr.WithZone("")
	bits := v4
	if addr.Is6() {
		bits = v6
	}
	if p, err := addr.Prefix(bits); err == nil && p.Bits() != addr.BitLen() {
		return p.AppendTo(buf)
	}
	return addr.AppendTo(buf)
}
