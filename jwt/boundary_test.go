package jwt_test

import (
	"context"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/sluice-dev/sluice/jwt"
)

// RFC 7519 section 4.1.4: a token is accepted only while the time is
// before its "exp" (and the leeway past it); section 4.1.5: from its "nbf"
// on (less the leeway). "iat" is judged as "nbf" is.
func TestTheClaimsTimesAreJudgedAtExactlyTheirBoundary(t *testing.T) {
	const leeway = 10 * time.Second
	keys := set(jwk(edKey(), "ed"))
	for _, c := range []struct {
		name   string
		claims map[string]any
		ok     bool
	}{
		{"exp one second after the leeway is still to come", claims("exp", now.Add(-leeway+time.Second).Unix()), true},
		{"exp exactly the leeway ago has passed", claims("exp", now.Add(-leeway).Unix()), false},
		{"nbf exactly the leeway ahead has come", claims("nbf", now.Add(leeway).Unix()), true},
		{"nbf one second past the leeway ahead has not", claims("nbf", now.Add(leeway+time.Second).Unix()), false},
		{"iat exactly the leeway ahead is not in the future", claims("iat", now.Add(leeway).Unix()), true},
		{"iat one second past the leeway ahead is", claims("iat", now.Add(leeway+time.Second).Unix()), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			v := newVerifier(t, jwt.Options{Keys: keys, Leeway: leeway})
			_, err := v.VerifyToken(context.Background(), sign(t, jose.EdDSA, edKey(), "ed", c.claims))
			if c.ok && err != nil {
				t.Fatal(err)
			}
			if !c.ok {
				wantClass(t, err, jwt.ErrExpired)
			}
		})
	}
}
