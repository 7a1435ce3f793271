package jwt

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/sluice-dev/sluice/httplimit"
)

// Issuers is an httplimit.TokenVerifier of the tokens of several issuers —
// the users of an identity provider and the services of a cluster, say —
// each verified by the Verifier of its issuer. Make it with NewIssuers; it
// is safe for concurrent use.
type Issuers struct {
	byIssuer map[string]*Verifier
}

var _ httplimit.TokenVerifier = (*Issuers)(nil)

// NewIssuers returns the Issuers of vs, each of which must require an
// issuer (Options.Issuer) that no other does. Their subject prefixes
// (Options.SubjectPrefix) are all one, or none begins another's: a client
// is its prefix and its subject as text, so beside "svc." an issuer of no
// prefix could sign "svc.alice", the other's "alice". It does not take
// ownership: the caller closes the Verifiers.
func NewIssuers(vs ...*Verifier) (*Issuers, error) {
	s := &Issuers{byIssuer: make(map[string]*Verifier, len(vs))}
	for i, v := range vs {
		switch {
		case v == nil:
			return nil, fmt.Errorf("jwt: verifier %d is nil", i)
		case v.issuer == "":
			return nil, fmt.Errorf("jwt: verifier %d requires no issuer (Options.Issuer): its tokens cannot be told from the others'", i)
		case s.byIssuer[v.issuer] != nil:
			return nil, fmt.Errorf("jwt: verifier %d requires issuer %q, as another does", i, v.issuer)
		}
		for j, o := range vs[:i] {
			if p, q := v.prefix, o.prefix; p != q && (strings.HasPrefix(p, q) || strings.HasPrefix(q, p)) {
				return nil, fmt.Errorf("jwt: verifiers %d and %d: subject prefixes %q and %q, one beginning the other, would make clients of one the other's", j, i, q, p)
			}
		}
		s.byIssuer[v.issuer] = v
	}
	return s, nil
}

// VerifyToken verifies token with the Verifier of the issuer its "iss"
// claim names, read before the signature is checked (the Verifier then
// checks it, signature and all), and returns what that Verifier returns. A
// token of no issuer of s is ErrClaims; one whose payload cannot be read,
// ErrMalformed.
func (s *Issuers) VerifyToken(ctx context.Context, token string) (httplimit.TokenClaims, error) {
	iss, err := issuerOf(token)
	if err != nil {
		return httplimit.TokenClaims{}, err
	}
	v := s.byIssuer[iss]
	if v == nil {
		return httplimit.TokenClaims{}, fmt.Errorf("%w: issuer %.64q is none of the %d accepted", ErrClaims, iss, len(s.byIssuer))
	}
	return v.VerifyToken(ctx, token)
}

// issuerOf returns the "iss" of the payload of token, unverified: a
// string, or "" when the claim is absent or not a string.
func issuerOf(token string) (string, error) {
	if len(token) > maxTokenLen {
		return "", fmt.Errorf("%w: %d bytes, more than %d", ErrMalformed, len(token), maxTokenLen)
	}
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return "", fmt.Errorf("%w: not three parts joined by dots", ErrMalformed)
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return "", fmt.Errorf("%w: payload: %w", ErrMalformed, err)
	}
	// A map, not a struct: encoding/json would fill a struct's field from
	// "ISS" too, and the Verifier checks "iss" exactly.
	var claims map[string]json.RawMessage
	if err := json.Unmarshal(payload, &claims); err != nil {
		return "", fmt.Errorf("%w: payload: %w", ErrMalformed, err)
	}
	var iss string
	if raw := claims["iss"]; len(raw) > 0 && json.Unmarshal(raw, &iss) != nil {
		return "", fmt.Errorf("%w: \"iss\" is not a string", ErrClaims)
	}
	return iss, nil
}
