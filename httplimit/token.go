package httplimit

import (
	"context"
	"strings"
	"time"
)

// A TokenVerifier vouches for bearer tokens — JSON Web Tokens signed by an
// identity provider, say — so that a client is limited as the user its
// token names, which no header a client writes can make it. See
// Options.Tokens; package jwt has one.
type TokenVerifier interface {
	// VerifyToken returns what token says of its client, or an error when
	// the verifier does not vouch for it: a signature it cannot check or
	// that does not match, an issuer or audience it does not accept, an
	// expired token. It is called from request goroutines, concurrently,
	// for tokens the Middleware has not verified lately, with the
	// request's context.
	VerifyToken(ctx context.Context, token string) (TokenClaims, error)
}

// TokenClaims is what a verified token says of its client.
type TokenClaims struct {
	// Subject names the client: the user id it is limited as (Identity
	// KindUser). Empty: the token does not vouch for anyone.
	Subject string
	// Plan names the client's plan. Empty, or no plan of the Middleware:
	// the first of Plans that names one, else the plan a trusted plan
	// header names, else DefaultPlan.
	Plan string
	// Plans are other names the client's plan may have, in order, for a
	// token whose plan claim lists several (its groups or roles): the
	// first that names a plan of the Middleware is the plan when Plan
	// names none.
	Plans []string
	// Expires is when the token stops vouching for its client. Zero: it
	// does not expire. The Middleware believes a verified token until then,
	// and for at most 5 minutes before it asks the verifier again.
	Expires time.Time
	// Claims are the token's claims that rules may key by (Rule.Key
	// "claim:<name>"), by name: a tenant, the client application. The
	// Middleware keeps the map with the token and never changes it. Nil:
	// none.
	Claims map[string]string
}

// Bounds of the verified tokens the Middleware remembers.
const (
	// maxTokenLen is the longest bearer token sent to the verifier; a
	// longer one is not believed (the client is then its address).
	maxTokenLen = 8 << 10
	// maxCachedTokenLen is the longest token remembered once verified;
	// longer ones (rare: a signed token with a few claims is under 1,500
	// bytes) are verified on every request.
	maxCachedTokenLen = 2 << 10
	// tokenCacheBuckets is the size of the cache of verified tokens, in
	// buckets of 4: at most 8,192 tokens, about 20 MB at the longest.
	tokenCacheBuckets = 1 << 11
	// maxTokenTrust is the longest a verified token is believed before it
	// is verified again, whatever its expiry: a key withdrawn from the
	// verifier's set stops vouching for its tokens within it.
	maxTokenTrust = 5 * time.Minute
	// refusedTokenMemory is how long a token the verifier refused is
	// refused without asking it again: a client repeating a forged or
	// expired token costs one verification in that time, and a token
	// refused because the verifier had no keys yet is tried again soon.
	refusedTokenMemory = 10 * time.Second
)

// tokens resolves bearer tokens to identities through a TokenVerifier,
// remembering what it said in a digest cache of its own.
type tokens struct {
	verifier TokenVerifier
	cache    *digestCache
	budget   *refusalBudget
	now      func() time.Time
}

func newTokens(v TokenVerifier, now func() time.Time) *tokens {
	return &tokens{verifier: v, cache: digestCacheOf(tokenCacheBuckets), budget: newRefusalBudget(), now: now}
}

// isToken reports whether a bearer credential is a signed token rather
// than an API key: a JSON Web Signature in compact form, three parts
// joined by dots, the first a JSON object in base64url ("ey": "{" and a
// quote or a space). API keys with two dots (SendGrid's "SG.….…") stay
// API keys.
func isToken(v string) bool { return strings.HasPrefix(v, "ey") && strings.Count(v, ".") == 2 }

// resolve returns the identity token vouches for, made by user from its
// subject, with the plan the token names (nil when it names none the
// policy has), or nil when the verifier refuses it. A token not remembered
// is verified only if from, the client's address group ("" for none: no
// budget), has not spent its budget of refusals (see refusalBudget); from
// is called only then. The identity is shared: read it, never write it.
func (t *tokens) resolve(ctx context.Context, token string, from func() string, user func(string) (key, sub string), policy *Policy) *Identity {
	if len(token) > maxTokenLen {
		return nil
	}
	now := t.now()
	nowMicros := now.UnixMicro()
	cacheable := len(token) <= maxCachedTokenLen
	var h uint64
	if cacheable {
		h = t.cache.hash(token)
		if e := t.cache.get(token, h); e != nil && nowMicros < e.expires {
			if !e.listed {
				return nil
			}
			return &e.id
		}
	}
	addr := from()
	if addr != "" && t.budget.spent(addr, nowMicros) {
		return nil
	}
	claims, err := t.verifier.VerifyToken(ctx, token)
	if err != nil || claims.Subject == "" || !claims.Expires.IsZero() && !now.Before(claims.Expires) {
		if ctx.Err() == nil {
			if cacheable {
				t.cache.putRefusal(token, h, now.Add(refusedTokenMemory).UnixMicro(), nowMicros)
			}
			if addr != "" {
				t.budget.refused(addr, nowMicros)
			}
		}
		return nil
	}
	key, sub := user(claims.Subject)
	id := Identity{Kind: KindUser, Subject: sub, key: key}
	if len(claims.Claims) > 0 {
		id.claims = &tokenClaims{byName: claims.Claims}
	}
	if claims.Plan != "" {
		id.Plan = policy.Plan(claims.Plan)
	}
	for _, name := range claims.Plans {
		if id.Plan != nil {
			break
		}
		id.Plan = policy.Plan(name)
	}
	until := now.Add(maxTokenTrust)
	if !claims.Expires.IsZero() && claims.Expires.Before(until) {
		until = claims.Expires
	}
	if !cacheable {
		return &id
	}
	return &t.cache.putUntil(token, h, true, id, until.UnixMicro()).id
}
