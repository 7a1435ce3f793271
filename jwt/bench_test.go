package jwt_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"testing"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/sluice-dev/sluice/jwt"
)

// BenchmarkVerifyToken is the cost of one verification (what a request with
// a token the middleware has not seen lately pays) by algorithm.
func BenchmarkVerifyToken(b *testing.B) {
	for _, c := range []struct {
		name string
		alg  jose.SignatureAlgorithm
		key  any
	}{
		{"RS256", jose.RS256, rsaKey()},
		{"ES256", jose.ES256, ecKey()},
		{"EdDSA", jose.EdDSA, edKey()},
		{"HS256", jose.HS256, secret},
	} {
		b.Run(c.name, func(b *testing.B) {
			o := jwt.Options{Clock: clockAt(now), Algorithms: []string{string(c.alg)}}
			switch k := c.key.(type) {
			case *rsa.PrivateKey:
				o.Keys = set(jwk(&k.PublicKey, "k1"))
			case *ecdsa.PrivateKey:
				o.Keys = set(jwk(&k.PublicKey, "k1"))
			case ed25519.PrivateKey:
				o.Keys = set(jwk(k.Public(), "k1"))
			default:
				o.Secret = secret
			}
			v := newVerifier(b, o)
			token := sign(b, c.alg, c.key, "k1", claims())
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := v.VerifyToken(ctx, token); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
