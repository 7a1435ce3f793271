package httplimit

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/netip"
	"strings"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/config"
)

// Identity kinds, in order of precedence.
const (
	KindAPIKey = "api-key"
	KindUser   = "user"
	KindIP     = "ip"
)

// maxCredentialLen bounds an API key or user id; longer values are not
// believed (the client is then known by its address).
const maxCredentialLen = 1024

// Identity is who a request is limited as.
type Identity struct {
	// Kind is KindAPIKey, KindUser or KindIP.
	Kind string
	// Subject is the store key: "key:" and the hex SHA-256 of the API key,
	// "user:" and the user id (or "user#" and a hash of an unusual one),
	// or "ip:" and the client's address prefix. It never holds a raw API key.
	Subject string
	// Plan is the plan the client is on.
	Plan *sluice.Plan
	// KeyName is the configured label of a known API key.
	KeyName string
}

// identifier resolves identities from a configuration.
type identifier struct {
	cfg      *config.Identity
	policy   *sluice.Policy
	keys     map[[32]byte]*config.Key
	subjects map[*config.Key]string // precomputed subjects of known keys
	trusted  []netip.Prefix
}

func newIdentifier(c *config.Config) *identifier {
	id := &identifier{cfg: &c.Identity, policy: c.Policy, keys: c.Keys,
		subjects: map[*config.Key]string{}, trusted: c.Identity.TrustedProxies}
	for h, k := range c.Keys {
		id.subjects[k] = "key:" + hex.EncodeToString(h[:])
	}
	return id
}

func (id *identifier) isTrusted(a netip.Addr) bool {
	if !a.IsValid() {
		return false
	}
	for _, p := range id.trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// identify returns the identity of r: API key > user id > client address.
// User and plan headers are believed only from trusted proxies.
func (id *identifier) identify(r *http.Request) Identity {
	peer := peerAddr(r.RemoteAddr)
	trusted := id.isTrusted(peer)

	plan := (*sluice.Plan)(nil)
	if trusted && id.cfg.PlanHeader != "" {
		if name := r.Header.Get(id.cfg.PlanHeader); name != "" {
			plan = id.policy.Plan(name)
		}
	}
	orDefault := func(p *sluice.Plan, name string) *sluice.Plan {
		if p != nil {
			return p
		}
		return id.policy.Plan(name)
	}

	if key, ok := id.apiKey(r.Header); ok {
		sum := sha256.Sum256([]byte(key))
		if k := id.keys[sum]; k != nil {
			return Identity{Kind: KindAPIKey, Subject: id.subjects[k], Plan: k.Plan, KeyName: k.Name}
		}
		if id.cfg.UnknownKeys == "key" {
			return Identity{Kind: KindAPIKey, Subject: "key:" + hex.EncodeToString(sum[:]),
				Plan: orDefault(plan, id.policy.DefaultPlan)}
		}
		// An unknown key is limited as its address: made-up keys mint no quota.
	}
	if trusted && id.cfg.UserHeader != "" {
		if user := r.Header.Get(id.cfg.UserHeader); user != "" && len(user) <= maxCredentialLen {
			return Identity{Kind: KindUser, Subject: userSubject(user), Plan: orDefault(plan, id.policy.DefaultPlan)}
		}
	}
	addr := clientAddr(r.Header, peer, id.isTrusted, id.cfg.ForwardedHeader == "forwarded")
	return Identity{Kind: KindIP, Subject: id.ipSubject(addr), Plan: orDefault(plan, id.policy.AnonymousPlan)}
}

// apiKey returns the first API key found in the configured headers;
// Authorization is read as "Bearer <token>".
func (id *identifier) apiKey(h http.Header) (string, bool) {
	for _, name := range id.cfg.APIKeyHeaders {
		v := h.Get(name)
		if v == "" {
			continue
		}
		if name == "Authorization" {
			scheme, token, ok := strings.Cut(v, " ")
			if !ok || !strings.EqualFold(scheme, "Bearer") {
				continue
			}
			v = strings.TrimSpace(token)
		}
		if v != "" && len(v) <= maxCredentialLen {
			return v, true
		}
	}
	return "", false
}

// ipSubject groups addr by the configured prefix length; "ip:unknown" when
// the peer is not an IP (a Unix socket).
func (id *identifier) ipSubject(addr netip.Addr) string {
	if !addr.IsValid() {
		return "ip:unknown"
	}
	bits := id.cfg.IPv4Prefix
	if addr.Is6() {
		bits = id.cfg.IPv6Prefix
	}
	p, err := addr.Prefix(bits)
	if err != nil {
		return "ip:" + addr.String()
	}
	if p.Bits() == addr.BitLen() {
		return "ip:" + addr.String()
	}
	return "ip:" + p.String()
}

// userSubject keeps short, plain user ids readable and hashes the others,
// so that no header value can shape a store key (Redis hash tags, length).
func userSubject(user string) string {
	if len(user) <= 64 && plainID(user) {
		return "user:" + user
	}
	sum := sha256.Sum256([]byte(user))
	return "user#" + hex.EncodeToString(sum[:16])
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
