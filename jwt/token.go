package jwt

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	jose "github.com/go-jose/go-jose/v4"
	josejwt "github.com/go-jose/go-jose/v4/jwt"

	"github.com/sluice-dev/sluice/httplimit"
)

// times holds the claims go-jose reads as NumericDates. The others are
// read from the claims' map, so that a claim of the wrong type is judged
// as one not accepted (ErrClaims) rather than unreadable.
type times struct {
	Expiry    *josejwt.NumericDate `json:"exp,omitempty"`
	NotBefore *josejwt.NumericDate `json:"nbf,omitempty"`
	IssuedAt  *josejwt.NumericDate `json:"iat,omitempty"`
}

// VerifyToken returns the subject and the plan that token states once it
// has verified it, and until when it is accepted (Expires: its "exp" plus
// Options.Leeway, so that a caller that believes it until then, as
// httplimit's Middleware does, grants the leeway the Verifier grants), or
// an error that wraps exactly one of ErrMalformed, ErrKey, ErrSignature,
// ErrExpired and ErrClaims (see the package documentation for what is
// checked). A token without "exp" has a zero Expires: it does not expire.
//
// The token is read and its "alg" checked before any key is used. A token
// with a "kid" is verified only with the keys of that kid, one without
// with each key whose type fits its "alg" in turn, provided the set holds
// at most 4 such keys: when it holds more, a token without a "kid" is
// ErrKey and costs no verification. When none verifies it,
// the set is fetched again as for an unknown kid (see Options.MinRefresh)
// and the token verified with the keys fetched. ctx bounds only the wait
// for a fetch of Options.KeysURL that the token prompts; for a token of no
// key, its error is wrapped too.
func (v *Verifier) VerifyToken(ctx context.Context, token string) (httplimit.TokenClaims, error) {
	var none httplimit.TokenClaims
	if len(token) > maxTokenLen {
		return none, fmt.Errorf("%w: %d bytes, more than %d", ErrMalformed, len(token), maxTokenLen)
	}
	if strings.Count(token, ".") != 2 {
		return none, fmt.Errorf("%w: not three parts joined by dots", ErrMalformed)
	}
	if i := strings.IndexFunc(token, notCompact); i >= 0 {
		// Go's base64 decoders skip line breaks: refuse them, and anything
		// else outside base64url, before they do.
		return none, fmt.Errorf("%w: byte %d (%q) is not base64url", ErrMalformed, i, token[i])
	}
	tok, err := josejwt.ParseSigned(token, v.algs)
	if err != nil {
		return none, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	if len(tok.Headers) != 1 {
		return none, fmt.Errorf("%w: %d signatures", ErrMalformed, len(tok.Headers))
	}
	return v.verifySigned(ctx, tok, v.set.Load())
}

// verifySigned is VerifyToken of tok, parsed, from when seen was the set
// in use.
func (v *Verifier) verifySigned(ctx context.Context, tok *josejwt.JSONWebToken, seen *keySet) (httplimit.TokenClaims, error) {
	var none httplimit.TokenClaims
	h := tok.Headers[0]
	kid, alg := h.KeyID, jose.SignatureAlgorithm(h.Algorithm)
	keys, set, err := v.keysFor(ctx, seen, kid, alg)
	if err != nil {
		return none, err
	}
	t, claims, err := verifyWith(tok, keys)
	if errors.Is(err, jose.ErrCryptoFailure) && v.fetch != nil && v.newerSet(ctx, set) {
		// The issuer may have replaced a key under the kid the token names,
		// or among keys that name none: the set fetched since may have it.
		fetched, ferr := v.set.Load().candidates(kid, alg)
		if ferr != nil {
			return none, ferr
		}
		if len(fetched) > 0 {
			keys = fetched
			t, claims, err = verifyWith(tok, keys)
		}
	}
	switch {
	case errors.Is(err, jose.ErrCryptoFailure):
		return none, fmt.Errorf("%w: with any of %d keys", ErrSignature, len(keys))
	case err != nil:
		return none, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	return v.judge(t, claims)
}

// newerSet says whether a set other than set is in use: one put in use
// since the token looked, or else one fetched now, at the token's prompt,
// as for an unknown kid (at most once every Options.MinRefresh; a fetch
// that ends meanwhile counts too).
func (v *Verifier) newerSet(ctx context.Context, set *keySet) bool {
	if v.set.Load() != set {
		return true
	}
	v.fetch.prompted(ctx) // whatever it says, a set fetched meanwhile is in use
	return v.set.Load() != set
}

// notCompact says whether r may not appear in a JWS in compact form: only
// the base64url alphabet and the dots between the parts may.
func notCompact(r rune) bool {
	return !('A' <= r && r <= 'Z' || 'a' <= r && r <= 'z' || '0' <= r && r <= '9' || r == '-' || r == '_' || r == '.')
}

// verifyWith reads the claims of tok once one of keys verifies its
// signature; the error wraps jose.ErrCryptoFailure when none does.
func verifyWith(tok *josejwt.JSONWebToken, keys []key) (t times, claims map[string]any, err error) {
	err = jose.ErrCryptoFailure // until a key verifies it
	for _, k := range keys {
		// Only a signature that verifies has its payload read.
		if err = tok.Claims(k.pub, &t, &claims); !errors.Is(err, jose.ErrCryptoFailure) {
			break
		}
	}
	return t, claims, err
}

// judge returns what the verified claims say of the client, or why they
// are not accepted.
func (v *Verifier) judge(t times, claims map[string]any) (httplimit.TokenClaims, error) {
	for _, name := range []string{"exp", "nbf", "iat"} {
		if value, ok := claims[name]; ok && value == nil {
			// null reads as no claim: a token meant to expire would not.
			return httplimit.TokenClaims{}, fmt.Errorf("%w: %q is null, not a time", ErrMalformed, name)
		}
	}
	std := josejwt.Claims{
		Audience:  audience(claims["aud"]),
		Expiry:    t.Expiry,
		NotBefore: t.NotBefore,
		IssuedAt:  t.IssuedAt,
	}
	std.Issuer, _ = claims["iss"].(string)
	want := josejwt.Expected{Issuer: v.issuer, AnyAudience: v.audiences, Time: v.clock()}
	err := std.ValidateWithLeeway(want, v.leeway)
	if err == nil && t.Expiry != nil && !want.Time.Before(t.Expiry.Time().Add(v.leeway)) {
		// RFC 7519 section 4.1.4: the time must be before "exp" (here
		// with the leeway past it); go-jose accepts it at that instant.
		err = josejwt.ErrExpired
	}
	if err != nil {
		switch {
		case errors.Is(err, josejwt.ErrExpired), errors.Is(err, josejwt.ErrNotValidYet), errors.Is(err, josejwt.ErrIssuedInTheFuture):
			return httplimit.TokenClaims{}, fmt.Errorf("%w: %w", ErrExpired, err)
		default:
			return httplimit.TokenClaims{}, fmt.Errorf("%w: %w", ErrClaims, err)
		}
	}
	subject, _ := claimAt(claims, v.subject).(string)
	if subject == "" {
		return httplimit.TokenClaims{}, fmt.Errorf("%w: %q is missing, empty or not a string", ErrClaims, v.subject)
	}
	c := httplimit.TokenClaims{Subject: v.prefix + subject, Claims: keyable(claims)}
	if t.Expiry != nil {
		c.Expires = t.Expiry.Time().Add(v.leeway) // accepted until then (see Options.Leeway)
	}
	if v.plan != "" {
		switch p := claimAt(claims, v.plan).(type) {
		case string:
			c.Plan = p
			if v.fixedPlan != "" {
				c.Plans = []string{v.fixedPlan} // for a name that is no plan
			}
		case []any:
			c.Plans = planNames(p)
			if len(c.Plans) > 0 && v.fixedPlan != "" {
				c.Plans = append(c.Plans, v.fixedPlan)
			}
		}
	}
	if c.Plan == "" && len(c.Plans) == 0 {
		c.Plan = v.fixedPlan
	}
	return c, nil
}

// maxPlanNames bounds the names a plan claim's array gives: more than a
// token of maxTokenLen bytes can hold (a name takes at least 3 bytes of
// JSON), so that no group is left out of a token sluice verifies — the
// plan is the first of them that is a plan, wherever it stands in the
// list (Entra ID, Okta and Keycloak list every group of the user).
const maxPlanNames = maxTokenLen / 3

// planNames returns the strings of a plan claim's array (its groups or
// roles), in order: at most maxPlanNames of them, each non-empty and at
// most maxClaimValueLen bytes; other values are skipped.
func planNames(values []any) []string {
	var out []string
	for _, v := range values {
		if s, ok := v.(string); ok && s != "" && len(s) <= maxClaimValueLen {
			out = append(out, s)
			if len(out) == maxPlanNames {
				break
			}
		}
	}
	return out
}

// Bounds of the claims a token gives rules to key by: maxKeyClaims is more
// than a token of maxTokenLen bytes can hold (a claim takes at least 7
// bytes of JSON), so that a claim a rule keys by is never left out for
// the token's other claims; its names and values are bounded one by one.
const (
	maxKeyClaims     = maxTokenLen / 7
	maxClaimNameLen  = 64
	maxClaimValueLen = 256
)

// maxClaimDepth bounds how deep in nested objects claims are read.
const maxClaimDepth = 4

// keyable returns the claims rules may key by: those whose value is a
// string, a whole number or a boolean, as text, top-level ones by their
// name and those of nested objects by their path of names joined by dots
// ("org.id"), at most maxKeyClaims of names and values within their
// bounds, the first by name; nil when there are none.
func keyable(claims map[string]any) map[string]string {
	var out map[string]string
	var walk func(prefix string, m map[string]any, depth int)
	walk = func(prefix string, m map[string]any, depth int) {
		names := slices.Sorted(maps.Keys(m))
		// A level's own claims first, then its objects': a claim named
		// "a.b" outranks a's b.
		for _, objects := range []bool{false, true} {
			for _, name := range names {
				if len(out) == maxKeyClaims {
					return
				}
				full := prefix + name
				sub, isObject := m[name].(map[string]any)
				if isObject != objects || len(full) > maxClaimNameLen {
					continue
				}
				if isObject {
					if depth < maxClaimDepth {
						walk(full+".", sub, depth+1)
					}
					continue
				}
				s, ok := claimText(m[name])
				if !ok || s == "" || len(s) > maxClaimValueLen {
					continue
				}
				if _, taken := out[full]; taken {
					continue // taken by a claim named with dots above
				}
				if out == nil {
					out = map[string]string{}
				}
				out[full] = s
			}
		}
	}
	walk("", claims, 1)
	return out
}

// claimText returns a claim's value as rules key by it: a string as it
// is, a whole number in decimal, a boolean as true or false.
func claimText(value any) (string, bool) {
	switch v := value.(type) {
	case string:
		return v, true
	case bool:
		return strconv.FormatBool(v), true
	case float64:
		if v != math.Trunc(v) || math.Abs(v) > 1<<53 {
			return "", false
		}
		return strconv.FormatInt(int64(v), 10), true
	}
	return "", false
}

// claimAt returns the claim of name: the top-level claim of that name, or
// else, for a name with dots, the value at that path of nested objects
// ("realm_access.roles"); nil when there is none.
func claimAt(claims map[string]any, name string) any {
	m := claims
	for depth := 1; ; depth++ {
		if v, ok := m[name]; ok {
			return v
		}
		first, rest, nested := strings.Cut(name, ".")
		if !nested || depth == maxClaimDepth {
			return nil
		}
		sub, ok := m[first].(map[string]any)
		if !ok {
			return nil
		}
		m, name = sub, rest
	}
}

// audience returns the audiences an "aud" claim names: a string names one,
// an array of strings each; anything else names none.
func audience(aud any) josejwt.Audience {
	switch a := aud.(type) {
	case string:
		return josejwt.Audience{a}
	case []any:
		out := make(josejwt.Audience, 0, len(a))
		for _, e := range a {
			s, ok := e.(string)
			if !ok {
				return nil
			}
			out = append(out, s)
		}
		return out
	}
	return nil
}
