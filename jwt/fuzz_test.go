package jwt_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/sluice-dev/sluice/jwt"
)

// FuzzVerifyToken holds VerifyToken to never panicking, to errors of
// exactly one class, and to accepting only tokens that name a subject.
func FuzzVerifyToken(f *testing.F) {
	keys := set(jwk(edKey(), "ed"), jwk(ecKey(), "ec"))
	for _, tok := range []string{
		sign(f, jose.EdDSA, edKey(), "ed", claims()),
		sign(f, jose.ES256, ecKey(), "", claims("aud", []string{"api"}, "exp", nil)),
		sign(f, jose.HS256, secret, "", claims()),
		sign(f, jose.EdDSA, edKey(), "ed", claims("sub", 1)),
		b64(`{"alg":"none"}`) + "." + payload(claims()) + ".",
		b64(`{"alg":"EdDSA","kid":"ed","crit":["exp"]}`) + "." + payload(claims()) + "." + b64("sig"),
		"", ".", "..", "a.b.c", "eyJ.eyJ.", strings.Repeat(".", 100),
	} {
		f.Add(tok)
	}
	verifiers := []*jwt.Verifier{
		newVerifier(f, jwt.Options{Keys: keys, Audiences: []string{"api"}}),
		newVerifier(f, jwt.Options{Keys: keys}),
		newVerifier(f, jwt.Options{Secret: secret, PlanClaim: "plan"}),
	}
	f.Fuzz(func(t *testing.T, tok string) {
		for _, v := range verifiers {
			got, err := v.VerifyToken(context.Background(), tok)
			if err != nil {
				n := 0
				for _, c := range classes {
					if errors.Is(err, c) {
						n++
					}
				}
				if n != 1 {
					t.Fatalf("error %q wraps %d classes", err, n)
				}
				continue
			}
			if got.Subject == "" {
				t.Fatalf("accepted %q without a subject", tok)
			}
		}
	})
}
