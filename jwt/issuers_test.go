package jwt_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/sluice-dev/sluice/jwt"
)

// Tokens of two issuers are each verified by their own issuer's Verifier:
// a token signed by one issuer's key but naming the other issuer verifies
// with neither, and a token of a third issuer is refused unread.
func TestIssuersVerifyEachTokenByItsIssuer(t *testing.T) {
	users := newVerifier(t, jwt.Options{Keys: set(jwk(ecKey(), "u1")), Issuer: "https://id.example/", PlanClaim: "plan", Clock: clockAt(now)})
	services := newVerifier(t, jwt.Options{Keys: set(jwk(edKey(), "s1")), Issuer: "https://cluster.local", PlanClaim: "plan", Plan: "internal", Clock: clockAt(now)})
	s, err := jwt.NewIssuers(users, services)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	got, err := s.VerifyToken(ctx, sign(t, jose.ES256, ecKey(), "u1", claims("iss", "https://id.example/")))
	if err != nil || got.Subject != "alice" || got.Plan != "pro" {
		t.Fatalf("a user's token: %+v, %v", got, err)
	}
	got, err = s.VerifyToken(ctx, sign(t, jose.EdDSA, edKey(), "s1", claims("iss", "https://cluster.local", "sub", "system:serviceaccount:jobs:export", "plan", nil)))
	if err != nil || got.Subject != "system:serviceaccount:jobs:export" || got.Plan != "internal" {
		t.Fatalf("a service's token: %+v, %v", got, err)
	}
	// The plan claim wins over the issuer's plan.
	if got, err = s.VerifyToken(ctx, sign(t, jose.EdDSA, edKey(), "s1", claims("iss", "https://cluster.local"))); err != nil || got.Plan != "pro" {
		t.Fatalf("a service's token naming a plan: %+v, %v", got, err)
	}
	// The users' key signing a token that names the cluster as issuer.
	if _, err := s.VerifyToken(ctx, sign(t, jose.ES256, ecKey(), "u1", claims("iss", "https://cluster.local"))); !errors.Is(err, jwt.ErrKey) && !errors.Is(err, jwt.ErrSignature) {
		t.Errorf("a user key's token naming the cluster: %v, want ErrKey or ErrSignature", err)
	}
	for name, c := range map[string]struct {
		token string
		want  error
	}{
		"another issuer":    {sign(t, jose.ES256, ecKey(), "u1", claims("iss", "https://evil.example/")), jwt.ErrClaims},
		"no issuer":         {sign(t, jose.ES256, ecKey(), "u1", claims()), jwt.ErrClaims},
		"issuer not a text": {sign(t, jose.ES256, ecKey(), "u1", claims("iss", 7)), jwt.ErrClaims},
		"not a JWS":         {"a.b", jwt.ErrMalformed},
		"payload not JSON":  {"eyJhbGciOiJFUzI1NiJ9.bm90IGpzb24.c2ln", jwt.ErrMalformed},
		"too long":          {"a." + strings.Repeat("b", 17<<10) + ".c", jwt.ErrMalformed},
	} {
		if _, err := s.VerifyToken(ctx, c.token); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", name, err, c.want)
		}
	}
}

func TestNewIssuersWantsADistinctIssuerOfEach(t *testing.T) {
	a := newVerifier(t, jwt.Options{Secret: secret, Issuer: "https://a.example/"})
	noIssuer := newVerifier(t, jwt.Options{Secret: secret})
	a2 := newVerifier(t, jwt.Options{Secret: secret, Issuer: "https://a.example/"})
	if _, err := jwt.NewIssuers(a, noIssuer); err == nil || !strings.Contains(err.Error(), "requires no issuer") {
		t.Errorf("a verifier without an issuer: %v", err)
	}
	if _, err := jwt.NewIssuers(a, a2); err == nil || !strings.Contains(err.Error(), "as another does") {
		t.Errorf("two verifiers of one issuer: %v", err)
	}
}

// The issuer a token is routed by is its "iss" claim exactly, the claim
// its Verifier then checks: not a claim whose name differs from it only
// in case, which encoding/json would match to a field of that name.
func TestIssuersRouteByTheIssClaimExactly(t *testing.T) {
	users := newVerifier(t, jwt.Options{Keys: set(jwk(ecKey(), "u1")), Issuer: "https://id.example/", Clock: clockAt(now)})
	services := newVerifier(t, jwt.Options{Keys: set(jwk(edKey(), "s1")), Issuer: "https://cluster.local", Clock: clockAt(now)})
	s, err := jwt.NewIssuers(users, services)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.EdDSA, Key: edKey()}, (&jose.SignerOptions{}).WithHeader("kid", "s1"))
	if err != nil {
		t.Fatal(err)
	}
	body := fmt.Sprintf(`{"sub":"export","exp":%d,"iss":"https://cluster.local","ISS":"https://id.example/"}`, now.Add(time.Hour).Unix())
	obj, err := signer.Sign([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	tok := must(obj.CompactSerialize())
	got, err := s.VerifyToken(context.Background(), tok)
	if err != nil || got.Subject != "export" {
		t.Fatalf("a service's token with an ISS claim too: %+v, %v; want it verified by the services' Verifier", got, err)
	}
}
